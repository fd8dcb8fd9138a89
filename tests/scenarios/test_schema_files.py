"""``file`` fields: read relative to the scenario's folder and carried in the scenario itself, so a run directory
holds what its scenario read."""
from __future__ import annotations

import pytest

from clusteremu.scenarios.schema import Field, SchemaErrors, Table, validate

SPEC = Table({"series": Field("file")})


def test_a_relative_path_is_read_from_the_base_folder_and_embedded(tmp_path):
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "rates.csv").write_text("t_s,factor\n0,1\n")
    out = validate({"series": "data/rates.csv"}, SPEC, base_dir=tmp_path)
    assert out == {"series": {"path": "data/rates.csv", "text": "t_s,factor\n0,1\n"}}


def test_an_embedded_value_is_kept_as_it_is_so_a_manifest_validates_anywhere(tmp_path):
    embedded = {"series": {"path": "gone.csv", "text": "t_s,factor\n"}}
    assert validate(embedded, SPEC, base_dir=tmp_path / "nowhere") == embedded


@pytest.mark.parametrize("value, reason", [
    ("missing.csv", "no such file"),
    (3, "expected a file path"),
    ("", "expected a file path"),
    ({"path": "x"}, "expected a file path"),
])
def test_a_file_that_cannot_be_read_is_named(tmp_path, value, reason):
    with pytest.raises(SchemaErrors) as err:
        validate({"series": value}, SPEC, base_dir=tmp_path)
    [(path, message)] = err.value.problems
    assert path == "series" and reason in message


def test_a_file_that_is_not_utf8_is_named(tmp_path):
    (tmp_path / "bad.csv").write_bytes(b"\xff\xfe")
    with pytest.raises(SchemaErrors, match="bad.csv is not UTF-8"):
        validate({"series": "bad.csv"}, SPEC, base_dir=tmp_path)


def test_key_paths_quote_keys_that_hold_dots():
    from clusteremu.base.errors import InputError
    from clusteremu.scenarios.paths import set_path, split_path

    assert split_path('workload.topologies.0."topology.priority"') == ["workload", "topologies", "0", "topology.priority"]
    raw = {"workload": {"topologies": [{"topology.priority": 1}]}}
    set_path(raw, 'workload.topologies.0."topology.priority"', 5)
    assert raw == {"workload": {"topologies": [{"topology.priority": 5}]}}
    for bad in ('a..b', 'a."b', '', 'a.'):
        with pytest.raises(InputError):
            split_path(bad)

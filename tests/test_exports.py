"""The public API: what ``clusteremu`` exports, pinned. A change here is a change for every user; make it on
purpose, with the docs."""
from __future__ import annotations

import subprocess
import sys

import clusteremu

PUBLIC = [
    "Event", "InputError", "Run", "RunFailure", "ScenarioBuilder", "Suite", "System", "Trace", "__version__",
    "assert_always", "assert_before", "assert_count", "assert_eventually", "assert_interval", "assert_never",
    "execute", "load_scenario", "open_run", "register", "system", "systems", "trace_of", "unregister",
]

TESTING = [
    "Interval", "ScenarioBuilder", "Trace", "assert_always", "assert_before", "assert_count", "assert_eventually",
    "assert_interval", "assert_never", "emulate_into", "entity_of", "prepare", "trace_of", "write_run",
]


def test_the_public_names_are_pinned():
    assert sorted(clusteremu.__all__) == sorted(PUBLIC)
    assert sorted(dir(clusteremu)) == sorted(PUBLIC)


def test_every_public_name_resolves_to_the_kernel_object():
    from clusteremu.emulator import systems, testing
    from clusteremu.emulator.trace import query, reader

    for name in PUBLIC:
        assert getattr(clusteremu, name) is not None, name
    assert clusteremu.Trace is query.Trace and clusteremu.open_run is reader.open_run
    assert clusteremu.System is systems.System and clusteremu.assert_never is testing.assert_never


def test_the_testing_module_exports_are_pinned():
    from clusteremu.emulator import testing

    assert sorted(testing.__all__) == sorted(TESTING)


def test_an_unknown_name_is_an_attribute_error():
    try:
        clusteremu.no_such_thing  # noqa: B018
    except AttributeError as err:
        assert "no_such_thing" in str(err)
    else:
        raise AssertionError("expected AttributeError")


def test_importing_clusteremu_imports_nothing_else_of_it():
    code = "import sys, clusteremu; print(sorted(m for m in sys.modules if m.startswith('clusteremu')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "['clusteremu']"


def test_installing_puts_no_generic_top_level_package_on_the_path(tmp_path):
    # run from an empty directory, so the repository's folders are not on sys.path
    code = ("import importlib.util as u; print([n for n in ('tools', 'agents', 'scenarios', 'strategies', "
            "'emulator', 'systems', 'base') if u.find_spec(n) is not None])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=tmp_path)
    assert out.stdout.strip() == "[]"

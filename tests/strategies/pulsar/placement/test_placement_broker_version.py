"""Semantic versions as BrokerVersionFilter compares them (jsemver Version.valueOf / compareTo / BUILD_AWARE_ORDER)."""
import pytest

from clusteremu.strategies.pulsar.placement.broker_version import BrokerVersion as V


def test_parse_and_print():
    v = V.parse("3.0.1-rc.1+build.7")
    assert (v.major, v.minor, v.patch, v.pre_release, v.build) == (3, 0, 1, ("rc", "1"), ("build", "7"))
    assert str(v) == "3.0.1-rc.1+build.7"


@pytest.mark.parametrize("text", ["3.0", "v3.0.0", "03.0.0", "3.0.0-01", "3.0.0-", "", "3.0.0+"])
def test_invalid_versions(text):
    with pytest.raises(ValueError):
        V.parse(text)


def test_precedence_of_semantic_versioning():
    order = ["1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta", "1.0.0-beta", "1.0.0-beta.2", "1.0.0-beta.11",
             "1.0.0-rc.1", "1.0.0", "1.1.0-SNAPSHOT", "1.1.0", "1.10.0"]
    versions = [V.parse(t) for t in order]
    assert all(versions[i] < versions[i + 1] for i in range(len(versions) - 1))


def test_equality_ignores_build_but_build_aware_order_does_not():
    a, b, plain = V.parse("2.0.0+a"), V.parse("2.0.0+b"), V.parse("2.0.0")
    assert a == b == plain
    assert plain.build_aware_key() < a.build_aware_key() < b.build_aware_key()

"""The broker's own bookkeeping: the set of owned bundles and its version."""
import pytest

from clusteremu.agents.pulsar.ownership import OwnedBundles, Ownership


def test_owned_bundles_version_changes_whenever_a_bundle_comes_or_goes():
    owned, other = OwnedBundles(lambda: None), OwnedBundles(lambda: None)
    seen = {owned.version, other.version}
    owned["a"] = Ownership()
    owned["b"] = Ownership()
    seen.add(owned.version)
    assert len(seen) == 3  # unique across brokers too
    owned["a"].disabled = True  # a change inside an ownership is not a change of the set
    assert owned.version in seen
    for change in (lambda: owned.pop("a"), lambda: owned.__delitem__("b")):
        change()
        assert owned.version not in seen
        seen.add(owned.version)
    assert dict(owned) == {}


def test_owned_bundles_refuse_bulk_changes():
    owned = OwnedBundles(lambda: None)
    for bulk in (owned.clear, lambda: owned.update({"a": Ownership()}), lambda: owned.setdefault("a", Ownership()),
                 owned.popitem):
        with pytest.raises(TypeError):
            bulk()

"""The leader's bundle history (updateBundleData) and the report-dict helpers the emulated leader uses."""
import pytest

from clusteremu.strategies import pulsar


def report(**bundle_rates):
    return {"lastStats": {b: {"msgRateIn": r, "msgThroughputIn": 10 * r} for b, r in bundle_rates.items()}}


def test_first_sample_replaces_the_defaults_then_a_running_mean():
    history = pulsar.BundleHistory()
    assert history.bundle_json("new")["shortTermData"]["msgRateIn"] == 50.0  # default stats, 0 samples
    history.update_all({"b1": report(x=100.0)})
    assert history.to_json()["x"]["shortTermData"]["msgRateIn"] == 100.0
    assert history.to_json()["x"]["longTermData"]["numSamples"] == 1
    history.update_all({"b1": report(x=200.0)})
    assert history.to_json()["x"]["shortTermData"]["msgRateIn"] == pytest.approx(150.0)


def test_short_term_becomes_an_ema_after_ten_samples():
    history = pulsar.BundleHistory()
    for _ in range(10):
        history.update_all({"b1": report(x=100.0)})
    history.update_all({"b1": report(x=200.0)})
    short = history.to_json()["x"]["shortTermData"]
    assert short["numSamples"] == 10 and short["msgRateIn"] == pytest.approx(110.0)
    assert history.to_json()["x"]["longTermData"]["msgRateIn"] == pytest.approx(100.0 + 100.0 / 11)


def test_bundles_nobody_reports_are_dropped_and_shared_bundles_get_two_samples():
    history = pulsar.BundleHistory()
    history.update_all({"b1": report(x=100.0, y=1.0), "b2": report(x=300.0)})
    assert history.to_json()["x"]["shortTermData"]["numSamples"] == 2
    history.update_all({"b1": report(x=100.0)})
    assert set(history.to_json()) == {"x"}
    assert pulsar.LoadData.from_json({"bundleData": history.to_json()}).bundle_data["x"].topics == 0


def test_weighted_max_4_of_a_report_dict():
    r = {"cpu": {"usage": 30, "limit": 100}, "memory": {"usage": 99, "limit": 100},
         "bandwidthIn": {"usage": 20, "limit": 100}}
    assert pulsar.weighted_max_4(r, {}) == 0.30000001907348633
    assert pulsar.weighted_max_4(r, {"loadBalancerCPUResourceWeight": 0.5}) == pytest.approx(0.2, rel=1e-6)
    assert pulsar.weighted_max_4(r, {"loadBalancerBandwithInResourceWeight": 2.0}) == pytest.approx(0.4, rel=1e-6)


def test_canonical_name():
    assert pulsar.canonical_name("AvgShedder") == pulsar.canonical_name(
        "org.apache.pulsar.broker.loadbalance.impl.AvgShedder")
    assert pulsar.canonical_name("LeastResourceUsageWithWeight") != pulsar.canonical_name(
        "org.apache.pulsar.broker.loadbalance.extensions.strategy.LeastResourceUsageWithWeight")
    with pytest.raises(KeyError):
        pulsar.canonical_name("Nope")


def _reference_fold(bundles, last_stats):
    """The plain object-by-object updateBundleData the array history must match to the bit."""
    from clusteremu.base.java import java_order
    from clusteremu.strategies.pulsar.load_data import BundleData

    active = set()
    for broker in java_order(last_stats, "concurrent"):
        for bundle, st in last_stats[broker].items():
            active.add(bundle)
            if bundle not in bundles:
                bundles[bundle] = BundleData.with_default_stats()
            bundles[bundle].update(st)
    for bundle in [b for b in bundles if b not in active]:
        del bundles[bundle]


def test_array_history_matches_the_object_fold_to_the_bit_through_moves_splits_and_shared_bundles():
    import numpy as np

    from clusteremu.strategies.pulsar.load_data import NamespaceBundleStats

    rng = np.random.default_rng(3)
    names = [f"ns/0x{i:08x}_0x{i + 1:08x}" for i in range(40)]
    owner = {b: f"broker-{rng.integers(4)}" for b in names[:30]}
    stats = {}
    history, reference = pulsar.BundleHistory(), {}
    for step in range(300):
        event = rng.random()
        if event < 0.1:  # a bundle moves (it may go unreported for a while, then come back with no history)
            b = names[int(rng.integers(len(names)))]
            owner[b] = f"broker-{rng.integers(5)}" if rng.random() < 0.8 else None
        if event > 0.95:  # a bundle reported by two brokers for one round (ownership handover)
            shared = names[int(rng.integers(30))]
        else:
            shared = None
        changed = f"broker-{rng.integers(5)}"
        for broker in {o for o in owner.values() if o} | {changed}:
            if broker == changed or broker not in stats:
                stats[broker] = {b: NamespaceBundleStats(*(float(x) for x in rng.random(4) * 10 ** rng.integers(0, 6)),
                                                         topics=int(rng.integers(50)))
                                 for b, o in owner.items() if o == broker}
        given = {b: s for b, s in stats.items() if s or rng.random() < 0.5}
        if shared is not None and given:
            other = sorted(given)[0]
            given[other] = {**given[other], shared: NamespaceBundleStats(1.0, 2.0, 3.0, 4.0, topics=7)}
        history.update_all_stats(given)
        _reference_fold(reference, given)
        got = history.bundles
        assert list(got) == list(reference), step
        for b, data in reference.items():
            assert got[b] == data, (step, b)


def test_array_history_matches_the_object_fold_past_both_sample_caps():
    # 1,100 rounds: the short-term (10) and long-term (1,000) counts both reach their caps on the aligned path,
    # and each bundle's sample changes now and then.
    import numpy as np

    from clusteremu.strategies.pulsar.load_data import NamespaceBundleStats

    rng = np.random.default_rng(5)
    owner = {f"ns/0x{i:08x}_0x{i + 1:08x}": f"broker-{i % 3}" for i in range(9)}
    stats: dict = {}
    history, reference = pulsar.BundleHistory(), {}
    for step in range(1100):
        for broker in sorted(set(owner.values())):
            if broker not in stats or rng.random() < 0.05:
                stats[broker] = {b: NamespaceBundleStats(*(float(x) for x in rng.random(4) * 1e4), topics=3)
                                 for b, o in owner.items() if o == broker}
        given = dict(stats)
        history.update_all_stats(given)
        _reference_fold(reference, given)
        if step in (5, 9, 10, 500, 999, 1000, 1099):
            got = history.bundles
            assert {b: d.long_term_data.num_samples for b, d in got.items()} == \
                {b: min(step + 1, 1000) for b in owner}
            assert got == reference, step


def test_snapshot_reads_as_the_history_did_and_ignores_later_folds():
    history = pulsar.BundleHistory()
    history.update_all({"b1": report(x=100.0, y=5.0), "b2": report(z=7.0)})
    snap = history.snapshot()
    before = history.bundles
    assert list(snap) == list(before) and len(snap) == 3 and "x" in snap and "nope" not in snap
    assert dict(snap) == before
    assert snap["x"] is snap["x"]  # made once, then the same object, as a dict would hold it
    history.update_all({"b1": report(x=900.0)})
    assert snap["y"] == before["y"] and snap["x"] == before["x"] and "y" not in history
    # entries set on the snapshot (placement's defaults) stay in it, after the history's bundles
    snap.setdefault("new", before["z"])
    del snap["z"]
    assert list(snap) == ["x", "y", "new"] and "new" not in history
    with pytest.raises(KeyError):
        snap["z"]


def test_load_shedding_view_of_a_snapshot_is_the_dict_view():
    history = pulsar.BundleHistory()
    history.update_all({"b1": report(**{"public/default/0x00000000_0x80000000": 3.0,
                                        "pulsar/system/0x00000000_0xffffffff": 1.0}),
                        "b2": report(**{"public/default/0x80000000_0xffffffff": 9.0})})
    lazy = pulsar.LoadData(bundle_data=history.snapshot()).get_bundle_data_for_load_shedding()
    plain = pulsar.LoadData(bundle_data=history.bundles).get_bundle_data_for_load_shedding()
    assert list(lazy) == list(plain) == [b for b in plain if not b.startswith("pulsar/system")]
    assert len(plain) == 2 and dict(lazy) == dict(plain)
    assert "pulsar/system/0x00000000_0xffffffff" not in lazy
    with pytest.raises(KeyError):
        lazy["pulsar/system/0x00000000_0xffffffff"]


@pytest.mark.parametrize("told", [False, True], ids=["any-broker", "changed-named"])
def test_brokers_joining_and_taking_bundles_fold_as_the_object_fold(told):
    # A cluster starting: brokers register with empty reports, then report the bundles they took (nobody had
    # them); later one takes a bundle over while its old owner still reports it (two samples), one gives a
    # bundle up for a bundle another broker has, and one leaves. ``told``: the caller names the changed broker.
    from clusteremu.strategies.pulsar.load_data import NamespaceBundleStats

    def stats(bundles):
        return {f"ns/{b}": NamespaceBundleStats(1.5 * ord(b), 2.0, 0.5 * ord(b), 3.25, topics=2) for b in bundles}

    steps = [("b3", ""), ("b3", "ab"), ("b1", ""), ("b7", ""), ("b1", "cd"), ("b1", "cdi"), ("b2", "ef"),
             ("b7", "h"), ("b9", "ga"), ("b3", "b"), ("b2", "fc"), ("b1", "di"), ("b7", None), ("b9", "gah")]
    joined: dict = {}
    history, reference = pulsar.BundleHistory(), {}
    for broker, bundles in steps:
        if bundles is None:
            del joined[broker]
        else:
            joined[broker] = stats(bundles)
        for round_ in range(3):
            history.update_all_stats(joined, changed=((broker,) if round_ == 0 else ()) if told else None)
            _reference_fold(reference, dict(joined))
            assert history.bundles == reference and list(history.bundles) == list(reference), (broker, bundles)
    assert history.bundles["ns/c"].long_term_data.num_samples == 3 * 6 + 3 * 2 + 3 * 3  # once, twice, once a round


def test_snapshot_shares_nothing_it_or_the_history_changes_afterwards():
    history = pulsar.BundleHistory()
    history.update_all({"b1": report(x=100.0, y=5.0)})
    first, second = history.snapshot(), history.snapshot()
    del first["x"]  # a snapshot's own change stays its own
    assert "x" in history and "x" in second and list(first) == ["y"]
    history.update_all({"b1": report(x=300.0, y=50.0)})  # the history's change leaves live snapshots as they were
    assert second["x"].short_term_data.msg_rate_in == 100.0 and second["y"].short_term_data.msg_rate_in == 5.0
    assert history.bundles["y"].short_term_data.msg_rate_in == pytest.approx(27.5)
    history.forget("y")
    assert "y" in second and "y" not in history


def test_forgetting_a_reported_bundle_starts_its_history_again_and_leaves_the_others():
    # The leader forgets a bundle it splits while its owner still reports it; another broker's new bundle may
    # take the freed slot.
    history, reference = pulsar.BundleHistory(), {}
    given = {"b1": report(x=100.0, y=5.0), "b2": report(z=7.0)}
    parsed = {b: {k: pulsar.load_data.NamespaceBundleStats.from_json(v, "") for k, v in r["lastStats"].items()}
              for b, r in given.items()}
    for step in range(4):
        if step == 2:
            history.forget("x")
            del reference["x"]
            parsed["b2"] = {**parsed["b2"], "w": pulsar.load_data.NamespaceBundleStats(1.0, 2.0, 3.0, 4.0)}
        history.update_all_stats(parsed)
        _reference_fold(reference, parsed)
        assert history.bundles == reference, step
    assert history.bundles["x"].long_term_data.num_samples == 2


def test_capped_folds_block_by_block_and_a_slot_taken_again_match_the_object_fold(monkeypatch):
    # Once every count is capped the history folds a block of slots at a time (blocks of 4 here, so that 11
    # bundles span three); a bundle that leaves frees its slot, a new one takes it with 0 samples, and the
    # blocks go on matching the object fold to the bit.
    import numpy as np

    from clusteremu.strategies.pulsar import bundle_history
    from clusteremu.strategies.pulsar.load_data import NamespaceBundleStats

    monkeypatch.setattr(bundle_history, "_BLOCK", 4)
    rng = np.random.default_rng(8)
    owner = {f"ns/0x{i:08x}_0x{i + 1:08x}": f"broker-{i % 3}" for i in range(11)}
    stats: dict = {}
    history, reference = pulsar.BundleHistory(), {}

    def fold(step):
        for broker in sorted(set(owner.values())):
            if broker not in stats or rng.random() < 0.05 or step == 1002:
                stats[broker] = {b: NamespaceBundleStats(*(float(x) for x in rng.random(4) * 1e4), topics=3)
                                 for b, o in owner.items() if o == broker}
        history.update_all_stats(dict(stats))
        _reference_fold(reference, dict(stats))

    for step in range(1030):
        if step == 1002:  # one bundle leaves, another arrives in its place
            del owner["ns/0x00000004_0x00000005"]
            owner["ns/0xffff0000_0xffff0001"] = "broker-1"
        fold(step)
        if step in (999, 1000, 1001, 1002, 1003, 1029):
            assert history.bundles == reference, step
    assert history.bundles["ns/0xffff0000_0xffff0001"].long_term_data.num_samples == 28

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
    """The plain object-by-object updateBundleData the array history must match to the bit; returns each
    broker's timeAverageData, reset over its lastStats keys (ConcurrentHashMap order) right after its folds."""
    from clusteremu.base.java import java_order
    from clusteremu.strategies.pulsar.load_data import BundleData, TimeAverageBrokerData

    active, averages = set(), {}
    for broker in java_order(last_stats, "concurrent"):
        for bundle, st in last_stats[broker].items():
            active.add(bundle)
            if bundle not in bundles:
                bundles[bundle] = BundleData.with_default_stats()
            bundles[bundle].update(st)
        averages[broker] = TimeAverageBrokerData()
        averages[broker].reset(java_order(last_stats[broker], "concurrent"), bundles)
    for bundle in [b for b in bundles if b not in active]:
        del bundles[bundle]
    return averages


def _bits(averages):
    """{broker: the 8 sums as hex}: equal only if equal to the bit."""
    import dataclasses

    return {b: [x.hex() for x in dataclasses.astuple(a)] for b, a in averages.items()}


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
        averages = _reference_fold(reference, given)
        got = history.bundles
        assert list(got) == list(reference), step
        for b, data in reference.items():
            assert got[b] == data, (step, b)
        if step % 7 == 0:  # asked now and then: the sums are made on demand, for the last fold
            assert _bits(history.time_average_data()) == _bits(averages), step


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
            averages = _reference_fold(reference, dict(joined))
            assert _bits(history.time_average_data()) == _bits(averages), (broker, bundles)
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


def test_settled_bundles_are_skipped_until_their_sample_changes_or_a_second_sample_comes(monkeypatch):
    # With a bundle's sample unchanged, its capped averages reach values that a fold leaves as they are, bit for
    # bit: the history then skips them. A changed sample, a second sample in one round (a handover) and a bundle
    # taken again must bring them back, and every step must still match the object fold to the bit.
    import numpy as np

    from clusteremu.strategies.pulsar import bundle_history
    from clusteremu.strategies.pulsar.load_data import NamespaceBundleStats

    monkeypatch.setattr(bundle_history, "_BLOCK", 4)
    rng = np.random.default_rng(11)
    owner = {f"ns/0x{i:08x}_0x{i + 1:08x}": f"broker-{i % 3}" for i in range(12)}
    sample = {b: NamespaceBundleStats(*(float(x) for x in rng.random(4) * 1e4), topics=3) for b in owner}
    history, reference = pulsar.BundleHistory(), {}
    folded = []
    fold_values = bundle_history._fold_values

    def counting(val, *args, **kwargs):
        folded.append(val.shape[1])
        return fold_values(val, *args, **kwargs)

    monkeypatch.setattr(bundle_history, "_fold_values", counting)
    moved = "ns/0x00000005_0x00000006"
    for step in range(1160):
        if step == 1100:  # one bundle's rates change
            sample["ns/0x00000001_0x00000002"] = NamespaceBundleStats(1.0, 2.0, 3.0, 4.0, topics=3)
        given = {br: {b: sample[b] for b, o in owner.items() if o == br} for br in sorted(set(owner.values()))}
        if step == 1120:  # a handover: the new owner reports the bundle while the old one still does
            given["broker-0"] = {**given["broker-0"], moved: NamespaceBundleStats(9.0, 9.0, 9.0, 9.0, topics=1)}
        if step == 1140:  # the bundle leaves every report for a round, then comes back with no history
            del given["broker-2"][moved]
        folded.clear()
        history.update_all_stats(given)
        _reference_fold(reference, given)
        if step == 1099:
            assert folded == [], "settled bundles are folded again"
        if step in (1099, 1100, 1101, 1120, 1121, 1122, 1140, 1141, 1159):
            assert history.bundles == reference, step
    assert history.bundles[moved].long_term_data.num_samples == 19


def test_slots_still_folded_are_moved_together_and_nothing_else_changes(monkeypatch):
    # A third of the bundles change rates after their averages settled (a namespace whose task starts late): their
    # long-term averages keep moving, spread over every block, so the history moves their slots together. Values,
    # sample counts, topics and the order bundles were first seen must stay the object fold's, through a handover
    # and a bundle that leaves and comes back after the move; brokers whose report did not change are given the
    # same mapping again, as the leader gives them.
    import numpy as np

    from clusteremu.strategies.pulsar import bundle_history
    from clusteremu.strategies.pulsar.load_data import NamespaceBundleStats

    monkeypatch.setattr(bundle_history, "_BLOCK", 4)
    monkeypatch.setattr(bundle_history, "_COMPACT_EVERY", 8)
    rng = np.random.default_rng(12)
    names = [f"ns/0x{i:08x}_0x{i + 1:08x}" for i in range(40)]
    owner = {b: f"broker-{i % 4}" for i, b in enumerate(names)}
    sample = {b: NamespaceBundleStats(*(float(x) for x in rng.random(4) * 1e4), topics=i) for i, b in enumerate(names)}

    def report(broker):
        return {b: sample[b] for b, o in owner.items() if o == broker}

    given = {br: report(br) for br in sorted(set(owner.values()))}
    history, reference = pulsar.BundleHistory(), {}
    slots_before = None
    for step in range(1130):
        if step == 1070:  # some bundles change rates: their long-term averages move from now on; one bundle leaves
            for b in names[::7]:
                sample[b] = NamespaceBundleStats(*(float(x) for x in rng.random(4) * 1e4), topics=100 + len(b))
            given = {br: report(br) for br in given}
            given["broker-2"] = {b: st for b, st in given["broker-2"].items() if b != names[38]}
            slots_before = {b: s for b, s in history._slot.items() if b != names[38]}
        if step == 1100:  # ... and comes back (into a slot freed before the slots were moved)
            given["broker-2"] = report("broker-2")
        if step == 1105:  # after the move, another bundle leaves for a round
            given["broker-1"] = {b: st for b, st in given["broker-1"].items() if b != names[37]}
        if step == 1106:
            given["broker-1"] = report("broker-1")
        if step == 1110:  # a handover: broker-0 also reports a bundle of broker-1 for one round
            given["broker-0"] = {**given["broker-0"], names[5]: NamespaceBundleStats(7.0, 7.0, 7.0, 7.0, topics=1)}
        if step == 1111:
            given["broker-0"] = report("broker-0")
        history.update_all_stats(given)
        _reference_fold(reference, given)
        if step in (1069, 1070, 1080, 1090, 1099, 1100, 1101, 1105, 1106, 1110, 1111, 1129):
            assert list(history.bundles) == list(reference) and history.bundles == reference, step
        if step == 1099:
            assert {b: s for b, s in history._slot.items() if b in slots_before} != slots_before, "no slot moved"


def test_brokers_time_averages_are_resets_over_their_reports_in_java_order_to_the_bit():
    # Random histories over 60 brokers with up to 40 bundles each, the reports' keys in random orders (the sums
    # run in each lastStats' ConcurrentHashMap order, so the order given changes the rounding), bundles moving,
    # some reported twice (the first reporter sums before the second one's fold), and a bundle forgotten after a
    # fold (the sums stay as that fold left them, as Pulsar's brokerData does).
    import numpy as np

    from clusteremu.strategies.pulsar.load_data import NamespaceBundleStats

    rng = np.random.default_rng(11)
    names = [f"ns-{i % 7}/0x{i:08x}_0x{i + 1:08x}" for i in range(900)]
    brokers = [f"10.0.{i}.1:8080" for i in range(60)]
    owner = {b: brokers[int(rng.integers(len(brokers)))] for b in names if rng.random() < 0.9}

    def sample():
        return NamespaceBundleStats(*(float(x) for x in rng.random(4) * 10.0 ** rng.integers(-3, 7)),
                                    topics=int(rng.integers(1, 9)))

    stats = {}
    history, reference = pulsar.BundleHistory(), {}
    for step in range(40):
        for b in rng.choice(list(owner), size=20, replace=False).tolist():
            owner[b] = brokers[int(rng.integers(len(brokers)))]
        for broker in brokers:
            if broker not in stats or rng.random() < 0.3:
                mine = [b for b, o in owner.items() if o == broker]
                stats[broker] = {b: sample() for b in rng.permutation(mine).tolist()}
        given = {b: stats[b] for b in rng.permutation(brokers).tolist()}
        if step % 4 == 3:  # hand-overs: a few bundles in two reports
            for b in rng.choice(list(owner), size=5, replace=False).tolist():
                other = brokers[int(rng.integers(len(brokers)))]
                if other != owner[b]:
                    given[other] = {**given[other], b: sample()}
        history.update_all_stats(given)
        averages = _reference_fold(reference, given)
        if step % 10 == 9:  # before the sums are asked for
            gone = next(iter(given[brokers[0]]), names[0])  # a split: its history starts again at the next fold
            history.forget(gone)
            reference.pop(gone, None)
        assert _bits(history.time_average_data()) == _bits(averages), step
    assert any(a.long_term_msg_rate_in != 0.0 for a in history.time_average_data().values())


def test_a_bundle_taking_a_forgotten_bundles_slot_is_summed_in_its_own_java_order():
    # A broker reports 1e16 msg/s in one bundle and 1 msg/s in two others: the sum is 1e16 + 2 if the big one
    # comes last in the ConcurrentHashMap order and 1e16 if it comes first (each 1 is lost). The big bundle is
    # split (forgotten) and its child, reported in its place, comes in the other position.
    from clusteremu.base.java import java_order
    from clusteremu.strategies.pulsar.load_data import NamespaceBundleStats

    small = ["t/ns/0x10000000_0x20000000", "t/ns/0x20000000_0x30000000"]

    def position(bundle):
        return java_order([bundle, *small], "concurrent").index(bundle)

    children = (f"t/ns/0x{i:08x}_0x{i + 1:08x}" for i in range(0x30000000, 0x30001000))
    first = next(b for b in children if position(b) == 0)
    last = next(b for b in children if position(b) == 2)

    def reported(big):
        return {"b1": {big: NamespaceBundleStats(msg_rate_in=1e16),
                       **{b: NamespaceBundleStats(msg_rate_in=1.0) for b in small}}}

    history = pulsar.BundleHistory()
    history.update_all_stats(reported(first))
    assert history.time_average_data()["b1"].long_term_msg_rate_in == 1e16
    history.forget(first)
    history.update_all_stats(reported(last))
    assert history.time_average_data()["b1"].long_term_msg_rate_in == 1e16 + 2

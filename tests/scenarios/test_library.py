"""The article scenarios of the library (scenarios/library), each in a short form, asserting the behaviour it
documents in its ``expect`` key. Full-length runs belong to the ``article-avgshedder`` sweep suite."""
from __future__ import annotations

from clusteremu.emulator.testing import assert_count, assert_never
from clusteremu.scenarios.loader import load_scenario
from clusteremu.tools.sweep import suites

MINUTE = 60.0


def latest(run, kind, field, until=None):
    """Each agent's latest ``field`` of ``kind`` (up to ``until``)."""
    out = {}
    for e in run.events():
        if e.kind == kind and (until is None or e.t <= until):
            out[e.agent] = getattr(e, field)
    return out


def above_average(e) -> bool:
    """A placement on a broker whose score is above the mean of the scores the leader saw."""
    scores = list(e.scores.values())
    return e.scores[e.broker] > sum(scores) / len(scores)


def test_every_library_scenario_documents_its_source_and_expectation():
    for name in (suites()["article-avgshedder"].scenarios + suites()["pulsar-pathologies"].scenarios
                 + suites()["pulsar-mechanisms"].scenarios):
        raw = load_scenario(name).data["scenario"]
        assert raw["description"] and raw["source"].startswith("shared/seeds/") and raw["expect"], name


def test_threshold_scheme_places_shed_bundles_at_random_and_on_loaded_brokers(emulate):
    run = emulate("threshold-homogeneous", until=25 * MINUTE)
    # The historical scores start together from idle, so no broker is 10 points under the average: random.
    assert_count(run, "bundle_placed", at_least=3, within=(5 * MINUTE, None), where=lambda e: e.random_fallback)
    unloads = assert_count(run, "bundle_unloaded", at_least=4, where=lambda e: e.reason == "shedding")
    assert len({round(e.t / MINUTE) for e in unloads}) >= 3  # several shedding cycles, not one round
    shed = {e.bundle for e in unloads}
    assert_count(run, "bundle_placed", at_least=1,
                 where=lambda e: e.bundle in shed and e.random_fallback and above_average(e))


def test_threshold_scheme_scale_in_sheds_in_several_rounds(emulate):
    run = emulate("threshold-scale-in", until=40 * MINUTE)
    assert_count(run, "agent_stopped", exactly=2)
    after = assert_count(run, "bundle_unloaded", at_least=2, within=(15 * MINUTE, None),
                         where=lambda e: e.reason == "shedding")
    assert {e.agent for e in after} <= {"broker-1", "broker-2", "broker-3"}


def test_uniform_scheme_evens_rates_but_leaves_the_strong_broker_idle(emulate):
    run = emulate("uniform-heterogeneous", until=12 * MINUTE)
    assert_count(run, "bundle_unloaded", at_least=1, within=(0, 5 * MINUTE), where=lambda e: e.reason == "shedding")
    cpu = latest(run, "load_report", "cpu")
    rate = {b: r + o for (b, r), o in zip(latest(run, "load_report", "msg_rate_in").items(),
                                          latest(run, "load_report", "msg_rate_out").values())}
    others = [c for b, c in cpu.items() if b != "broker-4"]
    assert cpu["broker-4"] < min(others) / 2
    # The strong broker carries no more traffic than the mean of the others.
    assert rate["broker-4"] <= sum(v for b, v in rate.items() if b != "broker-4") / 3 * 1.2


def test_uniform_scheme_keeps_unloading_under_jitter_and_avgshedder_does_not(emulate):
    uniform = emulate("uniform-jitter", until=30 * MINUTE)
    assert_count(uniform, "bundle_unloaded", at_least=1, within=(15 * MINUTE, None), where=lambda e: e.reason == "shedding")
    avg = emulate("avgshedder-jitter", until=30 * MINUTE)
    assert_never(avg, "bundle_unloaded", within=(15 * MINUTE, None), where=lambda e: e.reason == "shedding")


def test_avgshedder_moves_traffic_onto_the_strong_broker(emulate):
    run = emulate("avgshedder-heterogeneous", until=20 * MINUTE)
    rate_in = latest(run, "load_report", "msg_rate_in")
    cpu = latest(run, "load_report", "cpu")
    assert max(rate_in, key=rate_in.get) == "broker-4"
    assert min(cpu, key=cpu.get) == "broker-4"


def test_avgshedder_ignores_a_cpu_spike_unrelated_to_traffic(emulate):
    run = emulate("avgshedder-cpu-spike", until=30 * MINUTE)
    (spike,) = assert_count(run, "cpu_spike", exactly=1, entity="broker-2")
    assert_count(run, "load_report", at_least=1, entity="broker-2", within=(spike.t, spike.t + 3 * MINUTE),
                 where=lambda e: e.cpu > 80)
    assert_never(run, "unload_decided", within=(spike.t, None))


def test_avgshedder_scale_in_spreads_the_bundles_by_hash(emulate):
    run = emulate("avgshedder-scale-in", until=25 * MINUTE)
    left = 20 * MINUTE
    # A graceful scale-in: broker-5 unloads its bundles itself, then AvgShedder's hash places them.
    gone = {e.bundle for e in assert_count(run, "bundle_unloaded", at_least=4, entity="broker-5",
                                           within=(left, None), where=lambda e: e.reason == "shutdown")}
    owners = [e.agent for e in run.events() if e.kind == "bundle_owned" and e.t >= left and e.bundle in gone]
    assert len(owners) == len(gone) and len(set(owners)) >= 3
    assert_never(run, "bundle_placed", within=(left, None), where=lambda e: e.random_fallback)


def test_avgshedder_scale_out_unloads_to_the_new_broker_after_two_checks(emulate):
    run = emulate("avgshedder-scale-out", until=25 * MINUTE)
    joined = 20 * MINUTE
    assert_never(run, "bundle_owned", entity="broker-5", within=(0, joined))
    # Over 40 points apart (loadBalancerAvgShedderHighThreshold): 2 checks, not 8.
    moved = assert_count(run, "unload_decided", at_least=1, within=(joined, joined + 3 * MINUTE),
                         where=lambda e: e.destination == "broker-5")
    assert len({e.source for e in moved}) == 1


def test_hash_corner_case_the_random_hash_spreads_the_removed_brokers_bundles(emulate):
    run = emulate("avgshedder-hash-corner-case", until=25 * MINUTE)
    removed_at = 20 * MINUTE
    gone = {e.bundle for e in assert_count(run, "bundle_unloaded", at_least=4, entity="broker-3",
                                           within=(removed_at, None), where=lambda e: e.reason == "shutdown")}
    owners = [e.agent for e in run.events() if e.kind == "bundle_owned" and e.t >= removed_at and e.bundle in gone]
    assert len(owners) == len(gone)
    assert len(set(owners)) >= 3 and owners.count("broker-5") < len(gone) / 2


def test_fixed_delay_sampling_keeps_cpu_finite_through_the_gc_pause(emulate):
    import math

    run = emulate("gc-fixed-delay-finite-cpu", until=10 * MINUTE)
    assert_count(run, "stw_pause", at_least=1, entity="broker-2")
    assert_never(run, "load_report", where=lambda e: not math.isfinite(e.cpu))
    assert_never(run, "bundle_unloaded", where=lambda e: e.agent == "broker-2" and e.reason == "shedding")


def test_a_broker_crash_sets_off_a_lookup_storm_until_its_session_expires(emulate):
    run = emulate("lookup-storm-broker-crash", until=15 * MINUTE)
    crash = 10 * MINUTE
    lost = assert_count(run, "topic_disconnected", at_least=50, within=(crash, None),
                        where=lambda e: e.broker == "broker-2")
    (expired,) = assert_count(run, "store_session_expired", exactly=1, where=lambda e: e.owner == "broker-2")
    assert 20.0 <= expired.t - crash <= 35.0
    # Every lost topic looks itself up more than once; a first wave hits the dead owner before the expiry.
    lookups = assert_count(run, "lookup_hop", at_least=2 * len(lost), within=(crash, crash + 2 * MINUTE))
    assert sum(1 for e in lookups if e.t < expired.t) >= len(lost) / 2
    back = assert_count(run, "topic_connected", exactly=len(lost), within=(crash, None),
                        where=lambda e: e.broker != "broker-2")
    assert all(e.unavailable_s >= expired.t - crash for e in back)


def test_modular_rolling_restart_restarts_each_broker_once_and_topics_come_back_within_a_second(emulate):
    run = emulate("rolling-restart-modular", until=15 * MINUTE)
    stopped = assert_count(run, "broker_stopped", exactly=5)
    assert [e.agent for e in stopped] == [f"broker-{i}" for i in range(1, 6)]
    assert_count(run, "broker_booted", at_least=5, within=(5 * MINUTE, None))
    lost = assert_count(run, "topic_disconnected", at_least=100, where=lambda e: e.reason == "unload")
    # The modular load manager names no new owner: every topic waits its backoff and looks itself up again.
    back = assert_count(run, "topic_connected", exactly=len(lost), within=(5 * MINUTE, None),
                        where=lambda e: e.unavailable_s > 0)
    assert all(0.1 <= e.unavailable_s < 1.0 for e in back)


def reconnects_after(run, t0):
    """unavailable_s of every topic that came back after ``t0`` (first connections excluded)."""
    return [e.unavailable_s for e in run.events() if e.kind == "topic_connected" and e.t > t0 and e.unavailable_s > 0]


def test_extensible_rolling_restart_transfers_every_bundle_and_reconnects_without_a_lookup(emulate):
    run = emulate("rolling-restart-extensible", until=15 * MINUTE)
    stopped = assert_count(run, "broker_stopped", exactly=5)
    assert [e.agent for e in stopped] == [f"broker-{i}" for i in range(1, 6)]
    # Every bundle of a stopping broker leaves as a transfer to a named, live destination.
    moved = assert_count(run, "bundle_unloaded", at_least=50, where=lambda e: e.reason == "shutdown")
    assert all(e.destination and e.destination != e.agent for e in moved)
    assert_never(run, "service_unit_state", where=lambda e: e.state == "Free" and e.reason == "shutdown")
    # Clients are told the new owner: no lookup after the initial ones, and no back-off.
    assert_never(run, "lookup_hop", within=(5 * MINUTE, None))
    back = reconnects_after(run, 5 * MINUTE)
    assert len(back) >= 100 and max(back) < 0.1

    modular = emulate("rolling-restart-modular", until=15 * MINUTE)
    slow = reconnects_after(modular, 5 * MINUTE)
    # the modular load manager makes each topic wait its 100 ms back-off and a lookup
    assert sorted(back)[len(back) // 2] * 10 < sorted(slow)[len(slow) // 2]


def shedding_unloads(run):
    return [e for e in run.events() if e.kind == "unload_decided"]


def test_slides_overload_shedder_unloads_only_the_broker_over_85_percent(emulate):
    run = emulate("slides-overload-shedder", until=5 * MINUTE)
    reports = latest(run, "load_report", "cpu", until=119.0)
    assert reports["broker-1"] > 85.0 > max(reports["broker-2"], reports["broker-3"])
    unloads = shedding_unloads(run)
    assert unloads and {e.source for e in unloads} == {"broker-1"}
    assert unloads[0].t < 2 * MINUTE + 1 and unloads[0].bundle.startswith("slides/hot-")
    assert_count(run, "bundle_owned", at_least=1, entity="broker-3", within=(unloads[0].t, None))


def test_slides_threshold_shedder_unloads_only_the_broker_over_average_plus_ten(emulate):
    run = emulate("slides-threshold-shedder", until=8 * MINUTE)
    unloads = shedding_unloads(run)
    assert len(unloads) >= 2 and {e.source for e in unloads} == {"broker-1"}
    # the usage history starts at zero: broker-1 crosses average + 10 only after a few one-minute cycles
    assert unloads[0].t > 2 * MINUTE


def test_slides_uniform_load_shedder_moves_msg_rate_from_the_busiest_to_the_idlest(emulate):
    run = emulate("slides-uniform-load-shedder", until=5 * MINUTE)
    rates = {}
    for e in run.events():
        if e.kind == "load_report" and e.t < 59.0:
            rates[e.agent] = e.msg_rate_in + e.msg_rate_out
    assert 100 * (rates["broker-1"] - rates["broker-3"]) / rates["broker-3"] > 50 * 100  # the slide's 9777 %
    unloads = shedding_unloads(run)
    assert unloads and {e.source for e in unloads} == {"broker-1"}
    # a bundle moves only if its rate fits in 20 % of the gap: exactly one of broker-1's six does
    assert len(unloads) == 1
    assert_count(run, "bundle_owned", exactly=1, entity="broker-3", within=(unloads[0].t, None))

"""The clusteremu pytest plugin: its fixtures and marker, timing behaviours of the heartbeat model checked with
them, and its discovery through the ``pytest11`` entry point in a project that knows nothing else about it."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

# The kernel modules are imported here, before any in-process pytester run, so that pytester's restoring of
# sys.modules after such a run never drops (and later re-imports) the modules the outer session's objects come from.
from clusteremu.base.errors import InputError
from clusteremu.emulator.pytest_plugin import marker_seeds
from clusteremu.emulator.testing import (
    assert_always,
    assert_count,
    assert_eventually,
    assert_interval,
    assert_never,
    trace_of,
)
from clusteremu.emulator.trace import open_run
from clusteremu.emulator.trace.reader import Run
from clusteremu.scenarios.loader import load_scenario

pytest_plugins = ("pytester",)

#: The built-in's session timeout, check interval and heartbeat interval (s).
TIMEOUT, CHECK, BEAT = 10.0, 1.0, 2.0
#: The built-in's scripted pause of member-2.
PAUSE_AT, PAUSE_S = 120.0, 15.0
#: Network latency is at most 3 ms in the built-in.
LATENCY = 0.003


# -- timing behaviours of the heartbeat model -----------------------------------------------------------------
@pytest.mark.clusteremu_seeds(1, 2, 3)
def test_fixed_rate_timers_fire_missed_heartbeats_back_to_back_after_a_pause(emulate, clusteremu_seed):
    run = emulate("kernel-heartbeat", until=150)
    assert run.manifest["seed"] == clusteremu_seed
    end = PAUSE_AT + PAUSE_S
    # The runs missed during the 15 s pause all fire when it ends: gaps of (almost) nothing at the monitor.
    burst = assert_count(run, "heartbeat_received", entity="member-2", within=(end, end + 0.01),
                         where=lambda e: e.gap_s < 0.01, at_least=int(PAUSE_S / BEAT) - 2)
    # Every missed run fired, none was skipped: the heartbeats right after the pause are numbered consecutively.
    ns = sorted(e.n for e in trace_of(run).select("heartbeat_received", entity="member-2", within=(end, end + 0.01)))
    assert ns == list(range(ns[0], ns[0] + len(ns))) and len(ns) > len(burst)
    with pytest.raises(AssertionError, match=r"heartbeat_received \(entity=member-2\) >= 1\.9 s; \d+ of \d+ are not"):
        assert_interval(run, "heartbeat_received", entity="member-2", at_least=1.9)


@pytest.mark.clusteremu_seeds(1, 2, 3)
def test_fixed_delay_timers_never_bunch_heartbeats_after_a_pause(emulate):
    run = emulate("kernel-heartbeat", until=150, **{"workload.timer_mode": "fixed_delay"})
    # Each run starts a full interval after the previous one ended: never closer than the interval, give or
    # take the network's jitter.
    assert_interval(run, "heartbeat_received", at_least=BEAT - 2 * LATENCY)
    (after,) = assert_eventually(run, "heartbeat_received", after="fault_end", within=LATENCY,
                                 where=lambda e: e.member == "member-2")
    assert after.gap_s > PAUSE_S


def test_fixed_delay_with_frequent_full_gc_pauses_keeps_its_spacing_and_fixed_rate_does_not(emulate):
    gc = {"cluster.gc.full_every_s": 30.0, "cluster.gc.full_pause_s": 3.0, "cluster.gc.sigma": 0.1}
    delayed = emulate("kernel-heartbeat", until=200, **gc, workload__timer_mode="fixed_delay")
    assert_count(delayed, "stw_pause", where=lambda e: e.cause == "gc-full", at_least=10)
    assert_never(delayed, "heartbeat_received", where=lambda e: e.gap_s < 1.0, within=(BEAT, None))
    rated = emulate("kernel-heartbeat", until=200, **gc, workload__timer_mode="fixed_rate")
    assert_count(rated, "heartbeat_received", where=lambda e: e.gap_s < 0.05, at_least=5)


def test_a_pause_longer_than_the_session_timeout_expires_the_session_which_comes_back(emulate):
    run = emulate("kernel-heartbeat", until=150)
    (expired,) = assert_count(run, "session_expired", exactly=1)
    assert expired.member == "member-2"
    # Expiry within the timeout plus one check (the last heartbeat came up to one interval before the pause).
    assert_eventually(run, "session_expired", after="fault_begin", within=TIMEOUT + CHECK)
    # Restored by the first heartbeat once the pause ends.
    assert_eventually(run, "session_restored", after="fault_end", within=2 * LATENCY)
    assert_eventually(run, "session_restored", after="session_expired", same_entity=True)
    assert_always(run, "session_expired", lambda e: TIMEOUT < e.silent_s <= TIMEOUT + BEAT + CHECK)


def test_a_pause_shorter_than_the_session_timeout_expires_nothing(emulate, scenario):
    s = scenario("kernel-heartbeat").without_faults().pause("member-2", at=60, duration_s=TIMEOUT - 3)
    run = emulate(s, until=120)
    assert_count(run, "stw_pause", exactly=1, where=lambda e: e.cause == "fault")
    assert_never(run, "session_expired")


def test_a_partition_expires_the_sessions_of_the_members_cut_off(emulate, scenario):
    s = (
        scenario("kernel-heartbeat")
        .without_faults()
        .set(cluster__gc__young_every_s=0.0)
        .partition(["member-1", "member-3"], "monitor", at=60, duration_s=20, label="rack cut")
    )
    run = emulate(s, until=120)
    expired = assert_count(run, "session_expired", exactly=2, within=(60, 60 + TIMEOUT + CHECK + BEAT))
    assert sorted(e.member for e in expired) == ["member-1", "member-3"]
    assert_never(run, "session_expired", entity="member-[245]")
    # Nothing gets through while the partition lasts; every heartbeat sent is dropped.
    assert_never(run, "heartbeat_received", entity="member-1", within=(60 + LATENCY, 80))
    assert_count(run, "message_dropped", entity="member-1", at_least=9, within=(60, 80))
    # Healed at 80: the next heartbeat (at most one interval later) restores each session.
    restored = assert_eventually(run, "session_restored", after="session_expired", same_entity=True,
                                 within=20 + BEAT + LATENCY)
    assert all(80 < e.t <= 80 + BEAT + LATENCY for e in restored)


# -- the fixtures ---------------------------------------------------------------------------------------------
def test_emulate_returns_a_finished_run_under_the_tmp_dirs(emulate, clusteremu_seed, tmp_path_factory):
    run = emulate("kernel-heartbeat", until=30)
    assert isinstance(run, Run) and run.complete
    # The built-in's own seed, unless --clusteremu-seed says otherwise.
    assert run.manifest["until"] == 30 and run.manifest["seed"] == (1 if clusteremu_seed is None else clusteremu_seed)
    assert Path(run.dir).is_relative_to(tmp_path_factory.getbasetemp())
    assert [e.key for e in run.events()] == [e.key for e in open_run(run.dir).events()]


def test_identical_calls_share_a_run_and_fresh_runs_are_identical(emulate):
    a = emulate("kernel-heartbeat", until=30, seed=5)
    assert emulate("kernel-heartbeat", 5, 30) is a
    assert trace_of(a) is trace_of(emulate("kernel-heartbeat", seed=5, until=30))
    b = emulate("kernel-heartbeat", until=30, seed=5, fresh=True)
    assert b is not a and b.dir != a.dir and b.digest == a.digest
    assert emulate("kernel-heartbeat", until=30, seed=6).digest != a.digest


def test_overrides_as_dotted_keys_or_double_underscores_on_every_scenario_form(emulate, scenario, tmp_path):
    dotted = emulate("kernel-heartbeat", until=20, **{"cluster.members": 2, "faults": []})
    underscored = emulate("kernel-heartbeat", until=20, cluster__members=2, faults=[])
    assert dotted is underscored
    assert {e.agent for e in dotted.events(["agent_started"])} == {"member-1", "member-2", "monitor"}
    raw = {"scenario": {"name": "tiny", "model": "heartbeat", "duration_s": 10}, "cluster": {"members": 1}}
    from_dict = emulate(raw, workload__timer_mode="fixed_delay")
    assert from_dict.manifest["scenario"]["workload"]["timer_mode"] == "fixed_delay"
    assert from_dict.manifest["until"] == 10
    assert raw == {"scenario": {"name": "tiny", "model": "heartbeat", "duration_s": 10}, "cluster": {"members": 1}}
    from_builder = emulate(scenario(model="heartbeat", duration_s=10).set("cluster.members", 1))
    assert trace_of(from_builder).count("heartbeat_sent") == trace_of(from_builder).count("heartbeat_received") > 0
    assert emulate(load_scenario("kernel-heartbeat"), until=20, faults=[], cluster__members=2).digest == dotted.digest
    path = tmp_path / "mine.toml"
    path.write_text('[scenario]\nname = "mine"\nmodel = "heartbeat"\nduration_s = 5\n[cluster]\nmembers = 4\n')
    assert emulate(path).manifest["scenario"]["cluster"]["members"] == 4
    assert emulate(str(path), cluster__members=1).manifest["scenario"]["cluster"]["members"] == 1


def test_bad_overrides_are_refused_with_the_key(emulate):
    with pytest.raises(InputError, match=r"workload\.timer_mode"):
        emulate("kernel-heartbeat", until=5, workload__timer_mode="sometimes")
    with pytest.raises(InputError, match=r"workload\.no_such_key"):
        emulate("kernel-heartbeat", until=5, **{"workload.no_such_key": 1})
    with pytest.raises(InputError, match="is a value, not a table"):
        emulate("kernel-heartbeat", until=5, **{"scenario.name.x": 1})


def test_the_scenario_builder(scenario):
    b = scenario("kernel-heartbeat").named("mine").seed(9).duration(142.5).set(workload__heartbeat_interval_s=1.0)
    b.crash("member-5", at=30).drop("member-*", ["monitor"], at=10, probability=0.5, duration_s=5).delay(
        "member-1", "monitor", at=1, extra_ms=5)
    sc = b.build()
    assert (sc.name, sc.seed, sc.duration_s) == ("mine", 9, 142.5)
    assert sc.data["workload"]["heartbeat_interval_s"] == 1.0
    assert [f["kind"] for f in sc.data["faults"]] == ["pause", "crash", "drop", "delay"]
    assert sc.data["faults"][2]["between"] == [["member-*"], ["monitor"]]
    assert b.get("faults.1.agents") == ["member-5"] and b.get("nope.x", "d") == "d"
    copy = b.copy().without_faults()
    assert copy.to_dict()["faults"] == [] and len(b.to_dict()["faults"]) == 4
    fresh = scenario(model="heartbeat").build()
    assert fresh.name == "heartbeat-python" and fresh.data["cluster"]["members"] == 3
    with pytest.raises(InputError, match=r"faults\[0\].*agents"):
        scenario(model="heartbeat").fault("crash", at=1).build()
    with pytest.raises(TypeError):
        scenario()


def test_marker_seeds_accept_ints_ranges_and_iterables():
    assert marker_seeds([1, range(3, 6), [2, 1]]) == [1, 3, 4, 5, 2]
    for bad in ([], [-1], ["3"], [1.5], [True]):
        with pytest.raises(TypeError):
            marker_seeds(bad)


# -- the plugin seen from a user's session (pytester, in process) ---------------------------------------------
USER_TESTS = """
    import pytest
    from clusteremu.emulator.testing import assert_count

    @pytest.mark.clusteremu_seeds(range(1, 3), 7)
    def test_each_seed(emulate, clusteremu_seed):
        run = emulate("kernel-heartbeat", until=5)
        assert run.manifest["seed"] == clusteremu_seed

    def test_default_seed(emulate, request):
        run = emulate("kernel-heartbeat", until=5)
        expected = request.config.getoption("clusteremu_seed") or 1
        assert run.manifest["seed"] == expected

    def test_explicit_seed_wins(emulate):
        assert emulate("kernel-heartbeat", seed=4, until=5).manifest["seed"] == 4

    def test_fails(emulate):
        run = emulate("kernel-heartbeat", until=5)
        assert_count(run, "session_expired", at_least=1)
"""


def test_marker_option_and_failure_report_in_a_users_session(pytester):
    pytester.makepyfile(test_user=USER_TESTS)
    result = pytester.runpytest_inprocess("-v", "--strict-markers", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=5, failed=1)
    result.stdout.fnmatch_lines([
        "*test_each_seed?seed1? PASSED*", "*test_each_seed?seed2? PASSED*", "*test_each_seed?seed7? PASSED*",
    ])
    result.stdout.fnmatch_lines([
        "*expected at least 1 session_expired, found 0*",
        "*clusteremu runs*",
        "kernel-heartbeat seed=1 until=5: *",
    ])
    with_option = pytester.runpytest_inprocess("--clusteremu-seed", "3", "-p", "no:cacheprovider", "-k", "not fails")
    with_option.assert_outcomes(passed=5)


def test_the_marker_without_the_fixture_is_a_collection_error(pytester):
    pytester.makepyfile(test_bad="""
        import pytest

        @pytest.mark.clusteremu_seeds(1, 2)
        def test_no_fixture():
            pass
    """)
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider")
    assert result.ret != 0
    result.stdout.fnmatch_lines(["*clusteremu_seeds needs the test to use the emulate fixture*"])


# -- discovery through the entry point, in a project outside the repository -------------------------------------
@pytest.mark.slow
def test_the_plugin_is_found_through_its_entry_point_in_a_throwaway_project(tmp_path):
    project = tmp_path / "throwaway"
    project.mkdir()
    assert not any(p.name in ("conftest.py", "pyproject.toml", "pytest.ini", "tox.ini", "setup.cfg")
                   for d in (project, *project.parents) for p in d.iterdir() if d != Path("/"))
    (project / "test_cluster.py").write_text(textwrap.dedent("""
        import pytest
        from clusteremu.emulator.testing import assert_count, assert_eventually, assert_never

        @pytest.mark.clusteremu_seeds(1, 2)
        def test_member_2_loses_its_session_once_and_gets_it_back(emulate):
            run = emulate("kernel-heartbeat", until=150)
            assert_count(run, "session_expired", exactly=1, entity="member-2")
            assert_eventually(run, "session_restored", after="session_expired", same_entity=True, within=10)

        def test_a_short_pause_expires_nothing(emulate, scenario):
            s = scenario("kernel-heartbeat").without_faults().pause("member-1", at=30, duration_s=5)
            assert_never(emulate(s, until=60), "session_expired")
    """))
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_cluster.py"]
    done = subprocess.run(cmd + ["--strict-markers"], cwd=project, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "3 passed" in done.stdout
    # Without the entry point's plugin the same project fails: the fixtures (and the marker) came from it.
    off = subprocess.run(cmd + ["-p", "no:clusteremu"], cwd=project, env=env, capture_output=True, text=True, timeout=120)
    assert off.returncode != 0 and "fixture 'emulate' not found" in off.stdout

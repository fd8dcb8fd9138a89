"""The kernel's light timers run exactly where SimPy's timeouts would: same times, same order among other events."""
import pytest
import simpy

from clusteremu.emulator.timer import call_first, call_later, pause


def _schedule(env: simpy.Environment, light: bool, log: list) -> None:
    # Callbacks and processes due at equal and distinct times, scheduled in an interleaved order: ties are broken
    # by the order of scheduling, whichever kind of entry each is.
    def at(delay, tag):
        if light:
            call_later(env, delay, lambda _ev: log.append((env.now, tag)))
        else:
            env.timeout(delay).callbacks.append(lambda _ev: log.append((env.now, tag)))

    def sleeper(tag, delays):
        for d in delays:
            yield pause(env, d) if light else env.timeout(d)
            log.append((env.now, tag))
            at(0.0, f"{tag}-after")

    at(1.0, "a")
    env.process(sleeper("p", [0.5, 0.5, 0.1 + 0.2]))
    at(1.0, "b")
    at(0.1 + 0.2, "c")  # the float 0.30000000000000004, as a timeout would schedule it
    env.timeout(1.0).callbacks.append(lambda _ev: log.append((env.now, "timeout")))
    at(0.0, "now")


@pytest.mark.parametrize("until", [0.2, 1.0, 2.0])
def test_call_later_and_pause_fire_in_the_order_of_the_timeouts_they_replace(until):
    runs = []
    for light in (False, True):
        env, log = simpy.Environment(), []
        _schedule(env, light, log)
        env.run(until=until)
        runs.append(log)
    assert runs[0] == runs[1]
    assert len(runs[0]) >= 1


def test_a_process_waiting_on_a_pause_is_interrupted_as_on_a_timeout():
    env = simpy.Environment()
    seen = []

    def sleeper():
        try:
            yield pause(env, 5.0)
        except simpy.Interrupt as irq:
            seen.append((env.now, irq.cause))

    proc = env.process(sleeper())
    env.timeout(1.0).callbacks.append(lambda _ev: proc.interrupt("stop"))
    env.run()
    assert seen == [(1.0, "stop")] and env.now == 5.0  # the pause's entry still runs, resuming nobody


def test_negative_delays_are_refused():
    env = simpy.Environment()
    with pytest.raises(ValueError, match="negative delay"):
        call_later(env, -1.0, lambda _ev: None)
    with pytest.raises(ValueError, match="negative delay"):
        pause(env, -0.5)


def test_call_first_runs_where_a_process_started_now_takes_its_first_step():
    runs = []
    for light in (False, True):
        env, log = simpy.Environment(), []

        def first_step(tag):
            log.append((env.now, tag))
            yield env.timeout(0.0)

        def at_one(_ev):
            env.timeout(0.0).callbacks.append(lambda _e: log.append((env.now, "normal, scheduled first")))
            if light:
                call_first(env, lambda _t: log.append((env.now, "started")))
            else:
                env.process(first_step("started"))

        env.timeout(1.0).callbacks.append(at_one)
        env.run()
        runs.append(log)
    assert runs[0] == runs[1] == [(1.0, "started"), (1.0, "normal, scheduled first")]

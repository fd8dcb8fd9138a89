"""The load-manager benchmark's figures as ``clusteremu analyze`` computes them (Spark, the ``lm_benchmark`` part of
Pulsar's figures), on two hand-made traces: a rolling restart and a scale-out (with the extensible load
manager's shedding stats)."""
from __future__ import annotations

import pytest

from clusteremu.tools.analysis import AnalysisOptions, analyze
from clusteremu.tools.analysis.runs import open_run_info

pytestmark = pytest.mark.spark


def restart_run(b):
    b.event(1.0, "client-1", "topic_connected", topic="t1", broker="broker-1", hops=1, unavailable_s=0.0)
    b.event(1.0, "client-2", "topic_connected", topic="t2", broker="broker-2", hops=1, unavailable_s=0.0)
    b.event(300.0, "broker-1", "broker_stopping", cause="rolling_restart", bundles=1)
    b.event(300.1, "client-1", "topic_disconnected", topic="t1", broker="broker-1", reason="unload")
    b.event(300.4, "client-1", "topic_connected", topic="t1", broker="broker-2", hops=2, unavailable_s=0.3)
    b.event(340.0, "broker-2", "broker_stopping", cause="rolling_restart", bundles=2)
    b.event(340.1, "client-1", "topic_disconnected", topic="t1", broker="broker-2", reason="unload")
    b.event(340.1, "client-2", "topic_disconnected", topic="t2", broker="broker-2", reason="unload")
    b.event(340.2, "client-1", "topic_connected", topic="t1", broker="broker-1", hops=1, unavailable_s=0.1)
    b.event(345.1, "client-2", "topic_connected", topic="t2", broker="broker-1", hops=1, unavailable_s=5.0)
    b.event(400.0, "broker-2", "rolling_restart_done", brokers=2)
    return b.write(writers=2)


def scale_out_run(b):
    for k in range(20):
        t = 60.0 * k
        cpu = {"broker-1": 60.0, "broker-2": 60.0}
        if t >= 300:
            cpu["broker-3"] = 5.0 if t < 480 else 40.0
            cpu["broker-1"] = cpu["broker-2"] = 45.0 if t < 480 else 40.0
        for broker, v in cpu.items():
            b.event(t, broker, "host_usage_sampled", cpu=v, elapsed_s=60.0, bandwidth_in=0.0, bandwidth_out=0.0)
    b.event(300.0, "broker-3", "broker_booted", cause="scale_out", session="s3")
    b.event(360.0, "broker-1", "bundle_unloaded", bundle="x", destination="", reason="shedding", topics=3)
    # the extensible channel owner's shedding cycles: loadStd above loadBalancerBrokerLoadTargetStd until 380
    for t, std, label, reason in ((240.0, 0.0, "Skip", "HitCount"), (320.0, 0.3, "Success", ""),
                                  (380.0, 0.2, "Skip", "HitCount"), (440.0, 0.1, "Skip", "HitCount")):
        b.event(t, "broker-1", "transfer_shedder_stats", load_avg=0.4, load_std=std, target_std=0.25, label=label,
                reason=reason)
    return b.write()


@pytest.fixture(scope="module")
def figures(spark, tmp_path_factory, trace_builder):
    root = tmp_path_factory.mktemp("lm")
    dirs = [restart_run(trace_builder(root / "restart", name="lm-bench-rolling-restart-modular", until=600.0)),
            scale_out_run(trace_builder(root / "scale", name="lm-bench-scale-out-extensible", until=1200.0))]
    results = analyze(spark, [open_run_info(i, d) for i, d in enumerate(dirs)], AnalysisOptions())
    return {r.info.name: r.summary["figures"]["lm_benchmark"] for r in results}


def test_reconnect_figure_of_a_rolling_restart(figures):
    f = figures["lm-bench-rolling-restart-modular"]["reconnect"]
    assert f["start_s"] == 300.0 and f["restart_s"] == pytest.approx(100.0)
    assert f["recovery_s"] == pytest.approx(45.1)
    assert (f["reconnects"], f["topics"], f["brokers_restarted"]) == (3, 2, 2)
    assert f["unavailable"]["max"] == pytest.approx(5.0)
    assert figures["lm-bench-rolling-restart-modular"]["rebalance"] == {"scale_out": False}


def test_rebalance_figure_of_a_scale_out(figures):
    f = figures["lm-bench-scale-out-extensible"]["rebalance"]
    # broker-3 at 5 against 45, 45 until 480; all at 40 from 480 to the end
    assert f["start_s"] == 300.0 and f["time_s"] == pytest.approx(180.0) and f["balanced"] is True
    assert f["unloads"] == 1 and f["last_unload_s"] == pytest.approx(60.0)
    assert f["deviation_end"] == pytest.approx(0.0)
    # TransferShedder's own criterion: at or below 0.25 from the cycle at 380 on
    assert f["shedder"]["time_s"] == pytest.approx(80.0) and f["shedder"]["cycles"] == 3
    assert figures["lm-bench-scale-out-extensible"]["reconnect"] == {"restart": False}

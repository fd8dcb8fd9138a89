"""Pulsar's sweep suites: the AvgShedder article's experiments, reported pathologies, the slides' mechanisms."""
from __future__ import annotations

from clusteremu.emulator.systems import Suite

#: Extend freely: names must be built-in scenarios of this system.
SUITES: dict[str, Suite] = {
    "article-avgshedder": Suite(
        (
            "threshold-homogeneous", "threshold-scale-in", "threshold-heterogeneous", "threshold-jitter",
            "uniform-homogeneous", "uniform-scale-in", "uniform-heterogeneous", "uniform-jitter",
            "avgshedder-homogeneous", "avgshedder-scale-in", "avgshedder-heterogeneous", "avgshedder-jitter",
            "avgshedder-cpu-spike", "avgshedder-scale-out", "avgshedder-hash-corner-case",
        ),
        "BIGO's AvgShedder article (shared/seeds/000): each strategy pair of its rating table on the homogeneous "
        "start, the scale-in, the heterogeneous cluster and the jitter topic, and AvgShedder's own experiments",
    ),
    "pulsar-pathologies": Suite(
        ("gc-fixed-rate-infinite-cpu", "gc-fixed-delay-finite-cpu", "lookup-storm-broker-crash"),
        "reported Pulsar load-balancing pathologies (infinite CPU after a GC pause with fixed-rate sampling, and "
        "its fixed-delay fix) and the lookup storm after a broker crash",
    ),
    "pulsar-mechanisms": Suite(
        ("slides-overload-shedder", "slides-threshold-shedder", "slides-uniform-load-shedder",
         "rolling-restart-modular", "rolling-restart-extensible"),
        "load-manager mechanisms of the Pulsar slides (shared/seeds/001): the three shedders on the slides' 3-broker "
        "example, and the modular and the extensible load manager on the same rolling restart (client reconnect time)",
    ),
    "pulsar-lm-benchmark": Suite(
        ("lm-bench-rolling-restart-modular", "lm-bench-rolling-restart-extensible",
         "lm-bench-scale-out-modular", "lm-bench-scale-out-extensible",
         "lm-bench-scale-in-modular", "lm-bench-scale-in-extensible",
         "lm-bench-split-modular", "lm-bench-split-extensible"),
        "Pulsar's published load-manager benchmark (Pulsar 3.0.0 docs): all publishers' reconnection after a restart "
        "of 100 brokers with 65,000 bundles, rebalancing when 5 brokers become 10 and 10 become 5, and splitting 1 "
        "bundle of 10,000 hot topics towards 128, modular against extensible; "
        "`compare --article` on the sweep prints the published and emulated figures side by side "
        "(docs/load-manager-benchmark.md). The restart runs take minutes each",
    ),
}

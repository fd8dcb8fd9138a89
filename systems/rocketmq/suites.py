"""RocketMQ's sweep suites (names must be built-in scenarios of this system): the whole library, and one suite per
allocation strategy and per assignment mode so that a sweep compares like with like."""
from __future__ import annotations

from clusteremu.emulator.systems import Suite

#: the membership and broker changes each strategy is run through
CHANGES = ("scale-out", "scale-in", "crash", "more-consumers", "broker-join", "slow-consumer", "rolling-restart",
           "gc-pause")
#: the client-side strategies, by their scenario-name suffix
STRATEGIES = {"averagely": "AllocateMessageQueueAveragely", "circle": "AllocateMessageQueueAveragelyByCircle",
              "consistent-hash": "AllocateMessageQueueConsistentHash"}
#: the same changes under RocketMQ 5's broker-side assignment with POP (more consumers than queues does not apply)
POP = tuple(f"rocketmq-pop-{c}" for c in CHANGES if c != "more-consumers")
OTHERS = ("rocketmq-scale-out-no-notify", "rocketmq-scale-out-batched-notify", "rocketmq-orderly-scale-out",
          "rocketmq-orderly-scale-out-5x", "rocketmq-nearby-room-loss", "rocketmq-gc-pause-fixed-delay")

SUITES: dict[str, Suite] = {
    "rocketmq": Suite(
        tuple(f"rocketmq-{c}-{s}" for s in STRATEGIES for c in CHANGES) + POP + OTHERS,
        "RocketMQ consumer load balancing (shared/seeds/004): consumer scale-out and scale-in, a crash noticed by "
        "channel expiry, more consumers than queues, a broker joining, a slow consumer, a rolling restart and a long "
        "GC pause under each client-side strategy; the same under 5.x broker-side POP assignment; a scale-out without "
        "notifications and with 5.x brokers batching them; orderly consumers (4.9.x and 5.x); "
        "AllocateMachineRoomNearby losing a room; a GC pause with fixed-delay instead of fixed-rate timers",
    ),
    **{f"rocketmq-{s}": Suite(tuple(f"rocketmq-{c}-{s}" for c in CHANGES),
                              f"every membership and broker change with {name} (client-side rebalance, 4.9.x)")
       for s, name in STRATEGIES.items()},
    "rocketmq-pop": Suite(POP, "the same changes under RocketMQ 5's broker-side assignment with POP consumption"),
}

"""RocketMQ's own configuration keys with RocketMQ's defaults, as a scenario's ``[config]`` table takes them.

Components:

* :data:`CLIENT_DEFAULTS`: client properties (``ClientConfig``, ``DefaultMQPushConsumer``, the JVM system
  properties the rebalance service reads), in RocketMQ's units (milliseconds);
* :data:`BROKER_DEFAULTS`: broker properties (``BrokerConfig`` and the broker's constants);
* :data:`NAMESRV_DEFAULTS`: name-server timing (``NamesrvController``, ``RouteInfoManager``);
* :data:`DEFAULTS`: all of them; :func:`resolve` fills a scenario's ``[config]`` over them; :func:`check` lists
  unknown keys and values of the wrong kind;
* :data:`CONSUME_FROM_WHERE`, :data:`MESSAGE_MODELS`, :data:`MESSAGE_REQUEST_MODES`: the enumerations.

Where 4.9.x and 5.x differ, the default is 4.9.x's and the 5.x value is documented next to it.
"""
from __future__ import annotations

from typing import Any, Mapping

__all__ = ["BROKER_DEFAULTS", "CLIENT_DEFAULTS", "CONSUME_FROM_WHERE", "DEFAULTS", "MESSAGE_MODELS",
           "MESSAGE_REQUEST_MODES", "NAMESRV_DEFAULTS", "check", "resolve", "seconds"]

#: ``ConsumeFromWhere`` values the push consumer's ``computePullFromWhere`` distinguishes (the deprecated
#: ``CONSUME_FROM_LAST_OFFSET_AND_FROM_MIN_WHEN_BOOT_FIRST``, ``..._MIN_OFFSET`` and ``..._MAX_OFFSET`` behave as
#: ``CONSUME_FROM_LAST_OFFSET`` there)
CONSUME_FROM_WHERE = ("CONSUME_FROM_LAST_OFFSET", "CONSUME_FROM_FIRST_OFFSET", "CONSUME_FROM_TIMESTAMP",
                      "CONSUME_FROM_LAST_OFFSET_AND_FROM_MIN_WHEN_BOOT_FIRST", "CONSUME_FROM_MIN_OFFSET",
                      "CONSUME_FROM_MAX_OFFSET")
MESSAGE_MODELS = ("CLUSTERING", "BROADCASTING")
MESSAGE_REQUEST_MODES = ("PULL", "POP")

CLIENT_DEFAULTS: dict[str, Any] = {
    # ClientConfig
    "pollNameServerInterval": 30_000,            # route refresh period (ms)
    "heartbeatBrokerInterval": 30_000,           # heartbeat to every broker of the routes (ms)
    "persistConsumerOffsetInterval": 5_000,      # offsets sent to the brokers (ms)
    "mqClientApiTimeout": 3_000,                 # RPC timeout of the calls below (ms)
    # RebalanceService (JVM system properties)
    "rocketmq.client.rebalance.waitInterval": 20_000,   # ms between rebalances
    "rocketmq.client.rebalance.minInterval": 1_000,     # 5.x only: retry period while unbalanced (ms)
    # DefaultMQPushConsumer
    "messageModel": "CLUSTERING",
    "consumeFromWhere": "CONSUME_FROM_LAST_OFFSET",
    "consumeTimestamp": -1_800_000,              # CONSUME_FROM_TIMESTAMP: ms relative to the consumer's start
                                                 # (Java: a yyyyMMddHHmmss text, by default start - 30 min)
    "clientRebalance": True,                     # 5.x: false = broker-side assignment (QUERY_ASSIGNMENT)
    "popShareQueueNum": 0,                       # 5.x POP: 0 = every consumer pops from every queue
    "popInvisibleTime": 60_000,                  # 5.x POP: invisibility of popped messages (ms)
    # ConsumeMessageOrderlyService / ProcessQueue
    "rocketmq.client.rebalance.lockInterval": 20_000,   # orderly: re-lock all queues (ms)
    "rocketmq.client.rebalance.lockMaxLiveTime": 30_000,  # orderly: client-side lock validity (ms)
}

BROKER_DEFAULTS: dict[str, Any] = {
    "notifyConsumerIdsChangedEnable": True,      # NOTIFY_CONSUMER_IDS_CHANGED on group membership changes
    "realTimeNotifyConsumerChange": True,        # 5.x DefaultConsumerIdsChangeListener: false = remember the group's
                                                 # channels at each change, send from a task (fixed rate, first 30 s
                                                 # after the broker starts, then every 15 s); 4.9.x: always at once
    "channelExpiredTimeout": 120_000,            # a consumer channel without heartbeat this long is closed (ms)
    "serverChannelMaxIdleTimeSeconds": 120,      # NettyServerConfig: a channel without any traffic is closed (s)
    "rocketmq.broker.rebalance.lockMaxLiveTime": 60_000,  # RebalanceLockManager lease (ms)
    "registerNameServerPeriod": 30_000,          # registerBrokerAll period (ms)
    "serverLoadBalancerEnable": True,            # 5.x QueryAssignmentProcessor; false = every queue to all
    "loadBalancePollNameServerInterval": 30_000,  # 5.x TopicRouteInfoManager: refresh of the routes it caches for
                                                  # QUERY_ASSIGNMENT (fixed rate, first 1 s after the start; ms)
    "defaultMessageRequestMode": "PULL",         # 5.x: PULL or POP for broker-side assignment
}

NAMESRV_DEFAULTS: dict[str, Any] = {
    "scanNotActiveBrokerInterval": 10_000,       # 4.9.x fixed 10 s (5.x: 5 000)
    "brokerChannelExpiredTime": 120_000,         # RouteInfoManager.BROKER_CHANNEL_EXPIRED_TIME
}

DEFAULTS: dict[str, Any] = {**CLIENT_DEFAULTS, **BROKER_DEFAULTS, **NAMESRV_DEFAULTS}

_CHOICES = {
    "messageModel": MESSAGE_MODELS,
    "consumeFromWhere": CONSUME_FROM_WHERE,
    "defaultMessageRequestMode": MESSAGE_REQUEST_MODES,
}
_POSITIVE = ("pollNameServerInterval", "heartbeatBrokerInterval", "persistConsumerOffsetInterval",
             "mqClientApiTimeout", "rocketmq.client.rebalance.waitInterval", "rocketmq.client.rebalance.minInterval",
             "popInvisibleTime", "rocketmq.client.rebalance.lockInterval", "rocketmq.client.rebalance.lockMaxLiveTime",
             "channelExpiredTimeout", "rocketmq.broker.rebalance.lockMaxLiveTime", "registerNameServerPeriod",
             "loadBalancePollNameServerInterval", "scanNotActiveBrokerInterval", "brokerChannelExpiredTime",
             "serverChannelMaxIdleTimeSeconds")


def resolve(config: Mapping[str, Any]) -> dict[str, Any]:
    """Every key with RocketMQ's default, overridden by the scenario's ``[config]``."""
    out = dict(DEFAULTS)
    out.update(config)
    return out


def check(config: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Unknown keys, values of another kind than the default's, bad enumerations and non-positive periods."""
    problems = []
    for key, value in config.items():
        if key not in DEFAULTS:
            problems.append((f"config.{key}", "not a RocketMQ property the emulator knows"))
            continue
        default = DEFAULTS[key]
        if isinstance(default, bool):
            ok = isinstance(value, bool)
        elif isinstance(default, int):
            ok = isinstance(value, int) and not isinstance(value, bool)
        else:
            ok = isinstance(value, type(default))
        if not ok:
            problems.append((f"config.{key}", f"expected {type(default).__name__}, got {value!r}"))
        elif key in _CHOICES and value not in _CHOICES[key]:
            problems.append((f"config.{key}", f"expected one of {', '.join(_CHOICES[key])}"))
        elif key in _POSITIVE and value <= 0:
            problems.append((f"config.{key}", "must be > 0"))
        elif key == "popShareQueueNum" and value < 0:
            problems.append((f"config.{key}", "must be >= 0"))
    return problems


def seconds(cfg: Mapping[str, Any], key: str) -> float:
    """A millisecond property in seconds (virtual time is in seconds)."""
    return float(cfg[key]) / 1000.0

"""RocketMQ consumer queue-allocation strategies, faithful to RocketMQ's client (4.9.x and 5.x) and broker code
(see ``shared/reference/rocketmq_storm.md`` Part A).

Public API::

    from clusteremu.strategies import rocketmq
    s = rocketmq.create("AllocateMessageQueueConsistentHash", {"virtualNodeCnt": 10})
    s.allocate(group, current_cid, mq_all, cid_all)      # [MessageQueue, ...] in the real order
    s.name                                               # Java getName(): "CONSISTENT_HASH"
    rocketmq.allocate4pop(s, group, cid, mq_all, cid_all, pop_share_queue_num)
    rocketmq.sort_mq_all(mqs); rocketmq.sort_cid_all(cids)   # RebalanceImpl's sorting
    from clusteremu.strategies.rocketmq.decide import decide, parse_request
    decide(parse_request(obj, "snapshot.json"), "AllocateMessageQueueAveragely", sort=False)   # clusteremu decide

Modules: ``message_queue`` (MessageQueue), ``sorting``, ``errors`` (AllocationArgumentError), ``strategy``
(contract + common check), one module per strategy (``averagely``, ``averagely_by_circle``, ``consistent_hash`` with
``hash_ring``, ``by_config``, ``by_machine_room``, ``machine_room_nearby``), ``pop`` (allocate4Pop), ``registry``,
``topic_route`` (queues from a topic route), ``decide`` (the pure core of ``clusteremu decide``).
"""
from .errors import AllocationArgumentError
from .message_queue import MessageQueue
from .pop import ALL_QUEUES_ID, allocate4pop
from .registry import canonical_name, create, names
from .sorting import sort_cid_all, sort_mq_all
from .strategy import AllocateMessageQueueStrategy

__all__ = [
    "ALL_QUEUES_ID",
    "AllocateMessageQueueStrategy",
    "AllocationArgumentError",
    "MessageQueue",
    "allocate4pop",
    "canonical_name",
    "create",
    "names",
    "sort_cid_all",
    "sort_mq_all",
]

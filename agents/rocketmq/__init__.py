"""The RocketMQ cluster model: a name server, brokers (routes, consumer groups learnt from heartbeats, committed
offsets, queue locks, 5.x broker-side assignment and POP) and push consumers (route and heartbeat timers, the
rebalance service, allocation from their own stale view, fluid consumption), as agents whose behaviour is SimPy
processes.

Modules: ``config`` (RocketMQ's properties and defaults), ``names`` (agent, queue and client-id names),
``namesrv`` (NameServer), ``broker`` (Broker), ``consumer`` (Consumer, RollingRestarts), ``rebalance`` (the
strategy from the scenario, the fluid share of capacity), ``faults`` (the model's fault kinds), ``model``
(scenario sections and agents), ``views`` (trace views: holders, overlap, orphans, duplicates, lag).
"""

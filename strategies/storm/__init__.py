"""Storm's Resource Aware Scheduler, as pure code.

Data model (this package's contract with the scheduling round, priority and eviction):

* :mod:`.config` — Storm config keys used by RAS, their defaults and a typed reader.
* :mod:`.resources` — normalized resources (offers, requests) and Storm's arithmetic on them.
* :mod:`.topology` — topologies, components, executors and their requests.
* :mod:`.cluster` — supervisors, worker slots and the mutable scheduling state (``Cluster``).

Strategies:

* :mod:`.sorting` — the node sorter (racks → hosts → nodes) and the executor orders.
* :mod:`.scheduling` — the five scheduling strategies and ``STRATEGIES`` by class name.
* :mod:`.priority` — the priority strategies (2.x's simulated score, FIFO, generic; 1.x's "% of guarantee").
* :mod:`.eviction` — 2.x eviction from the end of the order and 1.x ``DefaultEvictionStrategy``.

The round and the registry:

* :mod:`.scheduler` — one ``ResourceAwareScheduler`` round (attempts, sum check, eviction, rollback).
* :mod:`.registry` — strategies by simple and fully-qualified class name, and the 1.x / 2.x selection.
* :mod:`.decide` (with :mod:`.decide_parse`) — the pure core of ``clusteremu decide`` for Storm.

Java semantics (hash orders of ``WorkerSlot`` and ``ExecutorDetails``, casts, sorts) come from
:mod:`clusteremu.base.java`.
"""

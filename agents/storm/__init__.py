"""Apache Storm's control plane as agents: Nimbus (leader-elected on ZooKeeper), supervisors and users.

Components:

* :mod:`.store`: the ZooKeeper agent's name and Storm's paths on it;
* :mod:`.nimbus`: Nimbus — leader latch, its copy of ZooKeeper, submissions and kills, supervisor liveness and
  the ``mkAssignments`` timer;
* :mod:`.assignments`: one ``mkAssignments`` round — the scheduler's state from what the leader knows, one round of
  :mod:`clusteremu.strategies.storm.scheduler` (the code behind ``clusteremu decide`` for Storm), what changed;
* :mod:`.metrics`: the cluster's usage, Nimbus's fragmentation gauge and the network metric of placements;
* :mod:`.supervisor`: a supervisor — heartbeats, assignment sync, workers;
* :mod:`.user`: a user submitting and killing topologies through the Nimbus leader;
* :mod:`.topologies`: scenario topologies → submissions → the scheduler's ``Topology``;
* :mod:`.random_workload`: random topologies and supervisor capacities drawn from the run's seed;
* :mod:`.lifecycle`: the ``restart`` fault; :mod:`.faults`: the fault schema (with ``rolling_restart``);
* :mod:`.model`: the scenario sections and the agents of a run;
* :mod:`.views`: views over a finished run's trace (leader, live supervisors, workers at a time, measures).
"""

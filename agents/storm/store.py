"""Storm's ZooKeeper: the store agent's name and the paths Storm keeps there (``ClusterUtils`` of Storm 2.x).

* :data:`STORE`: the metadata store agent (the kernel's :class:`~clusteremu.emulator.metadata_store.MetadataStore`);
* :data:`LEADER_PATH`: the Nimbus leader latch (Curator's ``LeaderLatch`` on ``/storm/leader-lock``);
* :data:`STORMS_PREFIX`: one persistent node per submitted topology (``StormBase``: name, owner, launch time,
  status, the topology's conf and components);
* :data:`ASSIGNMENTS_PREFIX`: one persistent node per assigned topology (``Assignment``: its workers with their
  executors and resources), written by the leader Nimbus, read by the supervisors;
* :data:`SUPERVISORS_PREFIX`: one ephemeral node per live supervisor (``SupervisorInfo``), rewritten at every
  supervisor heartbeat; it goes when the supervisor's session expires;
* :func:`node_assignments_path`: one node per supervisor with its part of every assignment (``{"at": write
  time, "parts": {topology id: workers}}``), written by the leader Nimbus when that part changes and pushed to
  that supervisor at the same time (Storm 2.x's ``sendSupervisorAssignments``); the supervisor reads it at start
  and every 10 s (its ``SynchronizeAssignments``).
"""
from __future__ import annotations

__all__ = ["ASSIGNMENTS_PREFIX", "LEADER_PATH", "NODE_ASSIGNMENTS_PREFIX", "STORE", "STORMS_PREFIX",
           "SUPERVISORS_PREFIX", "node_assignments_path", "node_of_assignments_path"]

STORE = "zookeeper"
LEADER_PATH = "/storm/leader-lock"
STORMS_PREFIX = "/storm/storms/"
ASSIGNMENTS_PREFIX = "/storm/assignments/"
SUPERVISORS_PREFIX = "/storm/supervisors/"
NODE_ASSIGNMENTS_PREFIX = "/storm/supervisor-assignments/"


def node_assignments_path(supervisor: str) -> str:
    """The node of ``supervisor``'s part of the assignments."""
    return NODE_ASSIGNMENTS_PREFIX + supervisor


def node_of_assignments_path(path: str) -> str:
    """The supervisor of a :func:`node_assignments_path`."""
    return path[len(NODE_ASSIGNMENTS_PREFIX):]

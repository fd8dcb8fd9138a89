"""The kernel's own model: members heartbeat a monitor that expires their sessions.

It exercises every kernel mechanism the broker models stand on — timers with both Java semantics, GC pauses
that gate an agent, keyed randomness, network latency and faults — in the smallest setting: a member whose
pause outlasts the session timeout loses its session, exactly as a broker loses its ZooKeeper session. Members
are JVM agents (:class:`clusteremu.emulator.jvm.JvmAgent`): the same collections, ``gc`` table and ``gc_storm``
fault as every JVM model.
"""

"""The kernel's own model: members heartbeat a monitor that expires their sessions.

It exercises every kernel mechanism the broker models stand on — timers with both Java semantics, GC pauses
that gate an agent, keyed randomness, network latency and faults — in the smallest setting: a member whose
pause outlasts the session timeout loses its session, exactly as a broker loses its ZooKeeper session.
"""

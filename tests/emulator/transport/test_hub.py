"""The coordinator's hub: replies are matched to calls; frames that break the protocol are counted and dropped."""
from __future__ import annotations

import msgpack
import pytest
import zmq

from clusteremu.base.errors import RunFailure
from clusteremu.emulator.transport import wire
from clusteremu.emulator.transport.hub import Hub, HubOptions


@pytest.fixture
def hub(tmp_path):
    h = Hub(f"ipc://{tmp_path}/hub.sock", HubOptions(heartbeat_s=0.05, timeout_s=2.0, join_timeout_s=5.0,
                                                      max_frame_bytes=4096))
    yield h
    h.close()


def fake_worker(hub: Hub, identity: bytes) -> zmq.Socket:
    sock = hub.ctx.socket(zmq.DEALER)
    sock.linger = 0
    sock.identity = identity
    sock.connect(hub.endpoint)
    return sock


def pump_until(hub: Hub, predicate, rounds: int = 100) -> None:
    for _ in range(rounds):
        if predicate():
            return
        hub._pump(0.05)
    raise AssertionError("condition not reached")


def test_protocol_breaking_frames_are_dropped_and_the_real_reply_still_arrives(hub):
    w = fake_worker(hub, b"w1")
    w.send(wire.encode(wire.HELLO, 0, {"pid": 1, "host": "here", "protocol": wire.PROTOCOL_VERSION}))
    [peer] = hub.wait_for_workers(1)
    stranger = fake_worker(hub, b"stranger")
    stranger.send(wire.encode(wire.DONE, 1, {}))                        # a peer that never said hello
    w.send(b"\xc1 not msgpack")                                         # garbage
    w.send(msgpack.packb([1, wire.DONE, 1, None]))                      # another protocol version
    w.send(wire.encode(wire.HELLO, 0, {"pid": "x", "host": 1, "protocol": 1}))  # a malformed second hello
    w.send(b"\x90" * 5000)                                              # oversized
    w.send_multipart([b"two", b"frames"])                               # not one frame
    w.send(wire.encode(wire.DONE, 999, {}))                             # a reply to a call never made
    pump_until(hub, lambda: sum(hub.dropped.values()) == 7)
    assert hub.dropped == {"unknown peer": 1, "invalid": 2, "oversized": 1, "garbage": 1, "unknown call": 1,
                           "unexpected hello": 1}

    hub.call(peer, wire.RUN, {"endpoints": ["unix:/nowhere"], "until": 1.0})
    kind, call, _ = wire.decode(w.recv(), wire.TO_WORKER, 1 << 20)
    assert kind == wire.RUN
    w.send(wire.encode(wire.PROGRESS, 0, [0.5, 3, 7]))                  # a progress note answers nothing
    w.send(wire.encode(wire.DONE, call, {"windows": 2}))
    w.send(wire.encode(wire.DONE, call, {"windows": 3}))                # answered twice: the second is dropped
    assert hub.wait(peer) == (wire.DONE, {"windows": 2})
    assert peer.progress == [0.5, 3, 7]
    pump_until(hub, lambda: hub.dropped["unknown call"] == 2)
    stranger.close()
    w.close()


def test_a_worker_that_says_nothing_after_hello_fails_the_run_naming_it(hub):
    w = fake_worker(hub, b"w1")
    w.send(wire.encode(wire.HELLO, 0, {"pid": 4242, "host": "h", "protocol": wire.PROTOCOL_VERSION}))
    [peer] = hub.wait_for_workers(1)
    peer.agents = ["broker-1", "broker-2"]
    hub.call(peer, wire.RUN, {"endpoints": ["unix:/nowhere"], "until": 1.0})
    with pytest.raises(RunFailure, match=r"worker 0 \(pid 4242 on h; agents broker-1, broker-2\) has been silent"):
        hub.wait(peer)
    w.close()


def test_workers_that_never_join_fail_the_run_after_the_join_timeout(tmp_path):
    h = Hub(f"ipc://{tmp_path}/j.sock", HubOptions(heartbeat_s=0.05, timeout_s=1.0, join_timeout_s=0.3))
    try:
        with pytest.raises(RunFailure, match="only 0 of 2 workers joined"):
            h.wait_for_workers(2)
    finally:
        h.close()


def test_a_worker_beyond_the_expected_number_is_told_to_stop(hub):
    first = fake_worker(hub, b"w1")
    first.send(wire.encode(wire.HELLO, 0, {"pid": 1, "host": "h", "protocol": wire.PROTOCOL_VERSION}))
    hub.wait_for_workers(1)
    extra = fake_worker(hub, b"w2")
    extra.send(wire.encode(wire.HELLO, 0, {"pid": 2, "host": "h", "protocol": wire.PROTOCOL_VERSION}))
    pump_until(hub, lambda: hub.dropped["unexpected hello"] == 1)
    assert extra.poll(2000)
    assert wire.decode(extra.recv(), wire.TO_WORKER, 1 << 20)[0] == wire.STOP
    assert list(hub.peers) == [b"w1"]
    first.close()
    extra.close()


def test_a_worker_that_reports_failure_fails_the_run_with_its_reason(hub):
    w = fake_worker(hub, b"w1")
    w.send(wire.encode(wire.HELLO, 0, {"pid": 7, "host": "h", "protocol": wire.PROTOCOL_VERSION}))
    [peer] = hub.wait_for_workers(1)
    hub.call(peer, wire.RUN, {"endpoints": ["unix:/nowhere"], "until": 1.0})
    _, call, _ = wire.decode(w.recv(), wire.TO_WORKER, 1 << 20)
    w.send(wire.encode(wire.FAILED, call, {"reason": "an agent raised in the window up to t=1.0: KeyError: 'x'"}))
    with pytest.raises(RunFailure, match=r"worker 0 \(pid 7 .* failed: an agent raised .*KeyError"):
        hub.wait(peer)
    w.close()


def test_a_failing_worker_ends_the_mesh_run_while_its_peer_waits_for_its_frames(hub):
    # worker 0 never answers `run` (it would wait for worker 1's frames forever); worker 1 fails: the run must
    # fail at once with worker 1's reason, not wait for worker 0
    import threading

    from clusteremu.emulator.transport.hub import ZmqLink
    from clusteremu.emulator.transport.launch import ZmqWorkers

    socks = [fake_worker(hub, f"w{i}".encode()) for i in range(2)]
    for i, s in enumerate(socks):
        s.send(wire.encode(wire.HELLO, 0, {"pid": 100 + i, "host": "h", "protocol": wire.PROTOCOL_VERSION}))
    peers = hub.wait_for_workers(2)
    workers = ZmqWorkers.__new__(ZmqWorkers)
    workers.hub = hub
    workers._links = [ZmqLink(hub, p) for p in peers]
    for p in peers:
        p.mesh = f"unix:/nowhere/{p.worker_id}"
    failing = socks[[p.identity for p in peers].index(b"w1")]

    def fail_when_run() -> None:
        assert failing.poll(5000)
        _, call, body = wire.decode(failing.recv(), wire.TO_WORKER, 1 << 20)
        failing.send(wire.encode(wire.FAILED, call, {"reason": "an agent raised in the window up to t=3.0: boom"}))

    t = threading.Thread(target=fail_when_run)
    t.start()
    with pytest.raises(RunFailure, match=r"pid 101 .* failed: an agent raised .*boom"):
        workers.run(10.0)
    t.join()
    for s in socks:
        s.close()

"""Hostile peers of a tcp coordinator: each refused, logged once naming its address and the reason, counted in
the manifest, and the run still gives the in-process digest."""
from __future__ import annotations

import logging
import re
import socket
import threading
import time

import msgpack
import psutil
import pytest
import zmq
import zmq.auth

from clusteremu.emulator.runner import execute
from clusteremu.emulator.transport import wire
from clusteremu.emulator.transport.curve import key_id, keygen
from clusteremu.emulator.transport.hub import HubOptions
from clusteremu.emulator.transport.launch import ZmqOptions
from clusteremu.emulator.transport.peers import bind_inbox, mesh_keypair, secure_push
from clusteremu.emulator.transport.refusals import PeerName, Refusals
from clusteremu.scenarios.loader import load_scenario

from .proc_helpers import clusteremu, free_port

UNTIL = 120
#: how long a test waits for something that takes milliseconds on a quiet machine (the machine is shared)
PATIENCE_S = 60.0


@pytest.fixture(scope="module")
def reference_digest(tmp_path_factory) -> str:
    return execute(load_scenario("kernel-heartbeat"), tmp_path_factory.mktemp("ref") / "run", until=UNTIL).digest


class Keys:
    def __init__(self, root) -> None:
        self.server_pub, self.server_sec = keygen(root / "server", "server")
        _, self.allowed_sec = keygen(root / "allowed", "worker")
        self.allow = root / "allowed"
        self.intruder_pub, self.intruder_sec = keygen(root / "intruder", "intruder")


class Coordinator:
    """``execute`` with tcp workers in a thread of the test process, so that ``caplog`` sees its log records."""

    def __init__(self, tmp_path, keys: Keys | None) -> None:
        self.port = free_port()
        self.run_dir = tmp_path / "run"
        opts = ZmqOptions(bind=f"tcp://127.0.0.1:{self.port}", expect=1, insecure=keys is None,
                          server_key=str(keys.server_sec) if keys else None, allow=str(keys.allow) if keys else None,
                          hub=HubOptions(join_timeout_s=PATIENCE_S))
        self.outcome: dict = {}

        def run() -> None:
            try:
                self.outcome["result"] = execute(load_scenario("kernel-heartbeat"), self.run_dir, until=UNTIL,
                                                 agents="tcp", transport=opts)
            except BaseException as err:  # reported by result()
                self.outcome["error"] = err

        self.thread = threading.Thread(target=run, daemon=True)
        self.thread.start()
        self.endpoint = f"tcp://127.0.0.1:{self.port}"
        # the hostile clients try once: wait until the coordinator listens (without connecting, which would be
        # a refusal of its own)
        deadline = time.monotonic() + PATIENCE_S
        while not any(c.laddr and c.laddr.port == self.port and c.status == psutil.CONN_LISTEN
                      for c in psutil.net_connections("tcp4")):
            assert time.monotonic() < deadline and self.thread.is_alive(), self.outcome
            time.sleep(0.02)

    def result(self):
        self.thread.join(PATIENCE_S * 2)
        assert not self.thread.is_alive(), "the coordinator did not finish"
        if "error" in self.outcome:
            raise self.outcome["error"]
        return self.outcome["result"]


def refusals(caplog, reason: str) -> list[logging.LogRecord]:
    return [r for r in caplog.records if getattr(r, "refusal", None) == reason]


def wait_for_refusal(caplog, reason: str, coord: Coordinator) -> logging.LogRecord:
    deadline = time.monotonic() + PATIENCE_S
    while time.monotonic() < deadline:
        found = refusals(caplog, reason)
        if found:
            return found[0]
        assert coord.thread.is_alive(), coord.outcome
        time.sleep(0.02)
    raise AssertionError(f"no {reason} refusal logged within {PATIENCE_S} s: {[r.getMessage() for r in caplog.records]}")


def dealer(ctx: zmq.Context, endpoint: str, server_pub=None, client_sec=None) -> zmq.Socket:
    """A ZeroMQ client that tries once (no reconnection), with CurveZMQ when given keys."""
    s = ctx.socket(zmq.DEALER)
    s.linger = 0
    s.reconnect_ivl = -1
    if server_pub is not None:
        s.curve_serverkey = zmq.auth.load_certificate(str(server_pub))[0]
        s.curve_publickey, s.curve_secretkey = zmq.auth.load_certificate(str(client_sec))
    s.connect(endpoint)
    return s


#: the greeting of a ZMTP 3.0 client with the NULL mechanism (ZeroMQ RFC 23): signature, version, mechanism,
#: as-server, filler. A ZeroMQ client without CURVE sends it, sees the server's CURVE greeting and hangs up, and
#: which side notices first is a race; this one waits, so that the coordinator sees the mismatch itself.
NULL_GREETING = b"\xff" + b"\x00" * 8 + b"\x7f" + b"\x03\x00" + b"NULL".ljust(20, b"\x00") + b"\x00" + b"\x00" * 31


def _no_curve(ctx, coord, keys):
    raw = socket.create_connection(("127.0.0.1", coord.port))
    raw.sendall(NULL_GREETING)
    return raw, f"127.0.0.1:{raw.getsockname()[1]}"


def _unknown_key(ctx, coord, keys):
    s = dealer(ctx, coord.endpoint, keys.server_pub, keys.intruder_sec)
    s.send(b"x")
    return s, key_id(zmq.auth.load_certificate(str(keys.intruder_pub))[0])


def _garbage_on_the_raw_socket(ctx, coord, keys):
    raw = socket.create_connection(("127.0.0.1", coord.port))
    raw.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
    return raw, f"127.0.0.1:{raw.getsockname()[1]}"


def _allowed(ctx, coord, keys):
    return dealer(ctx, coord.endpoint, keys.server_pub, keys.allowed_sec), \
        key_id(zmq.auth.load_certificate(str(keys.allow / "worker.key"))[0])


def _bad_msgpack_after_auth(ctx, coord, keys):
    s, kid = _allowed(ctx, coord, keys)
    s.send(b"\xc1\xc1 not msgpack")
    return s, kid


def _wrong_protocol_version(ctx, coord, keys):
    s, kid = _allowed(ctx, coord, keys)
    s.send(msgpack.packb([wire.PROTOCOL_VERSION + 1, wire.HELLO, 0, {"pid": 1, "host": "h", "protocol": 3}]))
    return s, kid


HOSTILE = {
    "no_curve": (_no_curve, "no CURVE"),
    "unknown_key": (_unknown_key, "unknown key"),
    "bad_handshake": (_garbage_on_the_raw_socket, "bad handshake"),
    "malformed_frame": (_bad_msgpack_after_auth, "malformed frame"),
    "wrong_protocol": (_wrong_protocol_version, "wrong protocol version"),
}


@pytest.mark.parametrize("reason", list(HOSTILE))
def test_a_hostile_peer_is_refused_logged_once_by_address_and_counted_and_the_run_completes(
        tmp_path, caplog, reference_digest, reason):
    make, words = HOSTILE[reason]
    keys = Keys(tmp_path)
    caplog.set_level(logging.WARNING)
    coord = Coordinator(tmp_path, keys)
    ctx = zmq.Context()
    try:
        hostile, expect = make(ctx, coord, keys)
        record = wait_for_refusal(caplog, reason, coord)
        hostile.close()  # a raw socket or a ZeroMQ one
        good = clusteremu("agent", "--connect", coord.endpoint, "--server-key", str(keys.server_pub),
                          "--client-key", str(keys.allowed_sec))
        result = coord.result()
        assert good.wait(timeout=PATIENCE_S) == 0
    finally:
        ctx.destroy(linger=0)  # closes the hostile socket too when the test failed before it did
    message = record.getMessage()
    # A peer refused in the handshake is closed by ZeroMQ itself, in microseconds: bytes that are not ZMTP often
    # before the monitor's accept event is read, and, on a loaded machine, a wrong mechanism or key too; when the
    # kernel keeps no closing entry either, no address is left to give (docs/wire-protocol.md, Refusals). A peer
    # refused after the handshake is always named by its address.
    handshake = reason in ("bad_handshake", "unknown_key", "no_curve")
    named = r"refused (127\.0\.0\.1:\d+|unknown address)[ :]" if handshake else r"refused 127\.0\.0\.1:\d+"
    assert re.search(named, message) and words in message, message
    assert record.name == "clusteremu.hub" and record.levelno == logging.WARNING
    if expect is not None and ":" in expect:
        assert record.peer_address in (expect, "unknown address")  # the raw socket's own port
    elif expect is not None:
        assert record.key_id == expect and f"key {expect}" in message
    assert "\\x" not in message and "b'" not in message  # never raw identity bytes
    assert len(refusals(caplog, reason)) == 1
    assert result.manifest["transport"]["refused_peers"] == {reason: 1}
    assert result.manifest["complete"] and result.digest == reference_digest


def test_repeats_from_one_host_are_counted_and_summarised_not_logged_each(caplog):
    log = logging.getLogger("clusteremu.hub")
    ledger = Refusals(log, "the coordinator")
    caplog.set_level(logging.WARNING)
    for port in (5001, 5002, 5003):
        ledger.refuse(PeerName(f"10.0.0.7:{port}", "3f9a1c2b"), "unknown_key")
    ledger.refuse(PeerName("10.0.0.7:5004"), "bad_handshake", "it closed")
    ledger.refuse(PeerName("10.0.0.8:6001"), "unknown_key")
    assert ledger.counts() == {"unknown_key": 4, "bad_handshake": 1}
    lines = [r.getMessage() for r in caplog.records]
    assert lines == ["the coordinator refused 10.0.0.7:5001 key 3f9a1c2b: unknown key (not in the allow-list)",
                     "the coordinator refused 10.0.0.7:5004: bad handshake: it closed",
                     "the coordinator refused 10.0.0.8:6001: unknown key (not in the allow-list)"]
    caplog.clear()
    ledger.summarise()
    ledger.summarise()  # summarised once
    assert [r.getMessage() for r in caplog.records] == [
        "the coordinator refused 2 more from 10.0.0.7 (unknown key (not in the allow-list)) without logging each"]


def test_a_peer_with_no_address_left_is_a_repeat_of_a_named_one_refused_for_the_same_reason(caplog):
    ledger = Refusals(logging.getLogger("clusteremu.hub"), "the coordinator")
    caplog.set_level(logging.WARNING)
    ledger.refuse(PeerName("unknown address"), "no_curve")  # nobody named yet for this reason: logged
    ledger.refuse(PeerName("127.0.0.1:5001"), "bad_handshake")
    ledger.refuse(PeerName("unknown address"), "bad_handshake")  # the same retrying client, most likely
    ledger.refuse(PeerName("127.0.0.1:5002"), "no_curve")  # an address says more: logged
    assert ledger.counts() == {"no_curve": 2, "bad_handshake": 2}
    assert [r.getMessage() for r in caplog.records] == [
        "the coordinator refused unknown address: no CURVE (its security mechanism is not CurveZMQ, which this "
        "side requires)",
        "the coordinator refused 127.0.0.1:5001: bad handshake",
        "the coordinator refused 127.0.0.1:5002: no CURVE (its security mechanism is not CurveZMQ, which this "
        "side requires)"]
    caplog.clear()
    ledger.summarise()
    assert [r.getMessage() for r in caplog.records] == [
        "the coordinator refused 1 more from 127.0.0.1 (bad handshake) without logging each"]


def test_a_denied_key_whose_connection_was_gone_before_it_could_be_named_is_named_by_the_zap_request(
        tmp_path, caplog, monkeypatch):
    # The race of a loaded machine, made certain: by the time the monitor reads the accept, the descriptor no
    # longer names the peer and the kernel's table holds no closing entry for it. The ZAP request that denied the
    # key carried the peer's IP, so the refusal still names the host and the key (without the port).
    from clusteremu.emulator.transport import monitor as monitor_module
    from clusteremu.emulator.transport.curve import secure_server
    from clusteremu.emulator.transport.monitor import ConnectionWatch

    monkeypatch.setattr(monitor_module, "peer_address", lambda fd: "unknown address")
    monkeypatch.setattr(monitor_module, "closed_peers", lambda port: [])
    caplog.set_level(logging.WARNING)
    keys = Keys(tmp_path)
    ctx = zmq.Context()
    router = ctx.socket(zmq.ROUTER)
    router.linger = 0
    auth = secure_server(ctx, router, str(keys.server_sec), str(keys.allow))
    ledger = Refusals(logging.getLogger("clusteremu.hub"), "the coordinator")
    watch = ConnectionWatch(router, ledger, curve=True, zap=auth)
    port = router.bind_to_random_port("tcp://127.0.0.1")
    intruder = dealer(ctx, f"tcp://127.0.0.1:{port}", keys.server_pub, keys.intruder_sec)
    try:
        deadline = time.monotonic() + PATIENCE_S
        while not ledger.counts() and time.monotonic() < deadline:
            watch.pump()
            time.sleep(0.02)
        assert ledger.counts() == {"unknown_key": 1}
        kid = key_id(zmq.auth.load_certificate(str(keys.intruder_pub))[0])
        assert [r.getMessage() for r in caplog.records] == [
            f"the coordinator refused 127.0.0.1 key {kid}: unknown key (not in the allow-list)"]
    finally:
        intruder.close()
        auth.stop()
        watch.close()
        router.close()
        ctx.term()


def test_the_key_id_is_the_start_of_the_sha256_of_the_z85_key_and_keygen_prints_it(tmp_path, capsys):
    import hashlib

    from clusteremu.cli import main

    assert main(["agent", "keygen", "--out", str(tmp_path), "--name", "w1"]) == 0
    public = zmq.auth.load_certificate(str(tmp_path / "w1.key"))[0]
    assert key_id(public) == hashlib.sha256(public).hexdigest()[:8]
    assert f"key id {key_id(public)}" in capsys.readouterr().out


def test_a_worker_inbox_refuses_a_peer_without_the_run_key_naming_its_address_and_key(caplog):
    caplog.set_level(logging.WARNING)
    ctx = zmq.Context()
    ledger = Refusals(logging.getLogger("clusteremu.mesh"), "worker 0's mesh inbox")
    run_pub, run_sec = mesh_keypair()
    inbox, endpoint, auth = bind_inbox(ctx, None, "tcp://127.0.0.1:9", (run_pub, run_sec), 1 << 20, ledger)
    stranger_pub, stranger_sec = zmq.curve_keypair()
    push = ctx.socket(zmq.PUSH)
    push.linger = 0
    push.reconnect_ivl = -1
    secure_push(push, stranger_pub, stranger_sec)
    push.curve_serverkey = run_pub  # it knows the inbox's public key, not the run's secret one
    push.connect(endpoint)
    try:
        deadline = time.monotonic() + PATIENCE_S
        while not ledger.counts() and time.monotonic() < deadline:
            time.sleep(0.02)
        assert ledger.counts() == {"unknown_key": 1}
        [record] = [r for r in caplog.records if getattr(r, "refusal", None) == "unknown_key"]
        assert re.fullmatch(rf"worker 0's mesh inbox refused 127\.0\.0\.1(:\d+)? key {key_id(stranger_pub)}: "
                            r"unknown key \(not in the allow-list\)", record.getMessage())
    finally:
        push.close()
        auth.stop()
        inbox.close()
        ctx.term()


def _tcp_hub(tmp_path, secure=None):
    from clusteremu.emulator.transport.hub import Hub

    return Hub("tcp://127.0.0.1:0", HubOptions(heartbeat_s=0.05, timeout_s=2.0, join_timeout_s=PATIENCE_S), secure)


def _hello(sock: zmq.Socket, pid: int) -> None:
    sock.send(wire.encode(wire.HELLO, 0, {"pid": pid, "host": "h", "protocol": wire.PROTOCOL_VERSION}))


def test_a_worker_whose_connection_closes_mid_run_is_named_by_address_and_counted(tmp_path, caplog):
    from clusteremu.base.errors import RunFailure

    caplog.set_level(logging.WARNING)
    hub = _tcp_hub(tmp_path)
    ctx = zmq.Context()
    try:
        w = ctx.socket(zmq.DEALER)
        w.linger = 0
        w.identity = b"w1"
        w.connect(hub.endpoint)
        _hello(w, 4242)
        [peer] = hub.wait_for_workers(1)
        peer.agents = ["broker-1"]
        hub.call(peer, wire.RUN, {"endpoints": [], "until": 1.0})
        w.close()
        with pytest.raises(RunFailure, match=r"worker 0 \(pid 4242 on h, 127\.0\.0\.1:\d+; agents broker-1\) has "
                                             r"been silent for .* its connection closed \d+\.\d s ago"):
            hub.wait(peer)
        assert hub.refusals.counts() == {"disconnected": 1}
        [record] = [r for r in caplog.records if getattr(r, "refusal", None) == "disconnected"]
        assert re.match(r"the coordinator refused 127\.0\.0\.1:\d+: disconnected mid-run", record.getMessage())
    finally:
        hub.close()
        ctx.destroy(linger=0)


def test_a_second_peer_claiming_a_joined_workers_identity_with_another_key_fails_the_run(tmp_path, caplog):
    from clusteremu.base.errors import RunFailure
    from clusteremu.emulator.transport.curve import secure_server

    server_pub, server_sec = keygen(tmp_path / "server", "server")
    a_pub, a_sec = keygen(tmp_path / "allowed", "a")
    b_pub, b_sec = keygen(tmp_path / "allowed", "b")
    caplog.set_level(logging.WARNING)
    hub = _tcp_hub(tmp_path, lambda c, s: secure_server(c, s, str(server_sec), str(tmp_path / "allowed")))
    ctx = zmq.Context()
    try:
        socks = []  # two workers' main sockets with the same identity, each with a key the coordinator allows
        for sec in (a_sec, b_sec):
            s = ctx.socket(zmq.DEALER)
            s.linger = 0
            s.identity = b"w1"
            s.curve_serverkey = zmq.auth.load_certificate(str(server_pub))[0]
            s.curve_publickey, s.curve_secretkey = zmq.auth.load_certificate(str(sec))
            socks.append(s)
        socks[0].connect(hub.endpoint)
        _hello(socks[0], 7)
        [peer] = hub.wait_for_workers(1)
        assert peer.name.key_id == key_id(zmq.auth.load_certificate(str(a_pub))[0])
        socks[1].connect(hub.endpoint)
        socks[1].send(wire.encode(wire.HEARTBEAT, 0, {}))
        b_id = key_id(zmq.auth.load_certificate(str(b_pub))[0])
        with pytest.raises(RunFailure, match=rf"worker 0 \(pid 7 on h, 127\.0\.0\.1:\d+ key {peer.name.key_id}; "
                                             rf".*identity was taken over by 127\.0\.0\.1:\d+ key {b_id}"):
            deadline = time.monotonic() + PATIENCE_S
            while time.monotonic() < deadline:
                hub._pump(0.05)
        assert hub.refusals.counts() == {"identity_taken": 1}
    finally:
        hub.close()
        ctx.destroy(linger=0)


def test_the_refusals_of_the_workers_inboxes_are_added_to_the_coordinators_in_the_manifest(tmp_path):
    from collections import Counter

    from clusteremu.emulator.transport.hub import Hub, ZmqLink
    from clusteremu.emulator.transport.launch import ZmqWorkers

    hub = Hub(f"ipc://{tmp_path}/hub.sock", HubOptions(heartbeat_s=0.05, timeout_s=5.0, join_timeout_s=PATIENCE_S))
    w = hub.ctx.socket(zmq.DEALER)
    w.linger = 0
    w.identity = b"w1"
    w.connect(hub.endpoint)
    try:
        _hello(w, 11)
        [peer] = hub.wait_for_workers(1)
        peer.mesh = "unix:/nowhere"
        workers = ZmqWorkers.__new__(ZmqWorkers)
        workers.hub, workers._links, workers._mesh_refused = hub, [ZmqLink(hub, peer)], Counter()
        w.send(b"\xc1 not msgpack")  # refused by the coordinator itself

        def answer() -> None:
            assert w.poll(int(PATIENCE_S * 1000))
            _, call, _ = wire.decode(w.recv(), wire.TO_WORKER, 1 << 20)
            w.send(wire.encode(wire.DONE, call, {
                "windows": 1, "messages": 0, "dropped": 0, "events": 0, "virtual_time": 1.0, "drops": [],
                "frames": 0, "bytes": 0, "advance_s": 0.0, "exchange_s": 0.0, "loop_s": 0.0,
                "refused": {"unknown_key": 2, "no_curve": 1}}))

        t = threading.Thread(target=answer)
        t.start()
        [stats] = workers.run(1.0)
        t.join()
        assert stats.refused == {"unknown_key": 2, "no_curve": 1}
        report = workers.report()
        assert report["refused_peers"] == {"malformed_frame": 1, "no_curve": 1, "unknown_key": 2}
        assert report["dropped_frames"] == {"invalid": 1}  # as older readers know it
    finally:
        w.close()
        hub.close()

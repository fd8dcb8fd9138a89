"""tcp workers on 127.0.0.1 with CurveZMQ: only allowed keys join; bad frames are refused; the trace is the same."""
from __future__ import annotations

import json
import os
import re
import select
import time

import msgpack
import zmq
import zmq.auth

from clusteremu.emulator.runner import execute
from clusteremu.emulator.transport import wire
from clusteremu.emulator.transport.curve import keygen
from clusteremu.emulator.transport.refusals import REASONS
from clusteremu.scenarios.loader import load_scenario

from .proc_helpers import clusteremu, free_port

SCENARIO = ["kernel-heartbeat", "--until", "120", "--quiet", "--format", "json"]


def keys(tmp_path):
    server_pub, server_sec = keygen(tmp_path / "server", "server")
    allowed_pub, allowed_sec = keygen(tmp_path / "allowed", "worker")
    _, intruder_sec = keygen(tmp_path / "intruder", "intruder")
    return server_pub, server_sec, tmp_path / "allowed", allowed_sec, intruder_sec


def coordinator(tmp_path, port, server_sec, allow, *extra):
    return clusteremu("run", *SCENARIO, "--agents", "tcp", "--bind", f"tcp://127.0.0.1:{port}", "--expect", "1",
                      "--server-key", str(server_sec), "--allow", str(allow), "--join-timeout", "60",
                      "--out", str(tmp_path / "run"), *extra)


def worker(port, server_pub, client_sec, *extra):
    return clusteremu("agent", "--connect", f"tcp://127.0.0.1:{port}", "--server-key", str(server_pub),
                      "--client-key", str(client_sec), *extra)


def reference_digest(tmp_path) -> str:
    return execute(load_scenario("kernel-heartbeat"), tmp_path / "ref", until=120).digest


def test_an_unauthenticated_worker_cannot_join_and_an_allowed_one_runs_the_scenario(tmp_path):
    server_pub, server_sec, allow, allowed_sec, intruder_sec = keys(tmp_path)
    port = free_port()
    coord = coordinator(tmp_path, port, server_sec, allow)
    intruder = worker(port, server_pub, intruder_sec, "--join-timeout", "3", "--timeout", "2")
    plain = clusteremu("agent", "--connect", f"tcp://127.0.0.1:{port}", "--insecure", "--join-timeout", "3",
                       "--timeout", "2")
    for p in (intruder, plain):
        _, err = p.communicate(timeout=30)
        assert p.returncode == 3, err  # never heard from the coordinator: gave up
        assert "silent" in err
    assert coord.poll() is None  # still waiting for a worker it accepts
    good = worker(port, server_pub, allowed_sec)
    out, err = coord.communicate(timeout=60)
    assert coord.returncode == 0, err
    assert good.wait(timeout=30) == 0
    summary = json.loads(out)
    assert summary["complete"] and summary["digest"] == reference_digest(tmp_path)
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["placement"]["workers"] == 1
    assert manifest["transport"]["dropped_frames"] == {}  # the intruders never got past the handshake
    # ... but they were refused there: each retried for 3 s, and each reason was logged once with the address.
    # The client without CURVE sees the mismatch too and hangs up: whichever side notices first, the coordinator
    # says "no CURVE" or (the connection broke under it) "bad handshake".
    refused = manifest["transport"]["refused_peers"]
    assert refused["unknown_key"] >= 1 and refused.get("no_curve", 0) + refused.get("bad_handshake", 0) >= 1
    assert set(refused) <= {"unknown_key", "no_curve", "bad_handshake"}
    # (a connection ZeroMQ reset before the monitor read its accept has no address left: see test_refusals)
    lines = [line for line in err.splitlines()
             if re.search(r"the coordinator refused (127\.0\.0\.1[: ]|unknown address:)", line)]
    # every reason is logged, and no host twice for one reason; a peer gone before it could be named is only
    # logged for a reason no named peer was (which of the two a retrying client hits first is a race)
    assert {r for r in refused if any(REASONS[r] in line for line in lines)} == set(refused)
    for reason in refused:
        hosts = [re.search(r"refused (127\.0\.0\.1|unknown address)", line)[1]
                 for line in lines if REASONS[reason] in line]
        assert len(hosts) == len(set(hosts)) and "unknown address" not in hosts[1:], lines
    # the intruder is named, with its key, even when its connection was gone before the monitor read its address
    # (the ZAP request that denied it carried its IP)
    [denied] = [line for line in lines if "unknown key" in line]
    assert re.search(r"refused 127\.0\.0\.1(:\d+)? key \w+: unknown key", denied), denied


def test_garbage_and_oversized_frames_are_dropped_and_the_run_completes_with_the_right_digest(tmp_path):
    server_pub, server_sec, allow, allowed_sec, _ = keys(tmp_path)
    port = free_port()
    coord = coordinator(tmp_path, port, server_sec, allow, "--max-frame-bytes", "1000000")
    # an authenticated peer that only ever sends nonsense
    ctx = zmq.Context()
    rogue = ctx.socket(zmq.DEALER)
    rogue.linger = 2000
    pub, sec = zmq.auth.load_certificate(str(allowed_sec))
    rogue.curve_serverkey, _ = zmq.auth.load_certificate(str(server_pub))
    rogue.curve_publickey, rogue.curve_secretkey = pub, sec
    rogue.connect(f"tcp://127.0.0.1:{port}")
    rogue.send(b"\xc1\xc1 definitely not msgpack")
    rogue.send(b"\x00" * 2_000_000)
    rogue.send(msgpack.packb([wire.PROTOCOL_VERSION + 1, wire.HELLO, 0, {}]))
    rogue.send(wire.encode(wire.DONE, 3, {}))
    rogue.send_multipart([b"a", b"b"])
    # the run itself takes a few milliseconds once its worker is there: let the coordinator see the rogue's
    # five frames first (it logs the first of each reason: the two malformed frames make one line)
    seen = _read_lines(coord, lambda line: "the coordinator refused 127.0.0.1:" in line, 4, timeout_s=30)
    good = worker(port, server_pub, allowed_sec)
    try:
        out, err = coord.communicate(timeout=60)
    finally:
        rogue.close()
        ctx.term()
    err = "".join(seen) + err
    assert coord.returncode == 0, err
    assert good.wait(timeout=30) == 0
    assert json.loads(out)["digest"] == reference_digest(tmp_path)
    transport = json.loads((tmp_path / "run" / "manifest.json").read_text())["transport"]
    assert transport["dropped_frames"] == {"invalid": 2, "oversized": 1, "unknown peer": 1, "garbage": 1}
    assert transport["refused_peers"] == {"malformed_frame": 2, "oversized": 1, "wrong_protocol": 1,
                                          "unknown_worker": 1}
    assert "oversized frame: 2000000 bytes" in err and "unknown protocol version" in err
    assert "refused 1 more from 127.0.0.1 (malformed frame)" in err  # the repeat, summarised at the end


def _read_lines(proc, wanted, count: int, timeout_s: float) -> list[str]:
    """``proc``'s stderr up to the ``count``-th line that is ``wanted`` (fails after ``timeout_s``). Reads the raw
    descriptor, so that nothing waits in the text wrapper's buffer for ``communicate`` to miss."""
    text = ""
    fd = proc.stderr.fileno()
    deadline = time.monotonic() + timeout_s
    while sum(1 for line in text.splitlines() if wanted(line)) < count:
        left = deadline - time.monotonic()
        assert left > 0 and select.select([fd], [], [], left)[0], text
        chunk = os.read(fd, 65536)
        assert chunk, text
        text += chunk.decode()
    return [text]


def test_two_insecure_tcp_workers_give_the_in_process_digest_of_a_pulsar_scenario(tmp_path):
    port = free_port()
    coord = clusteremu("run", "avgshedder-homogeneous", "--until", "120", "--quiet", "--format", "json",
                       "--agents", "tcp", "--bind", f"tcp://127.0.0.1:{port}", "--expect", "2", "--insecure",
                       "--join-timeout", "60", "--out", str(tmp_path / "run"))
    workers = [clusteremu("agent", "--connect", f"tcp://127.0.0.1:{port}", "--insecure") for _ in range(2)]
    out, err = coord.communicate(timeout=90)
    assert coord.returncode == 0, err
    assert [w.wait(timeout=30) for w in workers] == [0, 0]
    ref = execute(load_scenario("avgshedder-homogeneous"), tmp_path / "ref", until=120)
    assert json.loads(out)["digest"] == ref.digest
    assert sorted(json.loads((tmp_path / "run" / "manifest.json").read_text())["events"]["writers"]) == \
        ["net", "w000", "w001"]


def test_two_curve_workers_exchange_their_windows_encrypted_and_give_the_in_process_digest(tmp_path):
    # the workers' mesh is CurveZMQ too, with a key pair the coordinator makes for the run
    server_pub, server_sec, allow, allowed_sec, _ = keys(tmp_path)
    port = free_port()
    coord = clusteremu("run", "avgshedder-homogeneous", "--until", "120", "--quiet", "--format", "json",
                       "--agents", "tcp", "--bind", f"tcp://127.0.0.1:{port}", "--expect", "2",
                       "--server-key", str(server_sec), "--allow", str(allow), "--join-timeout", "60",
                       "--out", str(tmp_path / "run"))
    workers = [worker(port, server_pub, allowed_sec) for _ in range(2)]
    out, err = coord.communicate(timeout=90)
    assert coord.returncode == 0, err
    assert [w.wait(timeout=30) for w in workers] == [0, 0]
    ref = execute(load_scenario("avgshedder-homogeneous"), tmp_path / "ref", until=120)
    assert json.loads(out)["digest"] == ref.digest
    # the workers reached each other's inboxes with the run's key: nobody refused
    assert json.loads((tmp_path / "run" / "manifest.json").read_text())["transport"]["refused_peers"] == {}

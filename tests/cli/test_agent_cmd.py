"""``clusteremu agent`` and the ``run`` flags of the worker transports: keygen, refusals, ipc permissions."""
from __future__ import annotations

import os
import re
import stat

import psutil
import pytest
import zmq.auth

from clusteremu.cli import main
from clusteremu.emulator.runner import execute
from clusteremu.scenarios.loader import load_scenario


def test_keygen_writes_a_curve_key_pair_with_a_private_secret(tmp_path, capsys):
    assert main(["agent", "keygen", "--out", str(tmp_path), "--name", "w1"]) == 0
    public, secret = zmq.auth.load_certificate(str(tmp_path / "w1.key_secret"))
    assert zmq.auth.load_certificate(str(tmp_path / "w1.key"))[0] == public and secret
    assert stat.S_IMODE(os.stat(tmp_path / "w1.key_secret").st_mode) == 0o600
    assert "w1.key" in capsys.readouterr().out
    assert main(["agent", "keygen", "--out", str(tmp_path), "--name", "w1"]) == 2  # never overwrites a key


@pytest.mark.parametrize("argv, where", [
    (["agent"], "--connect"),
    (["agent", "--connect", "udp://x"], "--connect udp://x"),
    (["agent", "--connect", "tcp://127.0.0.1:1"], "CurveZMQ needs --server-key"),
    (["agent", "--connect", "ipc:///tmp/x", "--timeout", "0.1"], "--timeout"),
    (["run", "kernel-heartbeat", "--agents", "tcp", "--bind", "tcp://127.0.0.1:0"], "--expect"),
    (["run", "kernel-heartbeat", "--agents", "tcp", "--bind", "tcp://127.0.0.1:0", "--expect", "1"],
     "CurveZMQ needs --server-key"),
    (["run", "kernel-heartbeat", "--agents", "tcp", "--expect", "1", "--insecure"], "--bind"),
    (["run", "kernel-heartbeat", "--agents", "procs:0"], "--agents procs:0"),
    (["run", "kernel-heartbeat", "--agents", "procs:2", "--worker-timeout", "0.2"], "--worker-timeout"),
])
def test_bad_flags_exit_2_naming_the_flag(tmp_path, capsys, argv, where):
    assert main([*argv, "--out", str(tmp_path / "r")] if argv[0] == "run" else argv) == 2
    assert where in capsys.readouterr().err


def test_local_workers_talk_over_an_owner_only_ipc_socket(tmp_path):
    seen = {}

    def progress(t, stats):
        for child in psutil.Process().children():
            m = re.search(r"ipc://(\S+)", " ".join(child.cmdline()))
            if m and not seen:
                path = m.group(1)
                seen["sock"] = stat.S_IMODE(os.stat(path).st_mode)
                seen["dir"] = stat.S_IMODE(os.stat(os.path.dirname(path)).st_mode)
                seen["path"] = path

    r = execute(load_scenario("kernel-heartbeat"), tmp_path / "r", until=30, agents="procs:2", progress=progress)
    assert r.manifest["complete"]
    assert seen["sock"] == 0o600 and seen["dir"] == 0o700
    assert not os.path.exists(seen["path"])  # the private directory is removed with the run

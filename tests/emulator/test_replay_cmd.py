"""`clusteremu replay` confirms a run and catches a tampered event file."""
from __future__ import annotations

import msgpack

from clusteremu.cli import main
from clusteremu.emulator.trace.framing import frame, iter_payloads, read_header


def make(tmp_path, capsys):
    out = tmp_path / "run"
    assert main(["run", "kernel-heartbeat", "--out", str(out), "--until", "150", "--quiet",
                 "--set", "cluster.members=3"]) == 0
    capsys.readouterr()
    return out


def test_replay_confirms_an_untouched_run(tmp_path, capsys):
    out = make(tmp_path, capsys)
    assert main(["replay", str(out)]) == 0
    assert "replay identical" in capsys.readouterr().out


def test_replay_names_the_first_event_that_was_tampered_with(tmp_path, capsys):
    out = make(tmp_path, capsys)
    seg = sorted((out / "events").glob("w000-*.seg"))[0]
    buf = seg.read_bytes()
    _meta, start = read_header(buf)
    records = [bytes(p) for _, p in iter_payloads(buf, start)]
    victim = next(i for i, p in enumerate(records) if msgpack.unpackb(p)[3] == "heartbeat_sent")
    rec = msgpack.unpackb(records[victim])
    rec[4]["n"] = 999  # a well-framed record with a valid CRC: only the digest can tell
    records[victim] = msgpack.packb(rec)
    seg.write_bytes(buf[:start] + b"".join(frame(p) for p in records))
    assert main(["replay", str(out)]) == 1
    err = capsys.readouterr().err
    assert "do not match the manifest's digest" in err
    assert "first differing event" in err and "n=999" in err


def test_replay_of_an_unfinished_run_is_refused(tmp_path, capsys):
    out = make(tmp_path, capsys)
    m = (out / "manifest.json").read_text().replace('"complete": true', '"complete": false')
    (out / "manifest.json").write_text(m)
    assert main(["replay", str(out)]) == 2
    assert "did not finish" in capsys.readouterr().err

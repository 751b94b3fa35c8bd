"""Cache problems are explained, not fatal: a damaged database is moved aside and a fresh one
started; an unusable folder is one line naming it (exit 2); many processes can share one cache."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys

import pytest

from gaze.cli.main import run
from tests.cli.test_cli import one_line_error


def demo(capsys) -> tuple[int, dict | None, str]:
    code = run(["diagnose", "--demo", "--model", "scripted:auto", "--json"])
    captured = capsys.readouterr()
    return code, json.loads(captured.out) if code == 0 else None, captured.err


@pytest.mark.parametrize(
    "damage",
    [
        lambda p: p.write_bytes(b"this is not a database at all" * 100),
        lambda p: p.write_bytes(p.read_bytes()[: len(p.read_bytes()) // 2]),
        lambda p: p.write_bytes(p.read_bytes()[:100] + b"\0" * 4096 + p.read_bytes()[4196:]),
    ],
    ids=["garbage", "truncated", "clobbered"],
)
def test_a_damaged_cache_is_moved_aside_and_the_run_goes_on(damage, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("GAZE_CACHE_DIR", str(tmp_path))
    assert demo(capsys)[0] == 0
    db = tmp_path / "responses.sqlite"
    sqlite3.connect(db).execute("PRAGMA wal_checkpoint(TRUNCATE)").close()
    damage(db)
    code, report, err = demo(capsys)
    assert code == 0, err
    assert "moved to responses.damaged-" in err and "started afresh" in err
    assert list(tmp_path.glob("responses.damaged-*.sqlite"))
    assert report["manifest"]["cache_hits"] == 0  # a fresh cache
    assert demo(capsys)[1]["manifest"]["cache_hits"] > 0  # and it works


@pytest.mark.parametrize("where", ["a file", "an impossible folder"])
def test_an_unusable_cache_folder_is_one_line_and_exit_2(where, tmp_path, monkeypatch, capsys):
    target = tmp_path / "cache-file"
    if where == "a file":
        target.write_text("not a folder")
    else:
        target = "/proc/self/gaze-cache"  # not even root can make a folder there
    monkeypatch.setenv("GAZE_CACHE_DIR", str(target))
    code, _, err = demo(capsys)
    assert code == 2
    line = one_line_error(err)
    assert str(target) in line and "--no-cache" in line
    assert run(["diagnose", "--demo", "--model", "scripted:auto", "--json", "--no-cache"]) == 0


def test_many_processes_share_one_cache(tmp_path):
    script = (
        "import sys; from gaze.cli.main import run; "
        "sys.exit(run(['diagnose', '--demo', '--model', 'scripted:auto', '--json']))"
    )
    env = {"GAZE_CACHE_DIR": str(tmp_path), "PATH": "/usr/bin:/bin"}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", script],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        for _ in range(4)
    ]
    errors = [p.communicate(timeout=120)[1].decode() for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0, 0], errors
    mode = sqlite3.connect(tmp_path / "responses.sqlite").execute("PRAGMA journal_mode")
    assert mode.fetchone()[0] == "wal"


FULL_DISK = """
import resource, signal, sys
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # writes past the limit fail instead of killing
resource.setrlimit(resource.RLIMIT_FSIZE, ({limit}, {limit}))
from gaze.cli.main import run
sys.exit(run(["diagnose", "--demo", "--model", "scripted:auto", "--json"]))
"""


@pytest.mark.parametrize(
    ("limit", "code", "said"),
    [
        (0, 2, "the response cache at {dir} is not usable"),  # full before it can open
        (45_000, 0, "cannot write the response cache at {dir}"),  # fills up mid-run
    ],
)
def test_a_full_disk_is_named_at_open_and_loses_no_work_mid_run(limit, code, said, tmp_path):
    env = {"GAZE_CACHE_DIR": str(tmp_path / "cache"), "PATH": "/usr/bin:/bin"}
    proc = subprocess.run(
        [sys.executable, "-c", FULL_DISK.format(limit=limit)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert proc.returncode == code, proc.stderr
    assert said.format(dir=tmp_path / "cache") in proc.stderr
    assert "Traceback" not in proc.stderr
    if code == 0:
        assert json.loads(proc.stdout)["clip_id"] == "demo"  # the report is complete
    else:
        assert "--no-cache" in proc.stderr and proc.stdout == ""

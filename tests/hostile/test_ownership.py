"""Nothing a user owns is lost or written over, on every command (issue 39): each case runs a
subcommand on a folder of the user's files and asserts one line on stderr (exit 2, no
traceback), every file the user had byte-identical afterwards, and nothing new outside the
output the user named.

The workspace holds what a researcher keeps: a manifest, predictions, curves, a GLiDE pair, a
RoboJudge gold file, a forge folder with its manifest and clips, a finished run, an HTML page and
a link."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Callable
from pathlib import Path

import pytest

from gaze.cli.main import run
from tests.cli.test_cli import one_line_error
from tests.cli.test_judge_commands import jsonl, manifest_rows
from tests.formats.test_glide import GROUNDTRUTH, REPORT
from tests.formats.test_robojudge_files import gold_row

Args = Callable[[Path], list[str]]


def _deep(depth: int = 5000) -> str:
    return "[" * depth + "]" * depth


@pytest.fixture
def home(tmp_path: Path, forge_dir: Path) -> Path:
    """The user's folder; every file in it is theirs."""
    h = tmp_path / "home"
    h.mkdir()
    jsonl(h / "m.jsonl", manifest_rows())
    jsonl(h / "p.jsonl", [{"clip_id": r["clip_id"], "events": [], "pa": 3, "ia": 3}
                          for r in manifest_rows()])  # fmt: skip
    jsonl(h / "c.jsonl", [{"case_id": "a", "model": "m", "task": "t", "progress": [0, 1, 2, 3]}])
    (h / "groundtruth.json").write_text(json.dumps(GROUNDTRUTH))
    (h / "batch_report.json").write_text(json.dumps(REPORT))
    jsonl(h / "gold.jsonl", [gold_row("data__x1", 2, 3), gold_row("data__x2", 4, 4)])
    (h / "page.html").write_text("<!doctype html><title>my notes</title><p>months of work</p>")
    (h / "notes.txt").write_text("my notes\n")
    (h / "link.json").symlink_to(h / "notes.txt")
    forged = h / "forged"
    forged.mkdir()
    clip = next(forge_dir.glob("*.mp4"))
    (forged / clip.name).write_bytes(clip.read_bytes())
    (forged / "manifest.jsonl").write_text((forge_dir / "manifest.jsonl").read_text())
    clips = h / "clips_only"
    clips.mkdir()
    (clips / clip.name).write_bytes(clip.read_bytes())
    (h / "clip.mp4").write_bytes(clip.read_bytes())
    (h / "loop.mp4").symlink_to(h / "loop.mp4")
    bad = {
        "deep_manifest.jsonl": _deep() + "\n",
        "deep_predictions.jsonl": json.dumps({"clip_id": "a", "events": []})[:-1]
        + ', "x": '
        + _deep()
        + "}\n",
        "events_3.jsonl": json.dumps({**manifest_rows()[0], "events": 3}) + "\n",
        "events_null.jsonl": json.dumps({**manifest_rows()[0], "events": None}) + "\n",
        "events_true.jsonl": json.dumps({**manifest_rows()[0], "events": True}) + "\n",
        "pred_events_3.jsonl": json.dumps({"clip_id": "a", "events": 3}) + "\n",
        "nan_fps.jsonl": json.dumps({**manifest_rows()[0], "fps": float("nan")}) + "\n",
        "nan_pa.jsonl": json.dumps({**manifest_rows()[0], "pa": float("nan")}) + "\n",
        "deep_curves.jsonl": '{"case_id": "a", "progress": ' + _deep() + "}\n",
    }
    for name, text in bad.items():
        (h / name).write_text(text)
    for name, clip_id in (("escaping.jsonl", "../escaped"), ("absolute.jsonl", str(h / "abs"))):
        jsonl(h / name, [{"clip_id": clip_id, "events": []}])
    (h / "huge.png").write_bytes(_png_header(65536, 65536))
    os.mkfifo(h / "pipe")
    (h / "deep_scores.json").write_text('{"recall": ' + _deep() + "}")
    user = h / "home_files"
    user.mkdir()
    (user / "thesis.tex").write_text("\\section{Results}\n")
    _finished_run(h / "run", forged)
    return h


def _png_header(width: int, height: int) -> bytes:
    """A PNG whose header claims ``width`` x ``height`` and whose data is one empty chunk."""
    import struct
    import zlib

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IEND", b"")


def _finished_run(rundir: Path, forged: Path) -> None:
    """A run of the pixel method over the forge folder's one clip, as ``bench run`` leaves it."""
    manifest = forged / "manifest.jsonl"
    row = next(json.loads(x) for x in manifest.read_text().splitlines()
               if (forged / json.loads(x)["video"]).is_file())  # fmt: skip
    row["video"] = str(forged / row["video"])
    one = rundir.parent / "one_clip.jsonl"
    one.write_text(json.dumps(row) + "\n")
    assert run(["bench", "run", str(one), "--out", str(rundir), "--method", "pixel"]) == 0


def _snapshot(root: Path) -> dict[str, bytes | str]:
    out: dict[str, bytes | str] = {}
    for path in sorted(root.rglob("*")):
        rel = str(path.relative_to(root))
        if path.is_symlink():
            out[rel] = "link -> " + os.readlink(path)
        elif path.is_file():
            out[rel] = path.read_bytes()
        elif path.is_dir():
            out[rel] = "dir"
        else:
            out[rel] = f"special {stat.S_IFMT(path.lstat().st_mode)}"
    return out


def H(name: str) -> Callable[[Path], str]:  # noqa: N802  (reads as a path in the table)
    return lambda h: str(h / name)


def _case(*parts: str | Callable[[Path], str]) -> Args:
    return lambda h: [p(h) if callable(p) else p for p in parts]


CASES: dict[str, Args] = {
    # an output that is one of the command's inputs
    "convert glide groundtruth onto itself": _case(
        "convert", H("groundtruth.json"), "--from", "glide", "--out", H("groundtruth.json")),
    "convert glide report onto itself": _case(
        "convert", H("batch_report.json"), "--from", "glide", "--out", H("batch_report.json")),
    "convert robojudge gold onto itself": _case(
        "convert", H("gold.jsonl"), "--from", "robojudge", "--out", H("gold.jsonl")),
    "convert predictions to robojudge onto itself": _case(
        "convert", H("p.jsonl"), "--to", "robojudge", "--out", H("p.jsonl")),
    "convert manifest to glide onto itself": _case(
        "convert", H("m.jsonl"), "--to", "glide", "--out", H("m.jsonl")),
    "convert manifest to prm onto itself": _case(
        "convert", H("m.jsonl"), "--to", "prm", "--out", H("m.jsonl")),
    "convert summary onto the source": _case(
        "convert", H("groundtruth.json"), "--from", "glide", "--out", H("new.jsonl"),
        "--summary", H("groundtruth.json")),
    "convert summary onto the output": _case(
        "convert", H("groundtruth.json"), "--from", "glide", "--out", H("new.jsonl"),
        "--summary", H("new.jsonl")),
    "bench score onto the manifest": _case(
        "bench", "score", H("m.jsonl"), H("p.jsonl"), "--out", H("m.jsonl")),
    "bench score onto the predictions": _case(
        "bench", "score", H("m.jsonl"), H("p.jsonl"), "--out", H("p.jsonl")),
    "bench screen onto the manifest": _case(
        "bench", "screen", H("m.jsonl"), H("p.jsonl"), "--out", H("m.jsonl")),
    "bench screen onto the predictions": _case(
        "bench", "screen", H("m.jsonl"), H("p.jsonl"), "--out", H("p.jsonl")),
    "bench agreement onto the manifest": _case(
        "bench", "agreement", H("m.jsonl"), H("p.jsonl"), "--out", H("m.jsonl")),
    "bench agreement onto the predictions": _case(
        "bench", "agreement", H("m.jsonl"), H("p.jsonl"), "--out", H("p.jsonl")),
    "bench direction onto the manifest": _case(
        "bench", "direction", H("m.jsonl"), H("c.jsonl"), "--out", H("m.jsonl")),
    "bench direction onto the curves": _case(
        "bench", "direction", H("m.jsonl"), H("c.jsonl"), "--out", H("c.jsonl")),
    "progress metrics onto the curves": _case(
        "progress", "metrics", H("c.jsonl"), "--out", H("c.jsonl")),
    "diagnose report onto the clip": _case(
        "diagnose", H("clip.mp4"), "-i", "pick", "--out", H("clip.mp4")),
    "bench run into the manifest file": _case(
        "bench", "run", H("forged/manifest.jsonl"), "--out", H("forged/manifest.jsonl"),
        "--method", "pixel"),
    "bench run into a link": _case(
        "bench", "run", H("forged/manifest.jsonl"), "--out", H("link.json"), "--method", "pixel"),
    "bench score judged pairs onto the manifest": _case(
        "bench", "score", H("m.jsonl"), H("p.jsonl"), "--out", H("s.json"), "--judge", "llm",
        "--model", "scripted:auto", "--write-judged", H("m.jsonl")),
    "convert curves onto the source": _case(
        "convert", H("groundtruth.json"), "--from", "glide", "--out", H("new.jsonl"),
        "--curves", H("groundtruth.json")),
    "diagnose HTML onto its own JSON report": _case(
        "diagnose", H("clip.mp4"), "-i", "pick", "--out", H("r.json"), "--html", H("r.json")),
    "bench annotators onto the first manifest": _case(
        "bench", "annotators", H("m.jsonl"), H("p.jsonl"), "--out", H("m.jsonl")),
    "review labels onto the manifest it reviews": _case(
        "review", H("forged/manifest.jsonl"), "--out", H("forged/manifest.jsonl"),
        "--annotator", "a"),
    "review labels onto a link": _case(
        "review", H("forged/manifest.jsonl"), "--out", H("link.json"), "--annotator", "a"),
    "view site into the run folder it shows": _case("view", H("run"), "--out", H("run")),
    "view site into a folder of the user's files": _case("view", H("run"), "--out", H("forged")),
    # a folder holding earlier results or the user's clips
    "forge over a folder with a manifest": _case("forge", H("forged"), "--count", "2"),
    "forge over a folder with clips": _case("forge", H("clips_only"), "--count", "2"),
    "forge v2 over a folder with a manifest": _case(
        "forge", H("forged"), "--v2", "--count", "2"),
    # links, special files and files gaze did not write
    "bench score onto a link": _case(
        "bench", "score", H("m.jsonl"), H("p.jsonl"), "--out", H("link.json")),
    "convert onto a link": _case(
        "convert", H("groundtruth.json"), "--from", "glide", "--out", H("link.json")),
    "progress metrics onto a link": _case(
        "progress", "metrics", H("c.jsonl"), "--out", H("link.json")),
    "bench score onto an HTML page": _case(
        "bench", "score", H("m.jsonl"), H("p.jsonl"), "--out", H("page.html")),
    "bench score onto a text file": _case(
        "bench", "score", H("m.jsonl"), H("p.jsonl"), "--out", H("notes.txt")),
    "diagnose report onto an HTML page": _case(
        "diagnose", H("clip.mp4"), "-i", "pick", "--out", H("page.html")),
    "diagnose HTML onto a page gaze did not write": _case(
        "diagnose", H("clip.mp4"), "-i", "pick", "--html", H("page.html")),
    "progress metrics onto an HTML page": _case(
        "progress", "metrics", H("c.jsonl"), "--out", H("page.html")),
    "convert onto a text file": _case(
        "convert", H("groundtruth.json"), "--from", "glide", "--out", H("notes.txt")),
    "convert to robogaze-code with a clip id leading out": _case(
        "convert", H("escaping.jsonl"), "--to", "robogaze-code", "--fps", "10", "--out", H("code")),
    "convert to robogaze-code with an absolute clip id": _case(
        "convert", H("absolute.jsonl"), "--to", "robogaze-code", "--fps", "10", "--out", H("code")),
    "forge onto a file": _case("forge", H("notes.txt"), "--count", "1"),
    "forge --force over a folder of the user's files": _case(
        "forge", H("home_files"), "--count", "1", "--force"),
    "bench score onto a named pipe": _case(
        "bench", "score", H("m.jsonl"), H("p.jsonl"), "--out", H("pipe")),
    "progress metrics onto a folder": _case(
        "progress", "metrics", H("c.jsonl"), "--out", H("forged")),
    # malformed inputs
    "clip info on a link to itself": _case("clip", "info", H("loop.mp4")),
    "view a run with a scores file nested 5000 deep": _case(
        "view", H("run"), "--scores", H("deep_scores.json"), "--out", H("site")),
    "diagnose with an image whose header claims 4 billion pixels": _case(
        "diagnose", H("clip.mp4"), "-i", "pick", "--initial-frame", H("huge.png")),
    "diagnose a link to itself": _case("diagnose", H("loop.mp4"), "-i", "pick"),
    "bench score a manifest nested 5000 deep": _case(
        "bench", "score", H("deep_manifest.jsonl"), H("p.jsonl"), "--out", H("s.json")),
    "bench score predictions nested 5000 deep": _case(
        "bench", "score", H("m.jsonl"), H("deep_predictions.jsonl"), "--out", H("s.json")),
    "progress metrics on curves nested 5000 deep": _case(
        "progress", "metrics", H("deep_curves.jsonl"), "--out", H("o.json")),
    "bench score a manifest whose events are 3": _case(
        "bench", "score", H("events_3.jsonl"), H("p.jsonl"), "--out", H("s.json")),
    "bench score a manifest whose events are null": _case(
        "bench", "score", H("events_null.jsonl"), H("p.jsonl"), "--out", H("s.json")),
    "bench score a manifest whose events are true": _case(
        "bench", "score", H("events_true.jsonl"), H("p.jsonl"), "--out", H("s.json")),
    "bench score predictions whose events are 3": _case(
        "bench", "score", H("m.jsonl"), H("pred_events_3.jsonl"), "--out", H("s.json")),
    "bench score a manifest with a NaN fps": _case(
        "bench", "score", H("nan_fps.jsonl"), H("p.jsonl"), "--out", H("s.json")),
    "bench agreement a manifest with a NaN score": _case(
        "bench", "agreement", H("nan_pa.jsonl"), H("p.jsonl"), "--out", H("s.json")),
    "bench run a manifest nested 5000 deep": _case(
        "bench", "run", H("deep_manifest.jsonl"), "--out", H("run"), "--method", "pixel"),
    "convert a manifest nested 5000 deep": _case(
        "convert", H("deep_manifest.jsonl"), "--to", "prm", "--out", H("o.jsonl")),
    # numbers that make no sense
    "forge a negative seed": _case("forge", H("new_forge"), "--seed", "-1", "--count", "1"),
    "forge zero clips": _case("forge", H("new_forge"), "--count", "0"),
    "forge a negative count": _case("forge", H("new_forge"), "--count", "-1"),
    "forge v2 zero clips": _case("forge", H("new_forge"), "--v2", "--count", "0"),
}  # fmt: skip


@pytest.mark.parametrize("name", list(CASES))
def test_a_bad_case_is_one_line_and_costs_the_user_nothing(
    name: str, home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = _snapshot(home)
    code = run(CASES[name](home))
    err = capsys.readouterr().err
    assert code == 2, (code, err)
    one_line_error(err)
    after = _snapshot(home)
    changed = [k for k in before if before[k] != after.get(k)]
    assert changed == [], f"changed or removed: {changed}"
    assert sorted(set(after) - set(before)) == [], "nothing written on a refusal"


def test_standard_output_and_dev_null_are_written_through(home: Path, capsys) -> None:
    """`--out -` puts the JSON on standard output (the summary table moves to stderr);
    `--out /dev/null` discards it and leaves the device as it was, as a shell redirection does."""
    args = ["bench", "score", str(home / "m.jsonl"), str(home / "p.jsonl"), "--out"]
    assert run([*args, "-"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["n_clips"] == 3
    assert "recall" in captured.err.lower() or captured.err
    assert run([*args, os.devnull]) == 0
    assert stat.S_ISCHR(os.stat(os.devnull).st_mode)
    capsys.readouterr()
    assert run(["diagnose", str(home / "clip.mp4"), "-i", "pick", "--out", "-"]) == 2
    assert "--json" in one_line_error(capsys.readouterr().err)


def test_forge_replaces_only_its_own_output_and_writes_with_the_umask(tmp_path: Path) -> None:
    out = tmp_path / "f"
    old = os.umask(0o022)
    try:
        assert run(["forge", str(out), "--count", "2"]) == 0
        modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in out.iterdir()}
        assert set(modes.values()) == {0o644}, modes  # clips were written 0600
        assert run(["forge", str(out), "--count", "2"]) == 2  # an earlier forge: refused...
        first = {p.name: p.read_bytes() for p in out.iterdir()}
        assert run(["forge", str(out), "--count", "2", "--seed", "1", "--force"]) == 0  # ...but
        second = {p.name: p.read_bytes() for p in out.iterdir()}
        assert first["manifest.jsonl"] != second["manifest.jsonl"]  # replaced when asked
    finally:
        os.umask(old)


@pytest.fixture
def full_disk(tmp_path: Path):
    """A 1 MiB tmpfs filled to the last byte (root only; skipped where mounting is not allowed)."""
    import subprocess

    mount = tmp_path / "full"
    mount.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mount)],
        capture_output=True,
        check=False,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here ({done.stderr.decode().strip()})")
    try:
        with open(mount / "filler", "wb", buffering=0) as handle:
            try:
                while True:
                    handle.write(b"\0" * 4096)
            except OSError:
                pass
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


@pytest.mark.parametrize(
    "command",
    [
        lambda h, d: ["bench", "score", str(h / "m.jsonl"), str(h / "p.jsonl"), "--out", d],
        lambda h, d: ["progress", "metrics", str(h / "c.jsonl"), "--out", d],
        lambda h, d: ["diagnose", str(h / "clip.mp4"), "-i", "pick", "--out", d],
        lambda h, d: ["convert", str(h / "m.jsonl"), "--to", "prm", "--out", d],
    ],
)
def test_a_full_disk_is_one_line_and_leaves_no_partial_file(
    command, home: Path, full_disk: Path, capsys
) -> None:
    before = _snapshot(home)
    target = full_disk / "out.json"
    assert run(command(home, str(target))) == 2
    line = one_line_error(capsys.readouterr().err)
    assert f"no space left on device writing {target}" in line
    assert sorted(p.name for p in full_disk.iterdir()) == ["filler"]  # no partial, no temp file
    assert _snapshot(home) == before


def test_a_link_to_itself_is_named_as_such(home: Path, capsys) -> None:
    assert run(["diagnose", str(home / "loop.mp4"), "-i", "pick"]) == 2
    assert "a link that leads to no file" in one_line_error(capsys.readouterr().err)


def test_closed_standard_streams_cost_nothing(home: Path, tmp_path: Path) -> None:
    """`gaze ... >&-`: Python holds None for a closed stream; the command still writes its
    files and exits 0 (it used to end in a traceback on its last flush)."""
    import subprocess
    import sys

    out = tmp_path / "s.json"
    code = (
        "import sys; sys.stdout = None; from gaze.cli.main import main; "
        f"sys.argv = ['gaze', 'bench', 'score', {str(home / 'm.jsonl')!r}, "
        f"{str(home / 'p.jsonl')!r}, '--out', {str(out)!r}]; main()"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr and json.loads(out.read_text())["n_clips"] == 3

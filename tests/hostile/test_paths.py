"""Hostile manifests and outputs: nothing gaze writes leaves the folder the user named, and no
output overwrites an input."""

from __future__ import annotations

import json
import os
import stat

import pytest

from gaze.atomic import atomic_write_text, inside
from gaze.cli.main import run
from gaze.errors import GazeInputError
from tests.cli.test_cli import one_line_error


def manifest_with(tmp_path, forge_dir, clip_id: str):
    row = json.loads((forge_dir / "manifest.jsonl").read_text().splitlines()[0])
    row["clip_id"] = clip_id
    row["video"] = str(forge_dir / row["video"])
    path = tmp_path / "m.jsonl"
    path.write_text(json.dumps(row) + "\n")
    return path


@pytest.mark.parametrize(
    ("clip_id", "why"),
    [
        ("../../../escaped", "folder separator"),
        ("/tmp/absolute", "folder separator"),
        ("nested/dir/clip", "folder separator"),
        ("..", "starts with a dot"),
        ("evil\x1b]0;title\x07", "control character"),
        ("x" * 201, "longer than 200"),
    ],
)
def test_clip_ids_that_would_escape_the_run_folder_are_refused(
    clip_id, why, tmp_path, forge_dir, capsys
):
    manifest = manifest_with(tmp_path, forge_dir, clip_id)
    out = tmp_path / "deep" / "run"
    args = ["bench", "run", str(manifest), "--out", str(out), "--model", "scripted:auto"]
    assert run(args) == 2
    line = one_line_error(capsys.readouterr().err)
    assert "line 1" in line and why in line
    assert not (tmp_path / "escaped.json").exists() and not os.path.exists("/tmp/absolute.json")
    assert sorted(p.name for p in tmp_path.rglob("*.json")) == []


def test_inside_refuses_names_that_leave_the_folder(tmp_path):
    assert inside(tmp_path, "a.json") == tmp_path.resolve() / "a.json"
    for name in ("../a.json", "/etc/passwd", "sub/a.json"):
        with pytest.raises(GazeInputError, match="outside"):
            inside(tmp_path, name)
    (tmp_path / "link.json").symlink_to(tmp_path.parent / "elsewhere.json")
    with pytest.raises(GazeInputError, match="outside"):
        inside(tmp_path, "link.json")


def test_outputs_keep_the_umask_mode_and_an_existing_files_mode(tmp_path):
    old = os.umask(0o022)
    try:
        atomic_write_text(tmp_path / "new.json", "{}")
        assert stat.S_IMODE((tmp_path / "new.json").stat().st_mode) == 0o644
        existing = tmp_path / "shared.json"
        existing.write_text("old")
        existing.chmod(0o664)
        atomic_write_text(existing, "{}")
        assert stat.S_IMODE(existing.stat().st_mode) == 0o664
    finally:
        os.umask(old)


@pytest.mark.parametrize("flag", ["--out", "--html"])
def test_an_output_may_not_overwrite_the_input_clip(flag, tmp_path, forge_dir, capsys):
    clip = tmp_path / "clip.mp4"
    clip.write_bytes((forge_dir / "forge_s3_0000_clean.mp4").read_bytes())
    before = clip.read_bytes()
    assert run(["diagnose", str(clip), "-i", "pick", flag, str(clip)]) == 2
    assert "is an input" in one_line_error(capsys.readouterr().err)
    assert clip.read_bytes() == before

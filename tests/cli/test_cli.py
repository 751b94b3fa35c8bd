"""The command line: outputs, the JSON-only stdout contract, and one-line errors with exit 2."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gaze.cli.main import run
from gaze.schema.codebook import load_codebook
from gaze.schema.report import Report


def gaze_process(*args: str | bytes, env: dict | None = None) -> subprocess.CompletedProcess:
    """The real console entry point in a child process (bytes arguments pass through raw)."""
    full_env = {**os.environ, **(env or {})}
    for name in ("GAZE_MODEL", "GAZE_BASE_URL", "OPENAI_API_KEY"):
        full_env.pop(name, None)
    return subprocess.run(
        [sys.executable, "-m", "gaze", *args], capture_output=True, env=full_env, timeout=120
    )


def one_line_error(stderr: str) -> str:
    lines = [line for line in stderr.strip().splitlines() if line.strip()]
    assert len(lines) == 1, stderr
    assert lines[0].startswith("gaze: error: ")
    assert "Traceback" not in stderr
    return lines[0]


@pytest.fixture(autouse=True)
def _no_model_env(monkeypatch, tmp_path):
    monkeypatch.delenv("GAZE_MODEL", raising=False)
    monkeypatch.delenv("GAZE_BASE_URL", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("GAZE_CACHE_DIR", str(tmp_path / "cache"))


def test_version(capsys):
    assert run(["--version"]) == 0
    assert capsys.readouterr().out.strip() == "gaze 0.1.0"


def test_diagnose_json_puts_only_the_report_on_stdout(forge_dir, forge_rows):
    row = forge_rows["object_teleportation"]
    proc = gaze_process(
        "diagnose", str(forge_dir / row.video), "--instruction", row.instruction, "--json"
    )
    assert proc.returncode == 0, proc.stderr
    report = Report.model_validate_json(proc.stdout)
    assert [e.type for e in report.events] == ["object_teleportation"]
    assert report.events[0].start_s == row.events[0].start_s
    assert report.assessment.mode == "pixel_evidence"
    assert "task_progress" in report.assessment.not_assessed
    assert "pixel_evidence_only" in report.flags
    assert report.manifest.codebook_hash == load_codebook().hash
    assert report.signals is not None and "frame_diff" in report.signals.series


def test_diagnose_writes_out_file_and_renders_a_table(forge_dir, forge_rows, tmp_path, capsys):
    row = forge_rows["blur"]
    out = tmp_path / "report.json"
    code = run(["diagnose", str(forge_dir / row.video), "-i", row.instruction, "--out", str(out)])
    assert code == 0
    printed = capsys.readouterr().out
    assert "blur" in printed and "not assessed" in printed
    report = Report.model_validate_json(out.read_text())
    assert report.clip_id == Path(row.video).stem
    assert [e.type for e in report.events] == ["blur"]
    assert not list(tmp_path.glob(".*.tmp"))


def test_demo_finds_its_injected_failures(capsys):
    assert run(["diagnose", "--demo", "--json"]) == 0
    report = Report.model_validate_json(capsys.readouterr().out)
    assert report.clip_id == "demo"
    assert {e.type for e in report.events} == {"object_teleportation", "camera_instability"}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["diagnose", "--instruction", "x"], "missing CLIP"),
        (["diagnose", "{clip}"], "--instruction is required"),
        (["diagnose", "{clip}", "-i", "   "], "instruction is empty"),
        (["diagnose", "{missing}", "-i", "pick"], "no such file"),
        (["diagnose", "{text}", "-i", "pick"], "not a video gaze can open"),
        (["diagnose", "{clip}", "-i", "pick", "--model", "openai:gpt"], "OPENAI_API_KEY"),
        (["diagnose", "{clip}", "-i", "pick", "--model", "gpt4"], "PROVIDER:MODEL"),
        (
            ["diagnose", "{clip}", "-i", "pick", "--model", "scripted:auto", "--role", "boss=x:y"],
            "ROLE=PROVIDER:MODEL",
        ),
        (
            ["diagnose", "{clip}", "-i", "pick", "--role", "critic=scripted:auto"],
            "need a default model (--model",
        ),
        (
            ["diagnose", "{clip}", "-i", "pick", "--model", "scripted:auto", "--sections", "vibes"],
            "unknown sections",
        ),
        (["diagnose", "{clip}", "-i", "pick", "--judges", "progress"], "need a model"),  # old name
        (["diagnose", "{clip}", "-i", "pick", "--initial-frame", "{text}"], "not an image"),
        (["diagnose", "{clip}", "-i", "pick", "--out", "{nodir}/r.json"], "does not exist"),
        (["diagnose", "{clip}", "-i", "pick", "--frobnicate"], "No such option"),
        (["diagnose", "--demo", "{clip}"], "either a CLIP or --demo"),
        (["clip", "info", "{missing}"], "no such file"),
        (["forge", "{tmp}/f", "--count", "0"], "at least 1"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(forge_dir, forge_rows, tmp_path, capsys, args, message):
    text = tmp_path / "notes.mp4"
    text.write_text("hello\n" * 100)
    names = {
        "clip": str(forge_dir / forge_rows["clean"].video),
        "missing": str(tmp_path / "x.mp4"),
        "text": str(text),
        "nodir": str(tmp_path / "nope"),
        "tmp": str(tmp_path),
    }
    code = run([a.format(**names) for a in args])
    captured = capsys.readouterr()
    assert code == 2
    assert message in one_line_error(captured.err)
    assert captured.out == ""


def test_failed_diagnosis_leaves_no_output_file(tmp_path, capsys):
    bad = tmp_path / "bad.mp4"
    bad.write_bytes(b"\x00" * 1000)
    out = tmp_path / "r.json"
    assert run(["diagnose", str(bad), "-i", "pick", "--out", str(out)]) == 2
    assert not out.exists() and list(tmp_path.iterdir()) == [bad]
    one_line_error(capsys.readouterr().err)


def test_unwritable_output_is_refused_before_any_work(forge_dir, forge_rows, capsys):
    # /proc refuses new files even to root, unlike a chmod-ed folder
    code = run(
        [
            "diagnose",
            str(forge_dir / forge_rows["clean"].video),
            "-i",
            "pick",
            "--out",
            "/proc/gaze-report.json",
        ]
    )
    assert code == 2
    assert "not writable" in one_line_error(capsys.readouterr().err)


def test_output_path_that_is_a_directory_is_refused(forge_dir, forge_rows, tmp_path, capsys):
    code = run(
        [
            "diagnose",
            str(forge_dir / forge_rows["clean"].video),
            "-i",
            "pick",
            "--out",
            str(tmp_path),
        ]
    )
    assert code == 2
    assert "is a directory" in one_line_error(capsys.readouterr().err)


def test_non_utf8_instruction_is_refused_by_the_real_command(forge_dir, forge_rows):
    proc = gaze_process(
        "diagnose", str(forge_dir / forge_rows["clean"].video), "--instruction", b"pick \xff\xfe up"
    )
    assert proc.returncode == 2
    assert "not valid UTF-8" in one_line_error(proc.stderr.decode())
    assert proc.stdout == b""


def test_gaze_model_environment_is_not_silently_ignored(forge_dir, forge_rows):
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "gaze",
            "diagnose",
            str(forge_dir / forge_rows["clean"].video),
            "-i",
            "pick",
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "GAZE_MODEL": "openai:some-model"},
        timeout=60,
    )
    assert proc.returncode == 2
    assert "OPENAI_API_KEY" in one_line_error(proc.stderr)


def test_schema_json_has_the_documented_shape(capsys):
    assert run(["schema", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert set(data) == {"version", "hash", "dimensions", "severity_rubric"}
    assert data["hash"] == load_codebook().hash
    assert len(data["dimensions"]) == 6
    first = data["dimensions"][0]
    assert set(first) == {"name", "group", "types"}
    assert set(first["types"][0]) == {
        "name",
        "definition",
        "exclusion_rule",
        "default_severity",
        "evidence_limiting",
        "residual",
    }
    assert sum(len(d["types"]) for d in data["dimensions"]) == 30


def test_schema_table_lists_every_type(capsys):
    assert run(["schema"]) == 0
    printed = capsys.readouterr().out
    for name in load_codebook().codebook.type_names():
        assert name in printed


def test_clip_info_json(forge_dir, forge_rows, capsys):
    assert run(["clip", "info", str(forge_dir / forge_rows["clean"].video), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["clip"]["frame_count"] == 80 and data["clip"]["fps"] == 10.0
    assert [len(w["frame_indices"]) for w in data["windows"]] == [16, 16]


def test_forge_command_writes_a_manifest(tmp_path, capsys):
    assert run(["forge", str(tmp_path / "f"), "--count", "2", "--seed", "5"]) == 0
    lines = (tmp_path / "f" / "manifest.jsonl").read_text().splitlines()
    assert len(lines) == 2
    assert "wrote 2 clips" in capsys.readouterr().err


@pytest.mark.parametrize("args", [["--version"], ["schema", "--json"], ["clip", "info", "CLIP"]])
def test_light_commands_import_no_heavy_library(args, forge_dir, forge_rows):
    args = [str(forge_dir / forge_rows["clean"].video) if a == "CLIP" else a for a in args]
    probe = (
        "import sys\nfrom gaze.cli.main import run\ncode = run(sys.argv[1:])\n"
        "heavy = {m.split('.')[0] for m in sys.modules} & "
        "{'scipy', 'langgraph', 'torch', 'langchain_core', 'openai', 'google'}\n"
        "print('HEAVY', sorted(heavy), code, file=sys.stderr)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", probe, *args], capture_output=True, text=True, timeout=60
    )
    assert proc.stderr.strip().splitlines()[-1] == "HEAVY [] 0", proc.stderr


def test_html_prints_the_path_it_wrote(tmp_path, capsys):
    """`--html` says where the page went, with the terminal report and with --json alike, on
    one line: a path longer than the terminal is left for the terminal to wrap, never broken
    by gaze (it used to break inside a word, which a copied path does not survive)."""
    folder = tmp_path / ("a-long-folder-name-" * 5)
    folder.mkdir()
    page = folder / "page.html"
    for extra in ([], ["--json"]):
        page.unlink(missing_ok=True)
        assert run(["diagnose", "--demo", "--html", str(page), *extra]) == 0
        assert f"page written to {page}\n" in capsys.readouterr().err
        assert page.is_file()

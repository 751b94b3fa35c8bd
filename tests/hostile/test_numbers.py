"""Numbers that are not numbers: NaN, infinity and absurd magnitudes are refused where inputs are
read, naming the row; so are unreadable report files."""

from __future__ import annotations

import json

import pytest

from gaze.cli.main import run
from tests.cli.test_cli import one_line_error


def jsonl(path, rows) -> str:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
    return str(path)


def event(**over):
    base = {
        "dimension": "physical_plausibility",
        "type": "object_floating",
        "start_s": 1.0,
        "end_s": 2.0,
        "severity": 3,
        "description": "floats",
    }
    return json.dumps({**base, **over}).replace('"@INF@"', "Infinity").replace('"@NAN@"', "NaN")


def clip_row(events: str = "[]", **over) -> str:
    row = {"clip_id": "a", "video": "a.mp4", "instruction": "pick", "fps": 10, "duration_s": 20}
    text = json.dumps({**row, **over})
    return text[:-1] + f', "events": {events}}}'


@pytest.mark.parametrize(
    ("manifest_line", "why"),
    [
        (clip_row(f"[{event(start_s='@NAN@')}]"), "finite number"),
        (clip_row(f"[{event(end_s='@INF@')}]"), "finite number"),
        (clip_row(f"[{event(start_s=1e308, end_s=1e308)}]"), "less than or equal to 1000000"),
        (clip_row(f"[{event(severity='@NAN@')}]"), "finite number"),
        (clip_row(duration_s=float("inf")), "finite number"),  # json.dumps writes Infinity
    ],
)
def test_non_finite_and_absurd_numbers_in_a_manifest_are_refused(
    manifest_line, why, tmp_path, capsys
):
    manifest = jsonl(tmp_path / "m.jsonl", [manifest_line])
    preds = jsonl(tmp_path / "p.jsonl", [{"clip_id": "a", "events": []}])
    code = run(["bench", "score", manifest, preds, "--out", str(tmp_path / "o.json")])
    assert code == 2
    line = one_line_error(capsys.readouterr().err)
    assert "line 1" in line and why in line


@pytest.mark.parametrize(
    "values", ["[0, 10, Infinity]", "[0, NaN, 1]", "[0, 1e308, 1e308]", "[0, -5000, 1]"]
)
def test_progress_curves_with_impossible_values_are_refused(values, tmp_path, capsys):
    curves = jsonl(
        tmp_path / "c.jsonl",
        ['{"case_id": "x", "model": "m", "task": "t", "progress": ' + values + "}"],
    )
    code = run(["progress", "metrics", curves, "--out", str(tmp_path / "o.json")])
    assert code == 2
    assert "line 1" in one_line_error(capsys.readouterr().err)
    assert not (tmp_path / "o.json").exists()


def test_predicted_scores_and_curves_must_be_finite(tmp_path, capsys):
    manifest = jsonl(tmp_path / "m.jsonl", [clip_row()])
    preds = jsonl(tmp_path / "p.jsonl", ['{"clip_id": "a", "events": [], "pa": NaN}'])
    assert run(["bench", "agreement", manifest, preds, "--out", str(tmp_path / "o.json")]) == 2
    assert "finite number" in one_line_error(capsys.readouterr().err)


def test_a_report_file_that_is_not_utf8_is_named_exit_2(tmp_path, capsys):
    manifest = jsonl(tmp_path / "m.jsonl", [clip_row()])
    folder = tmp_path / "reports"
    folder.mkdir()
    (folder / "a.json").write_bytes(b"\xff\xfe not utf-8 \xfa")
    code = run(["bench", "score", manifest, str(folder), "--out", str(tmp_path / "o.json")])
    assert code == 2
    assert "a.json: cannot read as UTF-8" in one_line_error(capsys.readouterr().err)

"""The terminal at 80 columns (what a pipe or a small window gets): no number and no codebook
type name is ever cut. Each command runs as a child process with COLUMNS=80, as a user's would."""

from __future__ import annotations

import json
from pathlib import Path

from gaze.schema.codebook import load_codebook
from tests.cli.test_judge_commands import jsonl, manifest_rows
from tests.promises.conftest import gaze_cli

NARROW = {"COLUMNS": "80"}


def _numbers(values: list[float | None]) -> list[str]:
    return [f"{v:.3f}" for v in values if v is not None]


def test_the_codebook_at_80_columns_names_every_type_whole():
    proc = gaze_cli("schema", env=NARROW)
    assert proc.returncode == 0, proc.stderr
    assert "…" not in proc.stdout
    assert max(len(line) for line in proc.stdout.splitlines()) <= 80
    words = set(proc.stdout.replace(",", " ").replace(";", " ").replace(".", " ").split())
    for dim in load_codebook().codebook.dimensions:
        for t in dim.types:
            assert t.name in words, t.name  # whole, never 'failed_…'


def test_a_wide_leaderboard_at_80_columns_shows_every_number_whole(tmp_path: Path):
    """`gaze progress metrics --v1`: eleven columns of percentages ellipsised every number
    ('18.…'); now each model is a block of 'name value' pairs when the table cannot fit."""
    curves = jsonl(
        tmp_path / "c.jsonl",
        [
            {"case_id": f"c{i}", "model": f"generator_{i % 3}_long_name", "task": "t",
             "progress": [0, 10 + i, 25, 40 + i, 60, 75, 90, 100 - i % 7], "label": i % 2}
            for i in range(9)
        ],
    )  # fmt: skip
    out = tmp_path / "o.json"
    proc = gaze_cli("progress", "metrics", str(curves), "--out", str(out), "--v1", env=NARROW)
    assert proc.returncode == 0, proc.stderr
    assert "…" not in proc.stdout
    for row in json.loads(out.read_text())["leaderboard"]["mean"]:
        assert row["model"] in proc.stdout
        shown = [v for k, v in row.items() if k not in ("model", "n", "num_cases")]
        for number in _numbers([v for v in shown if isinstance(v, float | int)]):
            assert number in proc.stdout, number
    wide = gaze_cli("progress", "metrics", str(curves), "--out", str(out), "--v1",
                    env={"COLUMNS": "200"})  # fmt: skip
    assert "┃ model" in wide.stdout  # a terminal wide enough still gets the table


def test_agreement_at_80_columns_shows_every_number_whole(tmp_path: Path):
    manifest = jsonl(tmp_path / "m.jsonl", manifest_rows())
    preds = jsonl(tmp_path / "p.jsonl", [{"clip_id": r["clip_id"], "events": [], "pa": 3,
                                         "ia": 4} for r in manifest_rows()])  # fmt: skip
    out = tmp_path / "a.json"
    proc = gaze_cli("bench", "agreement", str(manifest), str(preds), "--out", str(out),
                    env=NARROW)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "…" not in proc.stdout
    result = json.loads(out.read_text())
    for axis in ("pa", "ia"):
        r = result[axis]
        keys = ("pearson", "spearman", "exact", "within_1", "mse", "over_rate", "under_rate")
        for number in _numbers([r.get(k) for k in keys]):
            assert number in proc.stdout


def test_a_long_path_never_breaks_a_table_title(tmp_path: Path):
    deep = tmp_path / ("runs_of_a_long_study_name_" * 3) / "first"
    other = tmp_path / ("runs_of_a_long_study_name_" * 3) / "second"
    deep.mkdir(parents=True)
    other.mkdir(parents=True)
    manifest = jsonl(tmp_path / "m.jsonl", manifest_rows())
    rows = [{"clip_id": r["clip_id"], "events": []} for r in manifest_rows()]
    first, second = jsonl(deep / "p.jsonl", rows), jsonl(other / "p.jsonl", rows)
    proc = gaze_cli("bench", "score", str(manifest), str(first), "--versus", str(second),
                    "--out", str(tmp_path / "s.json"), "--bootstrap", "50", env=NARROW)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "difference: first/p.jsonl minus second/p.jsonl (paired)" in proc.stdout

"""README "Benchmarks" and docs/compat.md: another annotator's manifest is a predictions file
(inter-annotator agreement), and RoboJudge's files give the same numbers read as they are
(``--format robojudge``) or converted first (``gaze convert --from robojudge``)."""

from __future__ import annotations

import json

import pytest

from tests.promises.conftest import gaze_cli


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_a_second_annotators_manifest_is_a_predictions_file(forge_dir, tmp_path):
    """Two annotators' manifests of the same clips: the second scored against the first, with
    one clip's events left out and one human score different, gives those misses and nothing
    else; a manifest against itself agrees perfectly."""
    rows = [json.loads(line) for line in (forge_dir / "manifest.jsonl").read_text().splitlines()]
    first = [{**r, "pa": 4.0, "ia": 3.0} for r in rows]
    dropped = next(r["clip_id"] for r in first if r["events"])
    n_event_clips = sum(1 for r in first if r["events"])
    second = [
        {**r, "events": [] if r["clip_id"] == dropped else r["events"], "pa": 4.0, "ia": 3.0}
        for r in first
    ]
    second[0]["pa"] = 2.0
    a = write_jsonl(forge_dir / "annotator_a.jsonl", first)  # videos beside the manifest
    b = write_jsonl(forge_dir / "annotator_b.jsonl", second)

    out = tmp_path / "self.json"
    proc = gaze_cli("bench", "score", str(a), str(a), "--bootstrap", "0", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    self_scores = json.loads(out.read_text())
    assert self_scores["precision"] == 1.0 and self_scores["recall"] == 1.0
    assert self_scores["temporal_miou"] == pytest.approx(1.0)
    assert self_scores["clean_accuracy"] == 1.0

    out = tmp_path / "ab.json"
    proc = gaze_cli("bench", "score", str(a), str(b), "--bootstrap", "0", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    scores = json.loads(out.read_text())
    # the protocol averages over event clips: the emptied one scores 0, the others 1
    assert scores["n_event_clips"] == n_event_clips
    assert scores["precision"] == pytest.approx((n_event_clips - 1) / n_event_clips, abs=1e-6)
    assert scores["recall"] == pytest.approx((n_event_clips - 1) / n_event_clips, abs=1e-6)
    assert scores["clean_accuracy"] == 1.0

    out = tmp_path / "agreement.json"
    proc = gaze_cli("bench", "agreement", str(a), str(b), "--bootstrap", "0", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    agreement = json.loads(out.read_text())
    assert agreement["pa"]["n"] == len(rows)
    assert agreement["pa"]["exact"] == pytest.approx((len(rows) - 1) / len(rows))
    assert agreement["ia"]["exact"] == 1.0


SUB_SCORES = {"agent_consistency": 2, "scene_consistency": 1, "interaction_realism": 1,
              "agent_match": 2, "object_correct": 1, "goal_completed": 0}  # fmt: skip


def test_robojudge_files_converted_or_not_give_the_same_numbers(tmp_path):
    """The judge's ids as RoboJudge publishes them (some with ``.mp4``, some without the gold's
    ``data__`` prefix) and a 0.0 score: `--format robojudge --compat robojudge` on the files,
    and `--compat robojudge` on their conversions, give one result."""
    human = [(2, 3), (4, 4), (1, 5), (5, 3), (3, 2)]
    judged = [(3, 3), (4, 5), (0.0, 5), (5, 2), (2, 2)]
    gold = write_jsonl(
        tmp_path / "gold.jsonl",
        [
            {
                "item_id": f"data__x{i}",
                "dataset": "d",
                "model": f"gen_{i % 2}",
                "task": "t",
                "physical_adherence": pa,
                "instruction_alignment": ia,
                **SUB_SCORES,
            }  # fmt: skip
            for i, (pa, ia) in enumerate(human)
        ],
    )
    preds = write_jsonl(
        tmp_path / "pred.jsonl",
        [
            {
                "item_id": f"x{i}.mp4" if i % 2 else f"data__x{i}",
                "physical_adherence": pa,
                "instruction_alignment": ia,
                "error": "",
            }  # fmt: skip
            for i, (pa, ia) in enumerate(judged)
        ],
    )
    direct = tmp_path / "direct.json"
    proc = gaze_cli(
        "bench", "agreement", str(gold), str(preds), "--format", "robojudge",
        "--compat", "robojudge", "--out", str(direct),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr

    manifest, predictions = tmp_path / "manifest.jsonl", tmp_path / "predictions.jsonl"
    for source, target in ((gold, manifest), (preds, predictions)):
        proc = gaze_cli("convert", "--from", "robojudge", str(source), "--out", str(target))
        assert proc.returncode == 0, proc.stderr
    converted = tmp_path / "converted.json"
    proc = gaze_cli(
        "bench", "agreement", str(manifest), str(predictions), "--compat", "robojudge",
        "--out", str(converted),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr

    first, second = json.loads(direct.read_text()), json.loads(converted.read_text())
    for axis in ("pa", "ia", "overall"):
        assert first[axis] == second[axis]
    assert first["pa"]["n"] == 5 and first["pa"]["mse"] == pytest.approx(0.6)

    # gaze's own protocol on the converted files: one line naming the routes that read them
    proc = gaze_cli(
        "bench", "agreement", str(manifest), str(predictions), "--out", str(tmp_path / "g.json")
    )
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "--compat robojudge" in proc.stderr
    assert "Traceback" not in proc.stderr

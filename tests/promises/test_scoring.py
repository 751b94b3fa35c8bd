"""README "Benchmarks": `gaze bench score` as the README shows it, with the llm judge against a
stand-in server and a paired comparison (--versus)."""

from __future__ import annotations

import json

from tests.promises.conftest import gaze_cli
from tests.standin import StandIn, minimal_chat


def predictions_file(forge_dir, path, shift: float) -> None:
    rows = [json.loads(line) for line in (forge_dir / "manifest.jsonl").read_text().splitlines()]
    with path.open("w") as out:
        for row in rows:
            # six guesses per event: more pairs at once than the caller's concurrency (32)
            events = [
                {
                    **e,
                    "start_s": e["start_s"] + shift,
                    "description": f"{path.stem} {k}: {e['description']}",
                }
                for e in row["events"]
                for k in range(6)
            ]
            out.write(json.dumps({"clip_id": row["clip_id"], "events": events}) + "\n")


def test_the_llm_judge_with_versus_scores_every_time(forge_dir, tmp_path):
    """A scoring run judges twice (the predictions, then the paired comparison): each judging
    used to start a new event loop while the judge's caller and SDK client kept the first, and
    6 runs in 7 crashed with "Semaphore ... bound to a different event loop"."""
    ours, theirs = tmp_path / "ours.jsonl", tmp_path / "theirs.jsonl"
    predictions_file(forge_dir, ours, 0.0)
    predictions_file(forge_dir, theirs, 0.05)
    with StandIn(responder=minimal_chat) as server:
        for n in range(3):
            out = tmp_path / f"scores{n}.json"
            proc = gaze_cli(
                "bench", "score", str(forge_dir / "manifest.jsonl"), str(ours), "--judge", "llm",
                "--versus", str(theirs), "--model", "openai:m", "--base-url", server.url + "/v1",
                "--bootstrap", "50", "--out", str(out),
                env={"GAZE_CACHE_DIR": str(tmp_path / f"cache{n}")},
            )  # fmt: skip
            assert proc.returncode == 0, proc.stderr
            scores = json.loads(out.read_text())
            assert scores["n_event_clips"] == 7 and "versus" in scores

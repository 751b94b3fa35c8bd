"""README "Every model exchange on record": a run keeps each request it sent, in order, with the
reply and what gaze read from it, and never a secret; a failed clip keeps its transcript."""

from __future__ import annotations

import json
from pathlib import Path

from gaze.models.transcript import TRANSCRIPT_FORMAT, read_transcript
from tests.promises.conftest import gaze_cli
from tests.standin import StandIn, chat_reply, clip_work, minimal_chat, schema_name

PLANTED = "sk-planted-transcript-secret-0123456789"


def _one_clip_manifest(forge_dir: Path, tmp_path: Path, index: int = 1) -> Path:
    row = json.loads((forge_dir / "manifest.jsonl").read_text().splitlines()[index])
    row["video"] = str(forge_dir / row["video"])
    manifest = tmp_path / "one.jsonl"
    manifest.write_text(json.dumps(row) + "\n")
    return manifest


def _last_text(parts: list[dict]) -> str:
    return [p["text"] for p in parts if "text" in p][-1]


def _sent_text(body: dict) -> str:
    content = body["messages"][-1]["content"]
    if isinstance(content, str):
        return content
    return [c["text"] for c in content if c.get("type") == "text"][-1]


def test_a_runs_transcript_holds_every_request_the_server_saw_in_order(forge_dir, tmp_path):
    manifest = _one_clip_manifest(forge_dir, tmp_path)
    run = tmp_path / "run"
    with StandIn(responder=minimal_chat) as server:
        proc = gaze_cli(
            "bench", "run", str(manifest), "--out", str(run), "--model", "openai:m",
            "--base-url", server.url + "/v1", "--concurrency", "1", "--no-cache",
            env={"OPENAI_API_KEY": PLANTED, "GAZE_CACHE_DIR": str(tmp_path / "cache")},
        )  # fmt: skip
        seen = clip_work(server.seen)
    assert proc.returncode == 0, proc.stderr
    (path,) = (run / "transcripts").glob("*.jsonl")
    header, exchanges = read_transcript(path)
    assert header["format"] == TRANSCRIPT_FORMAT and header["exchanges"] == len(exchanges)
    # one exchange per request, in the order the server received them (one in flight at a time)
    assert len(exchanges) == len(seen) >= 5  # grounding, observer, router, specialist, critic
    assert [x["schema"] for x in exchanges] == [schema_name(s) for s in seen]
    assert [_last_text(x["messages"][-1]["parts"]) for x in exchanges] == [
        _sent_text(s.body) for s in seen
    ]
    assert [x["seq"] for x in exchanges] == list(range(1, len(seen) + 1))
    # images are references to the frames sent, each with its time label; the count matches
    for x, s in zip(exchanges, seen, strict=True):
        images = [p for m in x["messages"] for p in m["parts"] if "image" in p]
        sent = [
            c for m in s.body["messages"] if isinstance(m["content"], list) for c in m["content"]
        ]
        assert len(images) == sum(c.get("type") == "image_url" for c in sent)
        assert all(len(p["image"]) == 64 for p in images)
        assert x["ok"] and x["parsed"] is not None and x["reply"] and x["input_tokens"] == 11
    roles = [x["role"] for x in exchanges]
    assert roles[0] == "grounding" and "critic" in roles and "observer" in roles
    assert {x["label"] for x in exchanges if x["role"] == "grounding"} == {"task and scene"}
    labels = {x["label"] for x in exchanges if x["role"] == "observer"}
    assert "window 0 (0.00-4.00 s) and window 1 (4.00-8.00 s)" in labels
    assert PLANTED not in path.read_text() and PLANTED not in proc.stderr + proc.stdout


def test_a_failed_clip_keeps_the_exchanges_that_explain_it(tmp_path):
    """Every reply unparseable: each attempt is on record with the reply and why it was not
    used, retries numbered, and the transcript is written although the clip gave no report."""
    transcript = tmp_path / "t.jsonl"

    def respond(body: dict) -> object:
        if schema_name_of(body) == "Probe":
            return minimal_chat(body)
        return chat_reply("I would rather describe the scene in prose.")

    with StandIn(responder=respond) as server:
        proc = gaze_cli(
            "diagnose", "--demo", "--model", "openai:m", "--base-url", server.url + "/v1",
            "--max-retries", "1", "--transcript", str(transcript), "--out",
            str(tmp_path / "r.json"),
            env={"OPENAI_API_KEY": PLANTED, "GAZE_CACHE_DIR": str(tmp_path / "cache")},
        )  # fmt: skip
        seen = clip_work(server.seen)
    _, exchanges = read_transcript(transcript)
    assert len(exchanges) == len(seen) > 0
    assert all(not x["ok"] and x["parsed"] is None for x in exchanges)
    assert all(x["reply"] == "I would rather describe the scene in prose." for x in exchanges)
    assert all("no JSON object" in x["error"] for x in exchanges)
    assert {x["attempt"] for x in exchanges} == {1, 2}
    # a retry carries the bad reply and the error back to the model
    retry = next(x for x in exchanges if x["attempt"] == 2)
    assert [m["role"] for m in retry["messages"]][-2:] == ["assistant", "user"]
    assert PLANTED not in transcript.read_text()
    assert "transcript written to" in proc.stderr


def schema_name_of(body: dict) -> str | None:
    return (body.get("response_format") or {}).get("json_schema", {}).get("name")

"""What `gaze diagnose` sends a model server, per clip: requests, images sent, distinct images,
image bytes, estimated image tokens, and the shared-prefix fraction -- the share of image tokens
that sit inside a prefix identical to an earlier request of the same clip (what vLLM's automatic
prefix caching or hosted prompt caching can reuse) -- and the image tokens outside such a prefix
(what a server with a prefix cache computes, and a hosted cache bills in full), and the size of
the clip's transcript (`--transcript`: every exchange, frames as references).

The stand-in also works as a server with a per-token prefix cache (``tests.prefix_cache``: blocks
of 16 tokens keyed by their hash chain, an LRU of ``--cache-tokens``, as vLLM's automatic prefix
caching) and reports cached tokens in its usage, as vLLM and OpenAI do. ``server uncached image
tokens`` is what that cache computed of the clip's image tokens: the figure a real cache gives,
beside the bench's own estimate from whole parts (``unshared image tokens``). ``report $`` is the
report's own cost line at ``--price`` per million input tokens and ``--cached-price`` per
million cached ones (from the tokens the server reported cached).

    python bench/request_cost.py [--durations 8 30 60 | --clip VIDEO ...] [--layouts frames grid]
                                 [--replies minimal findings subtasks]
                                 [--settings "--window-s 12 ..."]
                                 [--against "--segments-per-clip 0"]

``minimal``: the stand-in answers every call with the smallest valid JSON (specialists find
nothing, so no critic runs: a clean clip); ``findings``: every specialist proposes one
hypothesis and the critic verifies them (a clip with something to check); ``subtasks``: the task
has three subtasks, under way from 0, 10 and 22 s, so segments follow subtask spans that start
on odd windows too (as a real observer's claims make them), and nothing is found.

``--clip VIDEO`` measures a video of your own (a real clip) instead of the forge's clips.

``--settings`` passes further `gaze diagnose` options (for example longer windows at the same
4 frames per second, ``--window-s 12 --frames-per-window 48``, which make fewer, larger calls).

``grid`` is ``--grid``: each window sent as one image of its frames, tiles time-stamped. The
last column sets the estimate beside RoboGaze's published cost per clip ($0.14 for clips under
10 s, $0.31 above 30 s) at a hosted price of $2.50 per million input tokens.

The openai SDK talks to a stand-in server on 127.0.0.1 that logs every request body and answers
with minimal valid JSON. Image tokens are estimated Qwen-VL style (one token per 28x28 patch).
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import re
import shlex
import sys
import tempfile
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.standin, the stand-in
sys.path.insert(0, str(Path(__file__).resolve().parent))

from graph_latency import served  # noqa: E402

from gaze.bench.forge import forge_clip  # noqa: E402
from gaze.cli.main import run  # noqa: E402
from gaze.models.scripted import minimal_instance  # noqa: E402
from tests.prefix_cache import (  # noqa: E402
    CAPACITY_TOKENS,
    PrefixCache,
    media_url,
    url_frames,
    url_tokens,
)
from tests.standin import StandIn, chat_reply, minimal_chat  # noqa: E402

ROBOGAZE_CALLS = {10.0: 7.1, 30.0: 14.2}
"""RoboGaze's published calls per clip: 7.1 for clips under 10 s, 14.2 for clips over 30 s."""
HOSTED_USD_PER_MTOK = 2.50
"""Input price used for the cost column (a common hosted vision model's list price, 2025)."""


def against_robogaze(requests: float, duration_s: float) -> str:
    """Requests over RoboGaze's published calls for a clip of that length: under 10 s against
    7.1, from 30 s on against its figure for clips over 30 s; "-" between, which it does not
    report."""
    if duration_s < 10:
        return f"{requests / ROBOGAZE_CALLS[10.0]:.2f}"
    if duration_s >= 30:
        return f"{requests / ROBOGAZE_CALLS[30.0]:.2f}"
    return "-"


def flatten(body: dict[str, Any]) -> list[tuple[str, str]]:
    """A request as a sequence of (kind, content) parts in the order the model reads them."""
    parts: list[tuple[str, str]] = []
    for message in body["messages"]:
        content = message["content"]
        parts.append(("role", message["role"]))
        if isinstance(content, str):
            parts.append(("text", content))
            continue
        for part in content:
            url = media_url(part)
            if url is not None:
                parts.append(("image", url))
            else:
                parts.append(("text", part["text"]))
    return parts


def measure(bodies: list[dict[str, Any]]) -> dict[str, float]:
    requests = [
        flatten(b)
        for b in bodies
        if isinstance(b, dict) and b["response_format"]["json_schema"]["name"] != "Probe"
    ]
    sent = shared = 0
    images = distinct_bytes = image_bytes = 0
    seen: set[str] = set()
    for k, parts in enumerate(requests):
        longest = 0
        for earlier in requests[:k]:
            same = 0
            for a, b in zip(parts, earlier, strict=False):
                if a != b:
                    break
                same += 1
            longest = max(longest, same)
        for position, (kind, content) in enumerate(parts):
            if kind != "image":
                continue
            tokens = url_tokens(content)  # the stand-in server's count
            sent += tokens
            if position < longest:
                shared += tokens
            for frame in url_frames(content):
                images += 1
                image_bytes += len(frame)
                digest = hashlib.sha256(frame).hexdigest()
                if digest not in seen:
                    seen.add(digest)
                    distinct_bytes += len(frame)
    return {
        "requests": len(requests),
        "images": images,
        "distinct": len(seen),
        "image_mb": image_bytes / 1e6,
        "image_tokens": sent,
        "shared_fraction": shared / sent if sent else 0.0,
        "unshared_tokens": sent - shared,
    }


SUBTASK_STARTS_S = (0.0, 10.0, 22.0)
"""Where the ``subtasks`` replies put each subtask under way (by a window's start)."""


def subtask_chat(body: Any) -> Any:
    """Minimal replies, except a three-subtask task memory, and observers that claim the
    subtask under way at their window's start (``SUBTASK_STARTS_S``)."""
    if not isinstance(body, dict) or "response_format" not in body:
        return minimal_chat(body)
    spec = body["response_format"]["json_schema"]
    reply = minimal_instance(spec["schema"])
    if spec["name"] == "Grounding":
        reply["task"]["subtasks"] = [
            {
                "id": f"s{i}",
                "description": "x",
                "objects": [],
                "target_state": "x",
                "expected_outcome": "x",
                "completion_criterion": "x",
            }
            for i in range(len(SUBTASK_STARTS_S))
        ]
    elif spec["name"] == "WindowObservations":
        text = "\n".join(part for _, part in flatten(body) if not part.startswith("data:"))
        shown = text.rsplit("The frames above show ", 1)[-1].split(". For each window", 1)[0]
        starts = re.findall(r"window \d+ \(([\d.]+)-", shown)
        for entry, seen in zip(reply["windows"], starts, strict=True):
            start = float(seen)
            under_way = sum(start >= s for s in SUBTASK_STARTS_S) - 1
            entry["subtask_status"] = [
                {"subtask_id": f"s{under_way}", "status": "in_progress", "times_s": [start]}
            ]
    return chat_reply(json.dumps(reply))


def one_run(
    clip: Path, replies: str, layout: str, settings: list[str], cache_tokens: int, tmp: str
) -> dict[str, Any]:
    """One `gaze diagnose` of ``clip`` against a caching stand-in: what it sent and cost."""
    chats = {"minimal": minimal_chat, "subtasks": subtask_chat}
    responder = chats.get(replies, served(0.0))
    cache = PrefixCache(cache_tokens)
    with StandIn(responder=cache.responder(responder)) as server:
        argv_ = ["diagnose", str(clip), "-i", "put the block on the plate", "--json"]
        argv_ += ["--model", "openai:m", "--base-url", server.url + "/v1", "--no-cache"]
        transcript = Path(tmp) / "transcript.jsonl"
        transcript.unlink(missing_ok=True)
        argv_ += ["--transcript", str(transcript)]
        argv_ += ["--grid"] if layout == "grid" else []
        argv_ += settings
        with redirect_stdout(io.StringIO()) as out, redirect_stderr(io.StringIO()):
            code = run(argv_)
        bodies = [s.body for s in server.seen]
    if code != 0:
        raise SystemExit(f"gaze diagnose failed on {clip.name} ({' '.join(settings)})")
    m: dict[str, Any] = measure(bodies)
    work = [s for s in cache.served if s.schema != "Probe"]
    m["uncached"] = sum(s.uncached_image_tokens for s in work)
    m["cached_share"] = sum(s.cached for s in work) / max(1, sum(s.tokens for s in work))
    m["report_usd"] = json.loads(out.getvalue())["manifest"]["cost_usd"]
    m["transcript_kb"] = transcript.stat().st_size / 1024
    return m


def container_seconds(path: Path) -> float:
    """A video's duration as its container states it."""
    import av

    with av.open(str(path)) as container:
        return round((container.duration or 0) / 1e6, 1)


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--durations", type=float, nargs="+", default=[8, 30, 60])
    parser.add_argument("--layouts", nargs="+", choices=["frames", "grid"], default=["frames"])
    parser.add_argument(
        "--replies",
        nargs="+",
        choices=["minimal", "findings", "subtasks"],
        default=["minimal", "findings", "subtasks"],
    )
    parser.add_argument(
        "--settings", default="", help="further gaze diagnose options, one quoted string"
    )
    parser.add_argument(
        "--against",
        default=None,
        help="options to compare with in the same run (requests and uncached image tokens "
        'as ratios), e.g. "--segments-per-clip 0": the layout before long clips\' segments '
        "grew",
    )
    parser.add_argument(
        "--clip",
        type=Path,
        action="append",
        help="a video of your own to measure instead of the forge's clips (repeatable; "
        "--durations is then ignored)",
    )
    parser.add_argument("--cache-tokens", type=int, default=CAPACITY_TOKENS)
    parser.add_argument("--price", type=float, default=HOSTED_USD_PER_MTOK)
    parser.add_argument("--cached-price", type=float, default=HOSTED_USD_PER_MTOK / 10)
    args = parser.parse_args(argv)
    settings = shlex.split(args.settings)
    against = shlex.split(args.against) if args.against is not None else None
    if settings:
        print(f"gaze diagnose settings: {' '.join(settings)}")
    if against is not None:
        print(f"against: {' '.join(settings + against)}")
    print(
        f"server prefix cache: {args.cache_tokens:,} tokens; report $ at ${args.price:g} per "
        f"million input tokens, ${args.cached_price:g} cached"
    )
    extra = " requests against | uncached against |" if against is not None else ""
    print(
        "| replies | layout | clip s | requests | requests / RoboGaze's | images | distinct "
        "| image MB | image tokens | shared prefix | unshared image tokens "
        "| server uncached image tokens | server cached input | report $ "
        "| image $ at $2.50/Mtok | transcript KB |" + extra
    )
    print("|---|---|---:" + "|---:" * (13 + (2 if against is not None else 0)) + "|")
    with tempfile.TemporaryDirectory() as tmp:
        prices = Path(tmp) / "prices.json"
        price = {"input": args.price, "cached_input": args.cached_price, "output": 0.0}
        prices.write_text(json.dumps({"models": {"openai:m": price}}))
        os.environ["GAZE_PRICES"] = str(prices)
        if args.clip:
            clips = [(path, container_seconds(path)) for path in args.clip]
        else:
            clips = [(Path(tmp) / f"clip{d:g}.mp4", d) for d in args.durations]
        plan = [(r, la, c) for r in args.replies for c in clips for la in args.layouts]
        for replies, layout, (clip, duration) in plan:
            if not clip.exists():
                forge_clip(clip, seed=5, failures=["object_teleportation"], duration_s=duration)
            m = one_run(clip, replies, layout, settings, args.cache_tokens, tmp)
            dollars = m["image_tokens"] * HOSTED_USD_PER_MTOK / 1e6
            row = (
                f"| {replies} | {layout} | {duration:g} | {m['requests']} | "
                f"{against_robogaze(m['requests'], duration)} | {m['images']} | "
                f"{m['distinct']} | "
                f"{m['image_mb']:.1f} | {m['image_tokens']:,} | {m['shared_fraction']:.2f} | "
                f"{m['unshared_tokens']:,} | {m['uncached']:,} | {m['cached_share']:.2f} | "
                f"{m['report_usd']:.4f} | {dollars:.3f} | {m['transcript_kb']:.0f} |"
            )
            if against is not None:
                b = one_run(clip, replies, layout, settings + against, args.cache_tokens, tmp)
                row += (
                    f" {b['requests']} ({m['requests'] / b['requests']:.2f}) |"
                    f" {b['uncached']:,} ({m['uncached'] / max(1, b['uncached']):.2f}) |"
                )
            print(row, flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])

"""`gaze diagnose` of one 8 s forge clip against a local stand-in server in each fault mode:
what happens, how long it takes, how many requests it sends.

    python bench/fault_modes.py [--request-timeout 2] [--max-retries 3]

Every server runs on 127.0.0.1 and every request loop is bounded by gaze's own limits.
"""

from __future__ import annotations

import argparse
import copy
import io
import json
import sys
import tempfile
import time
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.standin, the stand-in

from gaze.bench.forge import forge_clip  # noqa: E402
from gaze.cli.main import run  # noqa: E402
from tests.standin import Reply, StandIn, chat_reply, error_reply, minimal_chat  # noqa: E402

PROBE = minimal_chat({"response_format": {"json_schema": {"schema": {}}}})
DEEP = b'{"a":' * 50_000 + b"1" + b"}" * 50_000


def trickle() -> Reply:
    reply = copy.deepcopy(PROBE)
    reply.drip_s = 0.5
    return reply


def bad_usage(body: dict) -> Reply:
    reply = minimal_chat(body)
    reply.body["usage"] = {"prompt_tokens": "many", "completion_tokens": None}
    return reply


def refusal(_: dict) -> Reply:
    reply = chat_reply("")
    reply.body["choices"][0]["message"] = {"role": "assistant", "content": None, "refusal": "no"}
    return reply


MODES: dict[str, tuple[list[Reply], Reply | None, object]] = {
    # name: (replies queued first, default reply, responder)
    "healthy": ([], None, minimal_chat),
    "500 then healthy": ([error_reply(500, "x")], None, minimal_chat),
    "429 Retry-After 3600": ([error_reply(429, "x", {"retry-after": "3600"})], None, minimal_chat),
    "dead after start-up": ([PROBE, PROBE], error_reply(503, "gone"), None),
    "trickles bytes": ([PROBE, PROBE], trickle(), None),
    "never answers": ([PROBE, PROBE], Reply(200, b"{}", delay_s=600), None),
    "HTML error page": ([PROBE, PROBE], Reply(200, b"<html>502 Bad Gateway</html>"), None),
    "not UTF-8": ([PROBE, PROBE], Reply(200, b"\xff\xfe\xfa"), None),
    "JSON nested 50k deep": (
        [PROBE, PROBE],
        Reply(200, b'{"a":' * 50_000 + b"1" + b"}" * 50_000),
        None,
    ),
    "usage not integers": ([], None, bad_usage),
    "3 MB replies": ([PROBE, PROBE], chat_reply('{"x": "' + "y" * 3_000_000 + '"}'), None),
    "refuses everything": ([PROBE, PROBE], None, refusal),
    "start-up check fails": ([], Reply(200, b"<html>login</html>"), None),
}


def one(mode: str, clip: Path, options: list[str]) -> tuple[str, float, int]:
    queued, default, responder = MODES[mode]
    with StandIn(default=default, responder=responder) as server:  # type: ignore[arg-type]
        server.push(*copy.deepcopy(queued))
        args = ["diagnose", str(clip), "-i", "put the block on the plate", "--json"]
        args += ["--model", "openai:m", "--base-url", server.url + "/v1", "--no-cache", *options]
        out, err = io.StringIO(), io.StringIO()
        started = time.perf_counter()
        with redirect_stdout(out), redirect_stderr(err):
            code = run(args)
        wall = time.perf_counter() - started
        sent = len(server.seen)
    if code == 0:
        report = json.loads(out.getvalue())
        flags = ",".join(report["flags"]) or "clean"
        outcome = f"exit 0, report ({flags}, {report['manifest']['failed_requests']} failed)"
    else:
        lines = [line for line in err.getvalue().splitlines() if line.startswith("gaze:")]
        outcome = f"exit {code}: {(lines or ['?'])[-1].removeprefix('gaze: error: ')[:70]}"
    return outcome, wall, sent


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--request-timeout", default="2")
    parser.add_argument("--max-retries", default="3")
    args = parser.parse_args(argv)
    options = ["--request-timeout", args.request_timeout, "--max-retries", args.max_retries]
    with tempfile.TemporaryDirectory() as tmp:
        clip = Path(tmp) / "clip.mp4"
        forge_clip(clip, seed=3, failures=[])
        print("| mode | outcome | wall s | requests |\n|---|---|---:|---:|")
        for mode in MODES:
            outcome, wall, sent = one(mode, clip, options)
            print(f"| {mode} | {outcome} | {wall:.1f} | {sent} |", flush=True)
        print("| no server at all | ", end="")
        out, err = io.StringIO(), io.StringIO()
        started = time.perf_counter()
        with redirect_stdout(out), redirect_stderr(err):
            code = run(
                [
                    "diagnose",
                    str(clip),
                    "-i",
                    "x",
                    "--model",
                    "openai:m",
                    "--no-cache",
                    "--base-url",
                    "http://127.0.0.1:9/v1",
                    *options,
                ]
            )
        line = err.getvalue().strip().splitlines()[-1].removeprefix("gaze: error: ")[:70]
        print(f"exit {code}: {line} | {time.perf_counter() - started:.1f} | 0 |")


if __name__ == "__main__":
    main(sys.argv[1:])

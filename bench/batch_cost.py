"""What `gaze bench run --batch-api` costs against a live run of the same clips: rounds to
finish, batch jobs, lines sent and billed, and each run's `run.json` cost at a price table.

Forge clips go through the CLI twice, in this process: live against a stand-in chat server
(minimal valid JSON for every call), and as batch rounds (one `bench run --batch-api` per round,
as a user runs it) against the stand-in batch API of ``tests.batch_standin``, whose lines get
the same replies. ``--fail-share`` of the lines fail once (a 500) and every ``--expire-every``-th
job expires with half its lines unanswered, as jobs of a busy day do.

    python bench/batch_cost.py [--clips 8] [--fail-share 0.1] [--expire-every 3]
                               [--live grounding router]

The batch runs' reports are compared with the live run's: events (type, span, severity),
flags and calls per role. ``billed twice`` counts requests whose reply was billed in more
than one line (it must be 0); ``lines sent`` includes the lines sent again after a failure
or an expiry (billed only once). The last column is a second batch run that sends the
``--live`` roles' calls live (``--batch-live``): fewer rounds, those calls at the full price.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import sys
import tempfile
from collections import Counter
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.*, the stand-ins

from gaze.bench.forge import forge_set  # noqa: E402
from gaze.cli.main import run  # noqa: E402
from gaze.models.scripted import minimal_instance  # noqa: E402
from tests.batch_standin import BatchAPI  # noqa: E402
from tests.prefix_cache import request_tokens  # noqa: E402
from tests.standin import Reply, StandIn, chat_reply, error_reply  # noqa: E402

PRICES = {"models": {"openai:m": {"input": 2.5, "output": 10.0}}}
"""USD per million tokens (a hosted vision model's list price): the same for both runs."""


def answer(body: Any) -> Reply:
    """The smallest valid JSON for the request's schema, billed by its real size: its text at
    four characters a token and its images at one token per 28x28 patch (Qwen-VL's rule)."""
    if not isinstance(body, dict) or "response_format" not in body:
        return error_reply(404, "not served here")
    content = json.dumps(minimal_instance(body["response_format"]["json_schema"]["schema"]))
    return chat_reply(content, prompt_tokens=len(request_tokens(body)))


def quiet(argv: list[str]) -> int:
    with redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()):
        return run(argv)


def findings(path: Path) -> object:
    """What a report found and what it cost in calls (not its times or prices)."""
    report = json.loads(path.read_text())
    events = [(e["type"], e["start_s"], e["end_s"], e["severity"]) for e in report["events"]]
    return events, report["flags"], report["manifest"]["calls"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clips", type=int, default=8)
    parser.add_argument("--fail-share", type=float, default=0.1)
    parser.add_argument("--expire-every", type=int, default=3)
    parser.add_argument("--seed", type=int, default=21)
    parser.add_argument(
        "--live",
        nargs="*",
        default=["grounding", "router"],
        help="roles the second batch run sends live (--batch-live)",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        forge_set(root / "forge", count=args.clips, seed=args.seed)
        manifest = str(root / "forge" / "manifest.jsonl")
        (root / "prices.json").write_text(json.dumps(PRICES))
        os.environ.update(
            OPENAI_API_KEY="sk-bench", GAZE_PRICES=str(root / "prices.json"),
            GAZE_CACHE_DIR=str(root / "cache"),
        )  # fmt: skip
        with StandIn(responder=answer) as live:
            code = quiet(["bench", "run", manifest, "--out", str(root / "live"), "--no-cache",
                          "--model", "openai:m", "--base-url", live.url + "/v1"])  # fmt: skip
        assert code == 0, "the live run failed"
        cutoff = int(args.fail_share * 16**4)
        runs = [batch_run(root, manifest, args, cutoff, live) for live in ([], args.live)]
        live_run = json.loads((root / "live" / "run.json").read_text())
        for run_ in runs:
            run_["same"] = sum(
                findings(path) == findings(root / "live" / "reports" / path.name)
                for path in (root / run_["out"] / "reports").glob("*.json")
            )
    every = args.expire_every
    expiring = f"jobs {every}, {2 * every}, ... expire" if every else "no job expires"
    print(f"clips {args.clips} (forge seed {args.seed}), lines failing once "
          f"{args.fail_share:g}, {expiring}")  # fmt: skip
    names = ["batch", "batch, live " + "+".join(args.live)]
    print(f"{'':44} {'live':>10} " + " ".join(f"{n:>28}" for n in names))

    def row(name: str, live: object, values: list[object]) -> None:
        print(f"{name:44} {live!s:>10} " + " ".join(f"{v!s:>28}" for v in values))

    row("reports", live_run["done"], [r["reports"] for r in runs])
    row("reports with the live run's events/flags/calls", "", [r["same"] for r in runs])
    row("requests billed", live_run["calls"], [r["billed"] for r in runs])
    row("of them live", live_run["calls"], [r["live_requests"] for r in runs])
    row("cost (run.json) $", f"{live_run['cost_usd']:.6f}", [f"{r['cost']:.6f}" for r in runs])
    row("cost / live cost", "1.000", [f"{r['cost'] / live_run['cost_usd']:.3f}" for r in runs])
    row("rounds", "", [r["rounds"] for r in runs])
    row("jobs", "", [r["jobs"] for r in runs])
    row("lines sent", "", [r["lines"] for r in runs])
    row("billed twice", "", [r["twice"] for r in runs])


def batch_run(
    root: Path, manifest: str, args: argparse.Namespace, cutoff: int, live: list[str]
) -> dict[str, Any]:
    """Batch rounds (one command each) until no clip waits, with ``live`` roles sent live."""
    out = "batch-live" if live else "batch"
    every = args.expire_every
    api = BatchAPI(
        polls_to_finish=0,
        fail_once=lambda key, body: int(key[:4], 16) < cutoff,
        expire=lambda i: every > 0 and i % every == every - 1,
        chat=answer,
    )
    os.environ["GAZE_CACHE_DIR"] = str(root / f"cache-{out}")  # no run answers the other's
    extra = [arg for role in live for arg in ("--batch-live", role)]
    rounds = 0
    with StandIn(router=api) as server:
        while rounds < 40:
            rounds += 1
            quiet(["bench", "run", manifest, "--out", str(root / out), "--batch-api", *extra,
                   "--model", "openai:m", "--base-url", server.url + "/v1"])  # fmt: skip
            if not json.loads((root / out / "run.json").read_text()).get("waiting"):
                break
    run_ = json.loads((root / out / "run.json").read_text())
    billed = Counter(api.answered)
    return {
        "out": out,
        "reports": run_["done"] + run_["resumed"],
        "billed": run_["calls"],
        "live_requests": run_["calls"] - sum(billed.values()),  # not answered by a batch line
        "cost": run_["cost_usd"],
        "rounds": rounds,
        "jobs": len(api.jobs),
        "lines": sum(len(job.lines) for job in api.jobs),
        "twice": sum(n > 1 for n in billed.values()),
    }


if __name__ == "__main__":
    main()

"""What `gaze bench run --batch-api` costs against a live run of the same clips: rounds to
finish, batch jobs, lines sent and billed, and each run's `run.json` cost at a price table.

Forge clips go through the CLI twice, in this process: live against a stand-in chat server
(minimal valid JSON for every call), and as batch rounds (one `bench run --batch-api` per round,
as a user runs it) against the stand-in batch API of ``tests.batch_standin``, whose lines get
the same replies. ``--fail-share`` of the lines fail once (a 500) and every ``--expire-every``-th
job expires with half its lines unanswered, as jobs of a busy day do.

    python bench/batch_cost.py [--clips 8] [--fail-share 0.1] [--expire-every 3]

The batch run's reports are compared with the live run's: events (type, span, severity),
flags and calls per role. ``billed twice`` counts requests whose reply was billed in more
than one line (it must be 0); ``lines sent`` includes the lines sent again after a failure
or an expiry (billed only once).
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

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.*, the stand-ins

from gaze.bench.forge import forge_set  # noqa: E402
from gaze.cli.main import run  # noqa: E402
from tests.batch_standin import BatchAPI  # noqa: E402
from tests.standin import StandIn, minimal_chat  # noqa: E402

PRICES = {"models": {"openai:m": {"input": 2.5, "output": 10.0}}}
"""USD per million tokens (a hosted vision model's list price): the same for both runs."""


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
        with StandIn(responder=minimal_chat) as live:
            code = quiet(["bench", "run", manifest, "--out", str(root / "live"), "--no-cache",
                          "--model", "openai:m", "--base-url", live.url + "/v1"])  # fmt: skip
        assert code == 0, "the live run failed"
        cutoff = int(args.fail_share * 16**4)
        api = BatchAPI(
            polls_to_finish=0,
            fail_once=lambda key, body: int(key[:4], 16) < cutoff,
            expire=lambda i: (
                args.expire_every > 0 and i % args.expire_every == args.expire_every - 1
            ),
        )
        rounds = 0
        with StandIn(router=api) as server:
            while rounds < 40:
                rounds += 1
                quiet(["bench", "run", manifest, "--out", str(root / "batch"), "--batch-api",
                       "--model", "openai:m", "--base-url", server.url + "/v1"])  # fmt: skip
                if not json.loads((root / "batch" / "run.json").read_text()).get("waiting"):
                    break
        live_run = json.loads((root / "live" / "run.json").read_text())
        batch_run = json.loads((root / "batch" / "run.json").read_text())
        same = sum(
            findings(path) == findings(root / "live" / "reports" / path.name)
            for path in (root / "batch" / "reports").glob("*.json")
        )
    sent = sum(len(job.lines) for job in api.jobs)
    billed = Counter(api.answered)
    every = args.expire_every
    expiring = f"jobs {every}, {2 * every}, ... expire" if every else "no job expires"
    print(f"clips {args.clips} (forge seed {args.seed}), lines failing once "
          f"{args.fail_share:g}, {expiring}")  # fmt: skip
    print(f"{'':24} {'live':>10} {'batch':>10}")
    print(f"{'reports':24} {live_run['done']:>10} {batch_run['done'] + batch_run['resumed']:>10}")
    print(f"batch reports with the live report's events, flags and calls: {same}")
    print(f"{'requests billed':24} {live_run['calls']:>10} {sum(billed.values()):>10}")
    print(f"{'cost (run.json) $':24} {live_run['cost_usd']:>10.6f} {batch_run['cost_usd']:>10.6f}")
    print(f"batch / live cost: {batch_run['cost_usd'] / live_run['cost_usd']:.3f}")
    print(f"rounds {rounds}, jobs {len(api.jobs)}, lines sent {sent}, "
          f"billed twice {sum(n > 1 for n in billed.values())}")  # fmt: skip


if __name__ == "__main__":
    main()

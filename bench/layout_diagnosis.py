"""Does the call layout change the diagnosis? Forge clips of several lengths, each with one
injected failure, and diagnose each with the scripted backbones at two layouts: two-window
segments of up to 32 frames per call (`--max-segment-windows 2 --max-frames-per-call 32`) and
four-window segments of up to 64 (`--max-segment-windows 4 --max-frames-per-call 64`).

Prints, per clip length and backbone, the calls per clip at each layout (and the ratio to
RoboGaze's published calls per clip, as `bench/request_cost.py` takes it), the failed attempts
(a reply that did not parse and was asked again), the parse losses (parts left not assessed or
incomplete because a reply never parsed, even after its retries), and how many clips gave the
same diagnosis at both layouts: the same events (type, dimension, span, severity, confidence),
the same rejected hypotheses (type, span) and the same flags. Segment names differ between
layouts, so the parts not assessed are compared by count. ``scripted:unruly`` finds one spoiled
event per specialist call, so its diagnosis follows the call count by design; for it, the parse
losses are the test.

    python bench/layout_diagnosis.py [--durations 8 30 60] [--seeds 3]
                                     [--models scripted:auto scripted:unruly]
                                     [--windows 2 4 | --compare "A" "B"]

``--windows A B`` compares segments of A and B windows instead (16 frames a window: up to
16 x windows frames per call), for example ``--windows 4 12`` for the segments a server that
takes 192 frames per request can be sent. ``--compare "A" "B"`` compares any two option
strings, for example ``--compare "--segments-per-clip 0" ""``: four-window segments whatever
the clip's length against the defaults, whose long clips get longer segments.
"""

from __future__ import annotations

import argparse
import io
import json
import shlex
import sys
import tempfile
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from request_cost import against_robogaze  # noqa: E402  (RoboGaze's published figures)

from gaze.bench.forge import forge_clip  # noqa: E402
from gaze.bench.forge.failures import FRAME_FAILURES, SCENE_FAILURES  # noqa: E402
from gaze.cli.main import run  # noqa: E402
from gaze.models.serving_limits import SHORTER_SEGMENTS  # noqa: E402

FRAMES_PER_WINDOW = 16


def layout(windows: int) -> str:
    """The options for segments of ``windows`` windows, each call carrying them whole."""
    frames = windows * FRAMES_PER_WINDOW
    option = f"--max-segment-windows {windows} --max-frames-per-call {frames}"
    assert windows != 2 or option == SHORTER_SEGMENTS  # the start-up errors' suggestion
    return option


FAILURES = [*SCENE_FAILURES, *FRAME_FAILURES]


def diagnose(clip: Path, instruction: str, model: str, layout: str) -> dict[str, Any]:
    argv = ["diagnose", str(clip), "-i", instruction, "--json", "--model", model, "--no-cache"]
    with redirect_stdout(io.StringIO()) as out, redirect_stderr(io.StringIO()) as err:
        code = run(argv + shlex.split(layout))
    if code != 0:
        raise SystemExit(f"gaze diagnose failed on {clip.name}: {err.getvalue().strip()}")
    report: dict[str, Any] = json.loads(out.getvalue())
    return report


def diagnosis(report: dict[str, Any]) -> tuple[Any, ...]:
    """What a reader of the report learns, without the layout's segment names."""
    events = sorted(
        (e["type"], e["dimension"], e["start_s"], e["end_s"], e["severity"], e["confidence"])
        for e in report["events"]
    )
    rejected = sorted((h["type"], h["start_s"], h["end_s"]) for h in report["rejected"])
    assessment = report["assessment"]
    return (
        events,
        rejected,
        sorted(report["flags"]),
        len(assessment["not_assessed"]),
        sorted(assessment["assessed"]),
    )


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--durations", type=float, nargs="+", default=[8, 30, 60])
    parser.add_argument("--seeds", type=int, default=3, help="clips per failure and length")
    parser.add_argument("--models", nargs="+", default=["scripted:auto", "scripted:unruly"])
    parser.add_argument("--windows", type=int, nargs=2, default=[2, 4], metavar=("A", "B"))
    parser.add_argument(
        "--compare",
        nargs=2,
        metavar=("A", "B"),
        help='two option strings to compare instead of --windows ("": the defaults)',
    )
    args = parser.parse_args(argv)
    layouts = {f"{n} windows": layout(n) for n in args.windows}
    if args.compare:
        layouts = {(opts or "defaults"): opts for opts in args.compare}
    names = list(layouts)
    print(f"layouts: {'; '.join(f'{k}: {v}' for k, v in layouts.items())}")
    print(
        f"| model | clip s | clips | calls/clip ({names[0]}) | calls/clip ({names[1]}) "
        f"| {names[1]} / RoboGaze's | failed attempts ({names[0]}) "
        f"| failed attempts ({names[1]}) | parse losses ({names[0]}) "
        f"| parse losses ({names[1]}) | same diagnosis | events |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        for duration in args.durations:
            clips = []
            for k, failure in enumerate(FAILURES):
                for seed in range(args.seeds):
                    path = Path(tmp) / f"{failure}_{duration:g}_{seed}.mp4"
                    row = forge_clip(
                        path, seed=100 * k + seed, failures=[failure], duration_s=duration
                    )
                    clips.append((path, row.instruction))
            for model in args.models:
                calls = {name: 0 for name in names}
                failed = {name: 0 for name in names}
                lost = {name: 0 for name in names}
                same = events = 0
                for path, instruction in clips:
                    seen = {}
                    for name in names:
                        report = diagnose(path, instruction, model, layouts[name])
                        calls[name] += sum(report["manifest"]["calls"].values())
                        failed[name] += report["manifest"]["failed_requests"]
                        assessment = report["assessment"]
                        lost[name] += len(assessment["not_assessed"])
                        lost[name] += len(assessment["incomplete"])
                        seen[name] = diagnosis(report)
                    same += seen[names[0]] == seen[names[1]]
                    events += len(seen[names[1]][0])
                n = len(clips)
                ratio = against_robogaze(calls[names[1]] / n, duration)
                print(
                    f"| {model} | {duration:g} | {n} | {calls[names[0]] / n:.1f} | "
                    f"{calls[names[1]] / n:.1f} | {ratio} | {failed[names[0]]} | "
                    f"{failed[names[1]]} | {lost[names[0]]} | {lost[names[1]]} "
                    f"| {same}/{n} | {events} |",
                    flush=True,
                )


if __name__ == "__main__":
    main(sys.argv[1:])

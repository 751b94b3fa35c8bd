"""Scoring speed: 1,000 clips with 2-4 events each, table and lexical judges, 1,000 resamples.

    python bench/scoring_speed.py [--clips 1000] [--bootstrap 1000]

Prints wall time per stage (judging, matching, bootstrap) for each judge, and the bootstrap
against a per-resample Python loop to show what vectorising buys.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from gaze.bench.score_cases import ClipCase, score_cases
from gaze.matching.similarity import LexicalJudge, Recorder, TableJudge
from gaze.metrics.bootstrap import bootstrap_ratios, group_sums
from gaze.schema.codebook import load_codebook
from gaze.schema.events import Event
from gaze.schema.manifest import ManifestClip

WORDS = (
    "red block blue cup gripper plate drawer arm table floats vanishes jumps blurs dark slides "
    "tilts bends cloth towel handle"
).split()


def make_cases(n: int, seed: int) -> list[ClipCase]:
    rng = np.random.default_rng(seed)
    book = load_codebook().codebook
    types = [(d.name, t.name) for d in book.dimensions for t in d.types]
    cases = []
    for c in range(n):

        def events(k: int) -> list[Event]:
            out = []
            for _ in range(k):
                dim, kind = types[rng.integers(len(types))]
                start = float(rng.uniform(0, 25))
                out.append(
                    Event(
                        dimension=dim,
                        type=kind,
                        start_s=round(start, 2),
                        end_s=round(start + float(rng.uniform(0, 4)), 2),
                        severity=float(rng.integers(1, 6)),
                        description=" ".join(rng.choice(WORDS, 6)),
                    )
                )
            return out

        refs = events(int(rng.integers(2, 5)))
        preds = events(int(rng.integers(2, 5)))
        row = ManifestClip(
            clip_id=f"c{c}",
            video=f"c{c}.mp4",
            instruction="pick",
            fps=10.0,
            duration_s=30.0,
            events=refs,
            condition_id=f"k{c // 3}",
            generator=f"g{c % 4}",
        )
        cases.append(ClipCase(row, preds, True))
    return cases


def loop_bootstrap(num: np.ndarray, den: np.ndarray, groups: list[str], n_boot: int) -> None:
    num_g, _ = group_sums(num, groups)
    den_g, _ = group_sums(den, groups)
    rng = np.random.default_rng(0)
    for _ in range(n_boot):
        pick = rng.integers(0, len(num_g), len(num_g))
        _ = num_g[pick].sum(axis=0) / den_g[pick].sum(axis=0)


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clips", type=int, default=1000)
    parser.add_argument("--bootstrap", type=int, default=1000)
    args = parser.parse_args(argv)
    cases = make_cases(args.clips, seed=0)
    n_events = sum(len(c.row.events) + len(c.preds) for c in cases)
    print(f"{args.clips} clips, {n_events} events, {args.bootstrap} resamples")
    recorder = Recorder(LexicalJudge())
    t0 = time.perf_counter()
    lexical = score_cases(cases, "robogaze", recorder, n_boot=args.bootstrap)
    lexical_s = time.perf_counter() - t0
    with tempfile.TemporaryDirectory() as tmp:
        table_path = Path(tmp) / "t.jsonl"
        table_path.write_text("".join(line + "\n" for line in recorder.table_lines()))
        t0 = time.perf_counter()
        table = score_cases(cases, "robogaze", TableJudge(table_path), n_boot=args.bootstrap)
        table_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    score_cases(cases, "robogaze", LexicalJudge(), n_boot=0)
    no_boot_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    score_cases(cases, "glide", LexicalJudge(), n_boot=args.bootstrap)
    glide_s = time.perf_counter() - t0
    assert json.dumps(lexical["ci"]) == json.dumps(table["ci"])  # replay is exact
    num = np.random.default_rng(0).random((args.clips, 8))
    den = np.ones_like(num)
    groups = [c.row.condition_id for c in cases]
    t0 = time.perf_counter()
    bootstrap_ratios(num, den, groups, args.bootstrap, seed=0)
    vec_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    loop_bootstrap(num, den, groups, args.bootstrap)
    loop_s = time.perf_counter() - t0
    print(
        f"robogaze + lexical judge : {lexical_s:6.2f} s  ({lexical['n_judged_pairs']} pairs judged)"
    )
    print(f"robogaze + table judge   : {table_s:6.2f} s  (identical numbers and intervals)")
    print(f"robogaze, no bootstrap   : {no_boot_s:6.2f} s")
    print(f"glide + lexical judge    : {glide_s:6.2f} s")
    print(
        f"bootstrap alone          : {vec_s * 1000:6.1f} ms vectorised vs "
        f"{loop_s * 1000:.1f} ms looped ({loop_s / vec_s:.0f}x)"
    )


if __name__ == "__main__":
    main(sys.argv[1:])

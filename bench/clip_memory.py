"""Peak memory of `gaze diagnose` (the pixel default, then the graph on the scripted model) as a
clip grows: a 1-minute and a 10-minute 720p clip.

    python bench/clip_memory.py [--minutes 1 10] [--fps 15] [--keep DIR]

Writes the clips (a textured scene panning slowly, 1280x720, mp4v) unless --keep holds them,
runs each command in a child process and prints its peak resident memory (ru_maxrss).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import cv2
import numpy as np


def write_clip(path: Path, minutes: float, fps: float) -> None:
    rng = np.random.default_rng(0)
    texture = cv2.resize(
        rng.integers(0, 255, (90, 200, 3), dtype=np.uint8), (2000, 720), cv2.INTER_CUBIC
    )
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter.fourcc(*"mp4v"), fps, (1280, 720))
    for i in range(int(minutes * 60 * fps)):
        x = int(360 + 300 * np.sin(i / (fps * 20)))
        frame = np.ascontiguousarray(texture[:, x : x + 1280])
        cv2.rectangle(frame, (600 + i % 200, 300), (680 + i % 200, 380), (0, 0, 255), -1)
        writer.write(frame)
    writer.release()


def measure(clip: Path, model: str | None) -> tuple[float, float]:
    extra = ["--model", model, "--no-cache"] if model else []
    probe = (
        "import resource, subprocess, sys; "
        "subprocess.run(sys.argv[1:], check=True, capture_output=True); "
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
    )
    argv = [sys.executable, "-m", "gaze", "diagnose", str(clip), "-i", "pan", "--json", *extra]
    started = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", probe, *argv], capture_output=True, text=True)
    wall = time.perf_counter() - started
    if out.returncode != 0:
        raise SystemExit(out.stderr[-800:])
    return int(out.stdout.strip()) / 1024, wall


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, nargs="+", default=[1, 10])
    parser.add_argument("--fps", type=float, default=15)
    parser.add_argument("--keep", type=Path)
    args = parser.parse_args(argv)
    folder = args.keep or Path(tempfile.mkdtemp())
    folder.mkdir(parents=True, exist_ok=True)
    print(f"{'clip':<16} {'command':<22} {'peak RSS MB':>12} {'wall s':>8}")
    for minutes in args.minutes:
        clip = folder / f"pan_{minutes:g}min_720p_{args.fps:g}fps.mp4"
        if not clip.exists():
            write_clip(clip, minutes, args.fps)
        for label, model in (("pixel default", None), ("graph scripted:auto", "scripted:auto")):
            rss, wall = measure(clip, model)
            print(f"{clip.stem[:16]:<16} {label:<22} {rss:>12.0f} {wall:>8.1f}")


if __name__ == "__main__":
    main(sys.argv[1:])

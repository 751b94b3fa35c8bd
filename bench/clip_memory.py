"""Peak memory of `gaze diagnose` (the pixel default, then the graph on the scripted model) as a
clip grows: a 1-minute and a 10-minute 720p clip.

    python bench/clip_memory.py [--minutes 1 10] [--fps 15] [--keep DIR]

Writes the clips (a textured scene panning slowly, 1280x720, mp4v) unless --keep holds them,
runs each command in a child process and prints the peak of its resident memory together with
its own children's (the graph decodes each clip in a child process), sampled every 20 ms from
/proc, beside the command's own peak (VmHWM).
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


def _kib(pid: int, field: str) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


def _tree(pid: int) -> list[int]:
    """The process and its descendants, now."""
    found, todo = [], [pid]
    while todo:
        one = todo.pop()
        found.append(one)
        try:
            children = Path(f"/proc/{one}/task/{one}/children").read_text().split()
        except OSError:
            continue
        todo += [int(c) for c in children]
    return found


def measure(clip: Path, model: str | None) -> tuple[float, float, float]:
    """(peak MB of the command and its children together, the command's own peak MB, wall s)."""
    extra = ["--model", model, "--no-cache"] if model else []
    argv = [sys.executable, "-m", "gaze", "diagnose", str(clip), "-i", "pan", "--json", *extra]
    started = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    together = own = 0
    while proc.poll() is None:
        together = max(together, sum(_kib(p, "VmRSS") for p in _tree(proc.pid)))
        own = max(own, _kib(proc.pid, "VmHWM"))
        time.sleep(0.02)
    wall = time.perf_counter() - started
    assert proc.stderr is not None
    if proc.returncode != 0:
        raise SystemExit(proc.stderr.read().decode()[-800:])
    return together / 1024, own / 1024, wall


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, nargs="+", default=[1, 10])
    parser.add_argument("--fps", type=float, default=15)
    parser.add_argument("--keep", type=Path)
    args = parser.parse_args(argv)
    folder = args.keep or Path(tempfile.mkdtemp())
    folder.mkdir(parents=True, exist_ok=True)
    print(f"{'clip':<16} {'command':<22} {'peak RSS MB':>12} {'of which gaze':>14} {'wall s':>8}")
    for minutes in args.minutes:
        clip = folder / f"pan_{minutes:g}min_720p_{args.fps:g}fps.mp4"
        if not clip.exists():
            write_clip(clip, minutes, args.fps)
        for label, model in (("pixel default", None), ("graph scripted:auto", "scripted:auto")):
            together, own, wall = measure(clip, model)
            print(f"{clip.stem[:16]:<16} {label:<22} {together:>12.0f} {own:>14.0f} {wall:>8.1f}")


if __name__ == "__main__":
    main(sys.argv[1:])

"""Wall time of light commands (`gaze --version`, `gaze schema --json`) beside `python -c pass`.

    python bench/cli_startup.py [--repeat 10]

Prints the median wall time of each over --repeat runs, and its ratio to bare Python.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time


def median_wall(argv: list[str], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        subprocess.run(argv, check=True, capture_output=True)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main(args: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=10)
    repeat = parser.parse_args(args).repeat
    base = median_wall([sys.executable, "-c", "pass"], repeat)
    print(f"{'command':<28} {'median s':>9} {'x python':>9}")
    print(f"{'python -c pass':<28} {base:>9.3f} {1.0:>9.1f}")
    for command in (["--version"], ["schema", "--json"], ["diagnose", "--help"]):
        wall = median_wall([sys.executable, "-m", "gaze", *command], repeat)
        print(f"{'gaze ' + ' '.join(command):<28} {wall:>9.3f} {wall / base:>9.1f}")


if __name__ == "__main__":
    main(sys.argv[1:])

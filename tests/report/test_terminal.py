"""The terminal report: fits the terminal it is shown in and never cuts a span, a type or a word."""

from __future__ import annotations

import io
import re

import pytest
from rich.console import Console

from gaze.report.terminal import render, terminal_width
from gaze.schema.events import Event
from gaze.schema.report import Assessment, Report, RunManifest

LONG = (
    "the gripper closes on the left mug while the right mug slides towards the table edge "
    "without being touched, then stops at the edge"
)


def report() -> Report:
    return Report(
        clip_id="rollout_0042_with_a_long_identifier",
        instruction="hang the mug on the second hook of the rack",
        events=[
            Event(
                dimension="physical_plausibility",
                type="other_implausible_dynamics",
                start_s=12.345,
                end_s=118.5,
                severity=3,
                description=LONG,
                evidence=["frames 12.4 s to 13.0 s: mug displacement 0.12 frame widths"],
                confidence=0.66,
            )
        ],
        assessment=Assessment(mode="graph", assessed=[], not_assessed=[], note="note"),
        manifest=RunManifest(gaze_version="0", codebook_version="1", codebook_hash="sha256:x"),
    )


def shown(width: int) -> str:
    out = io.StringIO()
    render(report(), Console(file=out, width=width, color_system=None))
    return out.getvalue()


@pytest.mark.parametrize("width", [60, 80, 120, 200])
def test_report_fits_the_width_and_keeps_every_word(width):
    text = shown(width)
    assert max(len(line) for line in text.splitlines()) <= width
    cut = [line for line in text.splitlines() if "…" in line]
    assert len(cut) == 1 and "codebook" in cut[0]  # only the hash is shortened, on purpose
    flat = " ".join(re.sub(r"[│┃]", " ", text).split())
    for needed in ("12.35-118.50", "other_implausible_dynamics", "0.66", "mug displacement"):
        assert needed in flat
    words = [w for w in re.sub(r"[│┃]", " ", text).split() if w in LONG.split()]
    assert set(LONG.split()) <= set(words)


def test_narrow_terminals_get_blocks_and_wide_ones_a_table():
    assert "┏" not in shown(80) and "12.35-118.50 s  other_implausible_dynamics" in shown(80)
    assert "┏" in shown(120)


def test_width_comes_from_columns_or_a_terminal(monkeypatch):
    monkeypatch.setenv("COLUMNS", "93")
    assert terminal_width() == 93
    monkeypatch.setenv("COLUMNS", "wide")
    assert terminal_width(default=77) in (77, *range(1, 10_000))


def test_many_problems_are_counted_by_kind_and_a_few_listed():
    """A 60 s clip's model run printed 21 'lies outside its segment' lines; past
    PROBLEMS_LISTED they are counted by kind (every one stays in the JSON report)."""
    many = [
        f"w{i}/physical_plausibility hypothesis 0 (object_teleportation {i}-{i + 1} s): lies "
        f"outside its segment ({4 * i:g}-{4 * i + 4:g} s); dropped"
        for i in range(19)
    ] + ["w3/visual_quality hypothesis 1 (blur 5-4 s): ends before it starts; dropped"] * 2
    text = io.StringIO()
    render(report().model_copy(update={"problems": many}), Console(file=text, width=100))
    out = text.getvalue()
    assert out.count("problem:") == 1
    assert "21 problems (19 x lies outside its segment, dropped; 2 x ends before it starts" in (
        " ".join(out.split())
    )
    text = io.StringIO()
    render(report().model_copy(update={"problems": many[:3]}), Console(file=text, width=200))
    assert text.getvalue().count("problem:") == 3  # a few are each shown as they are

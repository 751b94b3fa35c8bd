"""Escape sequences in an instruction or in model text never reach the terminal raw."""

from __future__ import annotations

import io
import json

from rich.console import Console

from gaze.cli.main import run
from gaze.report.terminal import render
from gaze.schema.report import Report

TITLE_CHANGE = "\x1b]0;pwned\x07"
CLEAR_SCREEN = "\x1b[2J"


def test_control_characters_are_shown_not_obeyed(capsys):
    assert run(["diagnose", "--demo", "--model", "scripted:auto", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    data["instruction"] = f"pick{TITLE_CHANGE} the block"
    data["problems"] = [f"critic (seg0): model said {CLEAR_SCREEN}\x9b31m hello"]
    buffer = io.StringIO()
    render(Report.model_validate(data), Console(file=buffer, width=100, force_terminal=True))
    shown = buffer.getvalue()
    assert TITLE_CHANGE not in shown and CLEAR_SCREEN not in shown and "\x9b" not in shown
    assert "\x07" not in shown
    assert "\\x1b]0;pwned\\x07" in shown  # visible, so a reader sees something was there

"""RoboJudge's reading of a judge's free-text answer, as its scorer (``code/evaluate.py``)
reads it; used only by ``--compat robojudge`` (gaze's own protocol reads score fields, never
free text).

- The axis of a row: its ``axis`` field (``PA`` or ``IA``); else ``PA`` when the answer names
  ``physical_adherence`` or the prompt says ``PHYSICAL REALISM``, ``IA`` when the answer names
  ``instruction_alignment`` or the prompt says ``manipulation task``; else the row is not read.
- The score: the first of these to match, in order -- ``"physical_adherence": N``,
  ``"instruction_alignment": N``, ``score`` or ``rating`` then ``:`` or ``=`` then N (any case),
  ``N / 5``, N at the very start of the answer -- else the last standalone digit 1-5 in it;
  else none (a null, counted).
"""

from __future__ import annotations

import re
from typing import Any

SCORE_PATTERNS = (
    re.compile(r'"physical_adherence"\s*:\s*([1-5])'),
    re.compile(r'"instruction_alignment"\s*:\s*([1-5])'),
    re.compile(r"(?:score|rating)\s*[:=]\s*([1-5])", re.IGNORECASE),
    re.compile(r"\b([1-5])\s*/\s*5\b"),
    re.compile(r"^\s*([1-5])\b"),
)
LAST_DIGIT = re.compile(r"\b[1-5]\b")


def free_text_score(text: Any) -> int | None:
    """The score RoboJudge's scorer reads from a free-text answer, or None."""
    answer = str(text)
    for pattern in SCORE_PATTERNS:
        found = pattern.search(answer)
        if found:
            return int(found.group(1))
    digits = LAST_DIGIT.findall(answer)
    return int(digits[-1]) if digits else None


def free_text_axis(row: dict[str, Any]) -> str | None:
    """``pa``, ``ia`` or None (a row RoboJudge's scorer does not read)."""
    axis = str(row.get("axis") or "").upper()
    if axis in ("PA", "IA"):
        return axis.lower()
    prompt, answer = str(row.get("prompt", "")), str(row.get("predict", ""))
    if "physical_adherence" in answer or "PHYSICAL REALISM" in prompt:
        return "pa"
    if "instruction_alignment" in answer or "manipulation task" in prompt:
        return "ia"
    return None

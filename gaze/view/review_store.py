"""What a person decides in ``gaze review``, kept so that nothing is ever lost: every decision
is appended to a log (``LABELS.jsonl.log``, one JSON line with the time and the annotator,
flushed to disk before the page hears back), and the labels (``LABELS.jsonl``, a gaze benchmark
manifest) are rewritten atomically from the decisions after each one.

The log is the record; the labels are derived from it. A page sends the revision it last saw
with each decision: a decision made on an out-of-date view (another page decided on the same
labels since) is refused, never applied over the other's.

Labels rows: the clip's manifest fields (video relative to the labels file) and ``events``: the
proposed events accepted or edited and the events added by hand; ``metadata.review`` holds the
clip's status (``done``, ``clean``, ``undecidable``), the annotator, the time, and per event its
provenance (``accepted``, ``edited`` or ``added``, and the method that proposed it).
"""

from __future__ import annotations

import fcntl
import json
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from gaze.atomic import atomic_write_text
from gaze.errors import GazeInputError, first_error
from gaze.schema.events import ScoringEvent
from gaze.schema.manifest import ManifestClip

STATUSES = ("done", "clean", "undecidable")


def check_labels(labels: Path) -> None:
    """A labels file edited by hand into something unreadable is refused, not replaced (the
    decision log beside it can rebuild it)."""
    if not labels.is_file():
        return
    try:
        text = labels.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise GazeInputError(
            f"{labels} is not a labels file gaze can read ({exc}); nothing was changed"
        ) from None
    log = labels.with_name(labels.name + ".log")
    if text.strip() and not log.is_file():
        raise GazeInputError(
            f"{labels} exists with no decision log beside it ({log.name}): it is not the labels "
            "of a review, and gaze does not write over it (name another file)"
        )
    for number, line in enumerate(text.splitlines(), 1):
        try:
            ManifestClip.model_validate_json(line)
        except ValidationError as exc:
            why = exc.errors()[0]["msg"]
            raise GazeInputError(
                f"{labels} line {number} is not a manifest row ({why}); gaze rewrites it from "
                f"{labels.name}.log: mend the line or move the file away (nothing was changed)"
            ) from None


@contextmanager
def hold(labels: Path) -> Iterator[None]:
    """One review server per labels file: a second one is refused in one line (the first keeps
    an exclusive lock on ``LABELS.lock`` while it runs)."""
    lock = labels.with_name(labels.name + ".lock")
    handle = open(lock, "a+", encoding="utf-8")  # noqa: SIM115 (held while the server runs)
    try:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise GazeInputError(
                f"another gaze review is already serving {labels}: use its page (two pages on "
                "one server are fine; two servers on one labels file are not)"
            ) from None
        yield
    finally:
        handle.close()


ACTIONS = ("accept", "reject", "edit", "add", "remove_added", "status")


@dataclass
class ReviewClip:
    """One clip under review: what the method proposed, and where its video is."""

    clip_id: str
    video: Path
    instruction: str
    proposed: list[ScoringEvent]
    method: str
    fps: float | None = None
    duration_s: float | None = None
    condition_id: str = ""
    generator: str = ""


@dataclass
class ClipState:
    """A clip's decisions so far."""

    decisions: dict[int, dict[str, Any]] = field(default_factory=dict)
    """Proposed event index -> its decision (accept, reject with a reason, edit with fields)."""
    added: list[dict[str, Any]] = field(default_factory=list)
    status: str = ""
    at: str = ""


class ReviewStore:
    """The decisions on a set of clips, in a log and a labels manifest beside it."""

    def __init__(self, labels: Path, clips: list[ReviewClip], annotator: str) -> None:
        self.labels = labels
        self.log = labels.with_name(labels.name + ".log")
        self.clips = {c.clip_id: c for c in clips}
        self.order = [c.clip_id for c in clips]
        self.annotator = annotator
        self.state = {c: ClipState() for c in self.order}
        self.revision = 0
        self.lock = threading.Lock()
        """Held while deciding; a reader of the state (the server) takes it too."""
        check_labels(labels)
        for entry in self._read_log():
            self._apply(entry)
            self.revision += 1

    def _read_log(self) -> list[dict[str, Any]]:
        if not self.log.exists():
            return []
        entries = []
        for number, line in enumerate(self.log.read_text(encoding="utf-8").splitlines(), 1):
            try:
                entry = json.loads(line)
            except json.JSONDecodeError:
                raise GazeInputError(
                    f"{self.log} line {number} is not JSON: the decision log is the record of "
                    "the review and is never rewritten; mend that line (nothing was changed)"
                ) from None
            if entry.get("clip_id") in self.state:
                entries.append(entry)
        return entries

    def _apply(self, entry: dict[str, Any]) -> None:
        state = self.state[entry["clip_id"]]
        action, value = entry["action"], entry.get("value") or {}
        if action in ("accept", "reject", "edit"):
            state.decisions[int(value["index"])] = {"decision": action, **value}
        elif action == "add":
            state.added.append(value["event"])
        elif action == "remove_added":
            del state.added[int(value["index"])]
        elif action == "status":
            state.status = value["status"]
        state.at = entry["at"]

    def check(self, clip_id: str, action: str, value: dict[str, Any]) -> None:
        """Raise ValueError with the reason a decision cannot be applied."""
        clip = self.clips.get(clip_id)
        if clip is None:
            raise ValueError(f"no clip {clip_id!r} in this review")
        if action not in ACTIONS:
            raise ValueError(f"unknown action {action!r}")
        if action in ("accept", "reject", "edit"):
            index = value.get("index")
            if not isinstance(index, int) or not 0 <= index < len(clip.proposed):
                raise ValueError(f"no proposed event {index!r}")
        if action == "reject" and not value.get("reason"):
            raise ValueError("a rejection needs a reason")
        if action == "edit":
            self._event({**clip.proposed[value["index"]].model_dump(), **value["fields"]})
        if action == "add":
            self._event(value["event"])
        if action == "remove_added" and not 0 <= value.get("index", -1) < len(
            self.state[clip_id].added
        ):
            raise ValueError("no such added event")
        if action == "status" and value.get("status") not in STATUSES:
            raise ValueError(f"status must be one of {STATUSES}")
        if action == "status" and value["status"] == "done":
            left = [i for i in range(len(clip.proposed)) if i not in self.state[clip_id].decisions]
            if left:
                raise ValueError(f"decide every proposed event first ({len(left)} left)")

    @staticmethod
    def _event(fields: dict[str, Any]) -> ScoringEvent:
        try:
            return ScoringEvent.model_validate(
                {k: v for k, v in fields.items() if k in ScoringEvent.model_fields}
            )
        except ValidationError as exc:
            raise ValueError(first_error(exc)) from None

    def decide(self, clip_id: str, action: str, value: dict[str, Any], seen: int) -> int:
        """Record one decision made on the view of revision ``seen``; returns the new revision.
        ValueError: the decision is invalid; RuntimeError: the view was out of date."""
        with self.lock:
            if seen != self.revision:
                raise RuntimeError(
                    "another page decided on these labels since this one loaded: reload it"
                )
            self.check(clip_id, action, value)
            entry = {
                "at": datetime.now(UTC).isoformat(timespec="seconds"),
                "annotator": self.annotator,
                "clip_id": clip_id,
                "action": action,
                "value": value,
            }
            with open(self.log, "a", encoding="utf-8") as handle:
                handle.write(json.dumps(entry) + "\n")
                handle.flush()
                os.fsync(handle.fileno())
            self._apply(entry)
            self.revision += 1
            self.write_labels()
            return self.revision

    def final_events(self, clip_id: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """The clip's label events and each one's provenance."""
        clip, state = self.clips[clip_id], self.state[clip_id]
        events, provenance = [], []
        for index, event in enumerate(clip.proposed):
            decision = state.decisions.get(index)
            if decision is None or decision["decision"] == "reject":
                continue
            fields = event.model_dump(mode="json", exclude_defaults=True)
            fields.pop("confidence", None)  # a label is not a prediction
            if decision["decision"] == "edit":
                fields.update(decision["fields"])
            events.append(fields)
            provenance.append({"from": clip.method, "as": decision["decision"] + "ed"})
        for added in state.added:
            events.append(added)
            provenance.append({"from": "hand", "as": "added"})
        order = sorted(range(len(events)), key=lambda i: (events[i]["start_s"], events[i]["end_s"]))
        return [events[i] for i in order], [provenance[i] for i in order]

    def row(self, clip_id: str) -> dict[str, Any]:
        clip, state = self.clips[clip_id], self.state[clip_id]
        events, provenance = self.final_events(clip_id)
        if state.status == "clean":
            events, provenance = [], []
        video = os.path.relpath(clip.video.resolve(), self.labels.resolve().parent)
        row: dict[str, Any] = {"clip_id": clip_id, "video": video, "instruction": clip.instruction}
        for key in ("fps", "duration_s"):
            if getattr(clip, key) is not None:
                row[key] = getattr(clip, key)
        for key in ("condition_id", "generator"):
            if getattr(clip, key):
                row[key] = getattr(clip, key)
        row["events"] = events
        row["metadata"] = {
            "review": {
                "status": state.status,
                "annotator": self.annotator,
                "at": state.at,
                "provenance": provenance,
            }
        }
        return row

    def write_labels(self) -> None:
        """The labels manifest: every clip with a status (done, clean or undecidable)."""
        rows = [self.row(c) for c in self.order if self.state[c].status]
        atomic_write_text(self.labels, "".join(json.dumps(r) + "\n" for r in rows))

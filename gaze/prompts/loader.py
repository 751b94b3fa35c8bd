"""Versioned prompt files: one per agent role, with their id, version, placeholders and hash.

A prompt file starts with a front-matter block (``id``, ``role``, ``version``, ``placeholders``)
and its body uses ``{name}`` placeholders; rendering demands exactly the listed names.
"""

from __future__ import annotations

import hashlib
import string
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the report's models load with the report, not with every prompt
    from gaze.schema.report import PromptRecord


@dataclass(frozen=True)
class Prompt:
    id: str
    role: str
    version: str
    placeholders: tuple[str, ...]
    body: str
    hash: str

    def render(self, **values: object) -> str:
        missing = set(self.placeholders) - set(values)
        extra = set(values) - set(self.placeholders)
        if missing or extra:
            raise KeyError(
                f"prompt {self.id}: missing {sorted(missing)}, unexpected {sorted(extra)}"
            )
        return self.body.format_map({k: str(v) for k, v in values.items()})

    @property
    def record(self) -> PromptRecord:
        from gaze.schema.report import PromptRecord

        return PromptRecord(id=self.id, version=self.version, hash=self.hash)


def parse_prompt(text: str) -> Prompt:
    if not text.startswith("---\n"):
        raise ValueError("prompt file must start with a front-matter block")
    header, body = text[4:].split("\n---\n", 1)
    meta = dict(line.split(":", 1) for line in header.splitlines() if line.strip())
    meta = {k.strip(): v.strip() for k, v in meta.items()}
    placeholders = tuple(p.strip() for p in meta.get("placeholders", "").split(",") if p.strip())
    used = {name for _, name, _, _ in string.Formatter().parse(body) if name}
    if used != set(placeholders):
        raise ValueError(
            f"prompt {meta.get('id')}: body uses {sorted(used)}, "
            f"front matter lists {sorted(placeholders)}"
        )
    return Prompt(
        id=meta["id"],
        role=meta["role"],
        version=meta["version"],
        placeholders=placeholders,
        body=body.strip() + "\n",
        hash="sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest(),
    )


@cache
def load_prompt(prompt_id: str) -> Prompt:
    text = (resources.files("gaze.prompts") / f"{prompt_id}.md").read_text(encoding="utf-8")
    return parse_prompt(text)


PROMPT_IDS: tuple[str, ...] = (
    "frames_system",
    "ground_task",
    "ground_scene",
    "observer",
    "router",
    "specialist",
    "critic",
)

"""The versioned failure codebook (DESIGN section 4): loading, validation, lookup, content hash.

The codebook is data (``codebook_v1.json``); this module is the only place that reads it. Every
report records ``version`` and ``hash`` so a result can be traced to the exact definitions used.
"""

from __future__ import annotations

import hashlib
import json
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError, model_validator

from gaze.errors import GazeInputError
from gaze.schema.dimensions import DIMENSIONS

GROUPS: tuple[str, ...] = ("task_semantics", "entity_consistency", "physics_observability")
TYPES_PER_DIMENSION = 5


class FailureType(BaseModel):
    """One failure type, written for annotators."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True, frozen=True)

    name: str
    """Snake-case identifier, unique across the codebook."""
    definition: str
    """One paragraph saying what an annotator must see to assign this type."""
    exclusion_rule: str
    """Which neighbouring type applies instead, and when; names at least one other type."""
    default_severity: int
    """Severity (1-5) to assume when nothing in the clip argues for another level."""
    evidence_limiting: bool
    """True when the type says the frames cannot decide (an explicit abstention)."""
    residual: bool
    """True when the type applies only if no named type of its dimension does."""


class Dimension(BaseModel):
    """One of the six diagnostic dimensions with its five types."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True, frozen=True)

    name: str
    """Dimension identifier (one of ``DIMENSIONS``)."""
    group: Literal["task_semantics", "entity_consistency", "physics_observability"]
    """The group of dimensions it belongs to."""
    description: str
    """What the dimension asks of a clip."""
    types: tuple[FailureType, ...]
    """Its failure types, in codebook order."""


class SeverityLevel(BaseModel):
    """One level of the 1-5 severity rubric."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True, frozen=True)

    level: int
    """The integer level, 1 (cosmetic) to 5 (catastrophic)."""
    label: str
    """Short name of the level."""
    definition: str
    """What the video must show for this level."""


class Codebook(BaseModel):
    """The whole codebook as loaded and validated."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True, frozen=True)

    version: str
    """Semantic version of the codebook data."""
    name: str
    """Human-readable title."""
    groups: dict[str, str]
    """Group name -> the question the group asks."""
    severity_rubric: tuple[SeverityLevel, ...]
    """The five severity levels, in order."""
    dimensions: tuple[Dimension, ...]
    """The six dimensions, in codebook order."""

    @model_validator(mode="after")
    def _check_structure(self) -> Codebook:
        names = [d.name for d in self.dimensions]
        if tuple(names) != DIMENSIONS:
            raise ValueError(f"dimensions must be exactly {list(DIMENSIONS)}, got {names}")
        if set(self.groups) != set(GROUPS):
            raise ValueError(f"groups must be exactly {list(GROUPS)}")
        type_names: list[str] = []
        for dim in self.dimensions:
            if len(dim.types) != TYPES_PER_DIMENSION:
                raise ValueError(f"dimension {dim.name} has {len(dim.types)} types, not 5")
            type_names.extend(t.name for t in dim.types)
        duplicates = sorted({n for n in type_names if type_names.count(n) > 1})
        if duplicates:
            raise ValueError(f"duplicate type names: {duplicates}")
        known = set(type_names)
        for dim in self.dimensions:
            for ftype in dim.types:
                if not 1 <= ftype.default_severity <= 5:
                    raise ValueError(f"{ftype.name}: default_severity must be 1-5")
                named = {w.strip(".,;:()") for w in ftype.exclusion_rule.split()} & known
                if not named - {ftype.name}:
                    raise ValueError(f"{ftype.name}: exclusion rule names no other existing type")
        if [lvl.level for lvl in self.severity_rubric] != [1, 2, 3, 4, 5]:
            raise ValueError("severity rubric must list levels 1..5 in order")
        return self

    # -- lookups -----------------------------------------------------------------------------
    def dimension(self, name: str) -> Dimension:
        for dim in self.dimensions:
            if dim.name == name:
                return dim
        raise KeyError(name)

    def type(self, name: str) -> FailureType:
        for dim in self.dimensions:
            for ftype in dim.types:
                if ftype.name == name:
                    return ftype
        raise KeyError(name)

    def dimension_of(self, type_name: str) -> str:
        for dim in self.dimensions:
            if any(t.name == type_name for t in dim.types):
                return dim.name
        raise KeyError(type_name)

    def type_names(self) -> list[str]:
        return [t.name for d in self.dimensions for t in d.types]


class LoadedCodebook(BaseModel):
    """A codebook together with the content hash of the data it was read from."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True, frozen=True)

    codebook: Codebook
    """The validated codebook."""
    hash: str
    """``sha256:`` + hex digest of the canonical JSON (sorted keys, no whitespace)."""

    @property
    def version(self) -> str:
        return self.codebook.version


def content_hash(data: object) -> str:
    """sha256 of canonical JSON, so re-formatting the file does not change the hash."""
    canonical = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def load_codebook_file(path: Path) -> LoadedCodebook:
    """Load and validate a codebook file; a malformed one raises GazeInputError in one line."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        book = Codebook.model_validate(data)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise GazeInputError(f"cannot read codebook {path}: {exc}") from exc
    except ValidationError as exc:
        first = exc.errors()[0]
        raise GazeInputError(f"invalid codebook {path}: {first['msg']}") from exc
    return LoadedCodebook(codebook=book, hash=content_hash(data))


@cache
def load_codebook() -> LoadedCodebook:
    """The shipped codebook v1 (cached: it is immutable)."""
    with resources.as_file(resources.files("gaze.schema") / "codebook_v1.json") as path:
        return load_codebook_file(path)

"""The codebook rendered into prompt text (always from the codebook file, never by hand)."""

from __future__ import annotations

from collections.abc import Iterable

from gaze.schema.codebook import load_codebook


def type_catalogue(dimension: str) -> str:
    dim = load_codebook().codebook.dimension(dimension)
    lines = []
    for t in dim.types:
        flags = [f"default severity {t.default_severity}"]
        if t.evidence_limiting:
            flags.append("evidence-limiting: use when the frames cannot decide")
        if t.residual:
            flags.append("residual")
        lines.append(
            f"- {t.name} ({'; '.join(flags)}): {t.definition} Exclusion: {t.exclusion_rule}"
        )
    return "\n".join(lines)


def severity_rubric() -> str:
    return "\n".join(
        f"{lvl.level} {lvl.label}: {lvl.definition}"
        for lvl in load_codebook().codebook.severity_rubric
    )


def dimension_list() -> str:
    return "\n".join(f"- {d.name}: {d.description}" for d in load_codebook().codebook.dimensions)


def type_rules(type_names: Iterable[str]) -> str:
    book = load_codebook().codebook
    return "\n".join(
        f"- {name}: {book.type(name).exclusion_rule}" for name in sorted(set(type_names))
    )

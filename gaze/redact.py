"""Secrets never leave the process: URLs lose user info, query values and key-like path parts,
and anything that looks like a key (or is the value of a key variable) becomes ``***``.

Applied to every message gaze prints, every problem a report records, the run settings and the
batch records; tests check each output for planted secrets.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Iterable
from urllib.parse import urlsplit

MASK = "***"
KEY_VARIABLES = ("OPENAI_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY")
"""Environment variables whose values are secrets wherever they turn up (plus every role's
``key_env``, registered when a backbone is built)."""

_extra_variables: set[str] = set()

_URL = re.compile(r"""[a-zA-Z][a-zA-Z0-9+.\-]*://[^\s'"<>\]\[]+(?:\[[^\s\]]*\][^\s'"<>]*)?""")
_KEY_LIKE = re.compile(
    r"""(?x)
    \b(?:sk|pk|rk)-[A-Za-z0-9_\-]{8,}        # OpenAI-style keys (not "task-relevant")
    | AIza[0-9A-Za-z_\-]{20,}                # Google API keys
    | (?:hf|gh[pousr])_[A-Za-z0-9]{16,}      # Hugging Face, GitHub tokens
    | (?i:bearer)\s+[A-Za-z0-9._\-]{8,}      # bearer tokens in headers quoted back
    """
)
_ASSIGNED = re.compile(
    r"(?i)\b(api[_-]?key|key|token|secret|password|passwd|auth|access[_-]?token)=([^\s&'\"]+)"
)
_LONG_OPAQUE = re.compile(r"^[A-Za-z0-9_\-]{32,}$")
"""A path segment this long and unbroken is taken for a key (no real path part looks so)."""


def register_key_variable(name: str) -> None:
    """A role's ``key_env``: its value is a secret wherever it turns up."""
    _extra_variables.add(name)


def _secret_values() -> list[str]:
    names = (*KEY_VARIABLES, *sorted(_extra_variables))
    return [v for v in (os.environ.get(n) for n in names) if v and len(v) >= 4]


def public_url(url: str) -> str:
    """scheme://host[:port]/path with no user info, no query or fragment, and key-like path
    segments masked. Unparseable text is masked whole rather than echoed."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        return MASK
    segments = [
        MASK if _LONG_OPAQUE.match(s) or _KEY_LIKE.fullmatch(s) else s
        for s in parts.path.split("/")
    ]
    if ":" in host:
        host = f"[{host}]"
    return f"{parts.scheme}://{host}{port}{'/'.join(segments)}"


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` with every URL made public, key-like strings and known secret values masked."""
    return _redacted(text, (*secrets, *_secret_values()))


@functools.lru_cache(maxsize=1024)
def _redacted(text: str, secrets: tuple[str, ...]) -> str:
    """``redact`` of ``text`` given the secrets now known. Kept: a clip's transcript notes every
    text of every request, and the same texts come back (the system prompt of every call, each
    frame's time label of the observer, specialist and critic calls of a segment), each three
    regular expressions over it (2 % of a fleet run's interpreter time before)."""
    for value in secrets:
        if value:
            text = text.replace(value, MASK)
    text = _URL.sub(lambda m: public_url(m.group(0)), text)
    text = _ASSIGNED.sub(lambda m: f"{m.group(1)}={MASK}", text)
    return _KEY_LIKE.sub(MASK, text)

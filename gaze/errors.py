"""The one exception type that means "the user gave us something we cannot use", and the one
way a validation failure becomes the one line that names it.

The CLI turns it into a one-line message on stderr and exit code 2; library callers can catch it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pydantic is not loaded for this module's sake
    from pydantic import ValidationError


class GazeInputError(ValueError):
    """Bad input (file, instruction, option, output path): reported in one line, exit code 2."""


def first_error(exc: ValidationError) -> str:
    """The first problem pydantic found, as ``where: what`` (``what`` alone at the top level)."""
    error = exc.errors()[0]
    where = ".".join(str(p) for p in error["loc"])
    return f"{where}: {error['msg']}" if where else error["msg"]

"""Status lines that name a file or an address."""

from __future__ import annotations

from rich.console import Console


def say_whole(console: Console, message: str) -> None:
    """``message`` as one line, for the terminal to wrap: Rich would break a path longer than
    the terminal inside a word (``page.htm`` / ``l``), which a copied path does not survive.
    Per line, not per console: a live status on the same console keeps Rich's fitting, which
    its redrawing counts on."""
    console.print(message, soft_wrap=True)

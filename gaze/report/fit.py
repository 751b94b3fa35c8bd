"""Tables that never cut what they exist to show: a table printed whole when it fits the
terminal's width, else each row as a short block whose values wrap only between words (a pipe
or a small window gets 80 columns, where a table of eleven numbers ellipsised every one)."""

from __future__ import annotations

from collections.abc import Sequence

from rich.columns import Columns
from rich.console import Console
from rich.measure import Measurement
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

UNBOUNDED = 100_000
"""Columns a table is measured in, to learn the width it needs."""


def print_fitted(
    console: Console,
    title: str,
    headers: Sequence[str],
    rows: Sequence[Sequence[str]],
    right: Sequence[str] = (),
) -> None:
    """``rows`` under ``headers`` as a table when every cell fits unwrapped in the console's
    width; else each row as its first cell, then ``header value`` pairs (columns named in
    ``right`` are right-aligned in the table)."""
    table = Table(title=title, title_justify="left")
    for header in headers:
        table.add_column(header, justify="right" if header in right else "left", no_wrap=True)
    for row in rows:
        table.add_row(*row)
    unbounded = console.options.update_width(UNBOUNDED)  # a measure is clamped to its width
    if Measurement.get(console, unbounded, table).maximum <= console.width:
        console.print(table)
        return
    console.print(Text(title, style="italic"))
    for row in rows:
        console.print(Text(row[0], style="bold"))
        pairs = [
            Text(f"{h} {v}", no_wrap=True) for h, v in zip(headers[1:], row[1:], strict=True) if v
        ]
        console.print(Padding(Columns(pairs, padding=(0, 3)), (0, 0, 0, 2)))

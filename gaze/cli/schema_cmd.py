"""`gaze schema [--json]`: the failure codebook."""

from __future__ import annotations

from typing import Any

import click
from rich.console import Console
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from gaze.cli.options import print_json
from gaze.schema.codebook import LoadedCodebook, load_codebook


def codebook_json(loaded: LoadedCodebook) -> dict[str, Any]:
    book = loaded.codebook
    return {
        "version": book.version,
        "hash": loaded.hash,
        "dimensions": [
            {
                "name": dim.name,
                "group": dim.group,
                "types": [
                    t.model_dump(
                        include={
                            "name",
                            "definition",
                            "exclusion_rule",
                            "default_severity",
                            "evidence_limiting",
                            "residual",
                        }
                    )
                    for t in dim.types
                ],
            }
            for dim in book.dimensions
        ],
        "severity_rubric": [lvl.model_dump() for lvl in book.severity_rubric],
    }


WIDE = 120
"""Below this many columns the codebook is a list, not tables: at 80 a table cut type names
('failed_…') and squeezed each definition into a column a word wide."""


def _marks(evidence_limiting: bool, residual: bool) -> str:
    return (" [dim](evidence-limiting)[/dim]" if evidence_limiting else "") + (
        " [dim](residual)[/dim]" if residual else ""
    )


def _as_list(console: Console, loaded: LoadedCodebook) -> None:
    """Each type as a heading line (name, severity, marks) and its two texts wrapped beneath."""
    book = loaded.codebook
    for dim in book.dimensions:
        console.print(f"\n[bold underline]{dim.name}[/bold underline]  [dim]({dim.group})[/dim]")
        for t in dim.types:
            marks = _marks(t.evidence_limiting, t.residual)
            console.print(f"\n  [bold]{t.name}[/bold]  severity {t.default_severity}{marks}")
            console.print(Padding(Text(t.definition), (0, 0, 0, 4)))
            console.print(
                Padding(Text("Use instead: " + t.exclusion_rule, style="dim"), (0, 0, 0, 4))
            )
    console.print("\n[bold underline]severity[/bold underline]")
    for lvl in book.severity_rubric:
        console.print(Padding(Text(f"{lvl.level} {lvl.label}: {lvl.definition}"), (0, 0, 0, 2)))


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print the codebook as JSON.")
def schema(as_json: bool) -> None:
    """Show the failure codebook (30 types in 6 dimensions) and the severity rubric."""
    loaded = load_codebook()
    if as_json:
        print_json(codebook_json(loaded))
        return
    console = Console()
    book = loaded.codebook
    console.print(f"[bold]{book.name}[/bold] v{book.version}  [dim]{loaded.hash}[/dim]")
    if console.width < WIDE:
        _as_list(console, loaded)
        return
    for dim in book.dimensions:
        table = Table(
            title=f"{dim.name}  [dim]({dim.group})[/dim]",
            title_justify="left",
            expand=True,
            show_lines=True,
        )
        table.add_column("type", no_wrap=True)
        table.add_column("sev", justify="center")
        table.add_column("definition", ratio=3)
        table.add_column("use instead when", ratio=2)
        for t in dim.types:
            marks = _marks(t.evidence_limiting, t.residual)
            table.add_row(
                f"[bold]{t.name}[/bold]{marks}",
                str(t.default_severity),
                t.definition,
                t.exclusion_rule,
            )
        console.print(table)
    rubric = Table(title="severity", title_justify="left", expand=True)
    rubric.add_column("level", justify="center")
    rubric.add_column("label")
    rubric.add_column("definition", ratio=1)
    for lvl in book.severity_rubric:
        rubric.add_row(str(lvl.level), lvl.label, lvl.definition)
    console.print(rubric)

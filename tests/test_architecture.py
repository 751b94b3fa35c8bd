"""Imports run the way docs/architecture.md says: every part of ``gaze`` imports only the parts
its row allows, function-local imports included, and every part has a row."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "gaze"
TABLE_ROW = re.compile(r"^\| `(?P<part>\w+)` \|[^|]*\|(?P<allowed>[^|]*)\|$")


def allowed_imports() -> dict[str, set[str]]:
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    rows = {}
    for line in text.splitlines():
        match = TABLE_ROW.match(line.strip())
        if match:
            allowed = {p.strip() for p in match["allowed"].split(",") if p.strip()}
            rows[match["part"]] = allowed
    return rows


def part_of(path: Path) -> str:
    first = path.relative_to(PACKAGE).parts[0]
    return first.removesuffix(".py")


def imported_parts(path: Path) -> set[tuple[str, int]]:
    """(part of gaze, line) of every import of another part in ``path``."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names: list[str] = []
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module == "gaze":
                names = [f"gaze.{alias.name}" for alias in node.names]
            elif node.module.startswith("gaze."):
                names = [node.module]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names if alias.name.startswith("gaze.")]
        for name in names:
            part = name.split(".")[1]
            if part != "__version__":
                found.add((part, node.lineno))
    return found


def test_every_part_has_a_row_and_every_row_a_part():
    rows = allowed_imports()
    parts = {part_of(p) for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts} - {
        "__init__"
    }
    assert parts == set(rows)


def test_no_import_runs_against_the_direction():
    rows = allowed_imports()
    wrong = []
    for path in sorted(PACKAGE.rglob("*.py")):
        part = part_of(path)
        if part == "__init__":
            continue
        for target, line in sorted(imported_parts(path)):
            if target != part and target not in rows[part]:
                wrong.append(f"{path.relative_to(ROOT)}:{line} imports gaze.{target}")
    assert wrong == []


def test_the_table_has_no_cycle():
    rows = allowed_imports()
    done: set[str] = set()

    def visit(part: str, path: tuple[str, ...]) -> None:
        assert part not in path, " -> ".join((*path, part))
        if part in done:
            return
        for target in rows[part]:
            visit(target, (*path, part))
        done.add(part)

    for part in rows:
        visit(part, ())


def test_the_checker_sees_a_function_local_import(tmp_path):
    module = tmp_path / "m.py"
    module.write_text("def f():\n    from gaze.settings.context import GazeContext\n")
    assert imported_parts(module) == {("settings", 2)}

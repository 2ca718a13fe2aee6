"""Docstrings and comment blocks say why in at most three lines: measurements, histories and long
reasoning go to a decision record (docs/decisions/). `python -m tests.unit.test_comment_lengths
services` lists the over-long blocks of any folders, longest first."""

import ast
import io
import sys
import tokenize
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).parents[2]
MAX_LINES = 3
# The roots held to the rule: every layer, and the benchmarks.
COVERED = ("domain", "services", "projections", "infra", "bench")
# Lines for the tools, not for readers: they neither count nor join two blocks into one.
TOOL_PREFIXES = ("#!", "# type:", "# noqa", "# fmt:", "# pragma", "# -*-", "# SPDX-", "# Copyright")


class Block(NamedTuple):
    lines: int
    where: str
    what: str


def _docstrings(tree: ast.Module) -> list[tuple[int, str, str]]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            text = ast.get_docstring(node)
            if text is not None:
                line = node.body[0].lineno
                name = "module" if isinstance(node, ast.Module) else node.name
                found.append((line, f"docstring of {name}", text))
    return found


def _comment_runs(source: str) -> list[tuple[int, int]]:
    """(first line, length) of each run of consecutive lines that hold only a comment."""
    lines: list[int] = []
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type != tokenize.COMMENT or token.line[: token.start[1]].strip():
            continue
        if not token.string.startswith(TOOL_PREFIXES):
            lines.append(token.start[0])
    runs: list[tuple[int, int]] = []
    for line in lines:
        if runs and runs[-1][0] + runs[-1][1] == line:
            runs[-1] = (runs[-1][0], runs[-1][1] + 1)
        else:
            runs.append((line, 1))
    return runs


def long_blocks(path: Path) -> list[Block]:
    source = path.read_text()
    name = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
    blocks = []
    for line, what, text in _docstrings(ast.parse(source)):
        count = sum(1 for row in text.splitlines() if row.strip())
        if count > MAX_LINES:
            blocks.append(Block(count, f"{name}:{line}", what))
    for line, count in _comment_runs(source):
        if count > MAX_LINES:
            blocks.append(Block(count, f"{name}:{line}", "comment block"))
    return blocks


def _files(roots: tuple[str, ...]) -> list[Path]:
    paths = (ROOT / root for root in roots)
    return sorted(p for path in paths for p in ([path] if path.is_file() else path.rglob("*.py")))


def over_long(roots: tuple[str, ...] = COVERED) -> list[Block]:
    blocks = [block for path in _files(roots) for block in long_blocks(path)]
    return sorted(blocks, key=lambda block: (-block.lines, block.where))


def test_docstrings_and_comment_blocks_are_at_most_three_lines() -> None:
    found = over_long()
    assert not found, "\n".join(f"{b.lines:3} {b.where} {b.what}" for b in found)


def test_the_check_sees_long_docstrings_and_comment_runs(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text(
        '#!/usr/bin/env python3\n"""One.\n\nTwo.\nThree.\nFour."""\n\n'
        "def f() -> None:\n"
        '    """Short."""\n'
        "    # one\n    # two\n    # three\n    # four\n    x = 1  # trailing\n"
        "    # type: ignore\n    # a\n    # b\n    # c\n"
    )
    assert long_blocks(sample) == [
        Block(4, f"{sample}:2", "docstring of module"),
        Block(4, f"{sample}:10", "comment block"),
    ]


if __name__ == "__main__":
    for block in over_long(tuple(sys.argv[1:]) or COVERED):
        print(f"{block.lines:3} {block.where} {block.what}")

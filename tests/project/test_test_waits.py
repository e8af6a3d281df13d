"""The tests wait on events, not on the clock: a fixed ``time.sleep`` in a test is either
a poll inside a loop that checks the event, or says on its line why nothing else will do
(a model's simulated thinking, a window that only the clock can slide, silence asserted).
CONTRIBUTING.md's rules say the same."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: The fakes and the support code simulate time (a model that thinks, a server that
#: stalls) and poll for the tests: their sleeps are what they are for.
EXEMPT = ("tests/fakes/", "tests/support/")


def _sleeps(tree: ast.AST) -> list[tuple[ast.Call, bool]]:
    """Every ``time.sleep(...)`` call, and whether a loop holds it (a poll)."""
    found: list[tuple[ast.Call, bool]] = []

    def visit(node: ast.AST, in_loop: bool) -> None:
        for child in ast.iter_child_nodes(node):
            looped = in_loop or isinstance(child, ast.While | ast.For)
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
                looped = False
            if (
                isinstance(child, ast.Call)
                and isinstance(child.func, ast.Attribute)
                and child.func.attr == "sleep"
                and isinstance(child.func.value, ast.Name)
                and child.func.value.id == "time"
            ):
                found.append((child, in_loop))
            visit(child, looped)

    visit(tree, False)
    return found


def test_every_fixed_sleep_in_a_test_is_a_poll_or_says_why() -> None:
    unexplained = []
    for path in sorted((ROOT / "tests").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel.startswith(EXEMPT):
            continue
        source = path.read_text(encoding="utf-8")
        lines = source.splitlines()
        for call, polled in _sleeps(ast.parse(source)):
            line = lines[call.lineno - 1]
            if not polled and "#" not in line.partition("time.sleep")[2]:
                unexplained.append(f"{rel}:{call.lineno}: {line.strip()}")
    assert unexplained == []

"""Reading beyond the diff: the planted cross-file bug found through the tools, and the
related code (callers, definitions) that one-shot reviews get up front."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pygit2
import pytest

from bot.domain.change import Change
from bot.domain.results import Placement, Severity
from bot.git.repo import range_change
from bot.git.snapshots import IndexSnapshot
from bot.review.pipeline import review
from bot.review.plan import PlanOptions, plan_review
from bot.review.related.finder import RelatedLimits, changed_names, used_names
from bot.review.related.nearest_files import nearest_files
from tests.fakes.k3 import K3Stub, Reply
from tests.fakes.k3.brain import (
    call,
    client_for,
    config,
    results_by_call,
    submit,
    tools_reply,
    user_text,
)
from tests.support.repos import commit, make_repo

TOKEN = "ghp_" + "R8mK2vQ9xL4tZ7wB1nC5yH3jD6fG0sP2aE8u"[:36]

SHAPES_OLD = '''"""Shapes."""


def scale(width, height, factor):
    """Scale a box."""
    return width * factor, height * factor


def area(width, height):
    return width * height
'''
SHAPES_NEW = SHAPES_OLD.replace(
    "def scale(width, height, factor):", "def scale(factor, width, height):"
)
RENDER = """from geometry.shapes import scale


def thumbnail(w, h):
    key = "{token}"
    return scale(w, h, 0.25)
"""
BOXES = '''class Box:
    """A box with a width and a height."""

    def __init__(self, width, height):
        self.width = width
        self.height = height


def make_box(width, height):
    """A new box; sizes must be positive."""
    return Box(width, height)
'''


@pytest.fixture(scope="module")
def planted(tmp_path_factory: pytest.TempPathFactory) -> pygit2.Repository:
    repo = make_repo(tmp_path_factory.mktemp("planted") / "repo")
    commit(
        repo,
        {
            "geometry/shapes.py": SHAPES_OLD,
            "geometry/boxes.py": BOXES,
            "app/render.py": RENDER.format(token=TOKEN),
            "README.md": "Shapes and boxes.\n",
        },
        "base",
    )
    commit(repo, {"geometry/shapes.py": SHAPES_NEW}, "scale: factor first")
    return repo


@pytest.fixture
def change(planted: pygit2.Repository) -> Change:
    return range_change(planted, "HEAD~1", "HEAD")


# -- the brain: reads the diff, looks around, reports only what it has seen ---------------

_SEARCH_ROW = re.compile(r"^(?P<path>[^\s:]+):(?P<line>\d+): (?P<text>.*)$")
_READ_HEADER = re.compile(r"^(?P<path>\S+): lines \d+-\d+ of [\d,]+")
_READ_ROW = re.compile(r"^\s*(?P<line>\d+) \| (?P<text>.*)$")


def _sites(text: str) -> list[tuple[str, int, str, str]]:
    """``(path, line, code, how)`` rows of search results and read_file blocks."""
    rows = []
    path = None
    for line in text.splitlines():
        if header := _READ_HEADER.match(line):
            path = header["path"]
        elif (row := _READ_ROW.match(line)) and path:
            rows.append((path, int(row["line"]), row["text"], "read"))
        elif row := _SEARCH_ROW.match(line):
            rows.append((row["path"], int(row["line"]), row["text"], "search"))
    return rows


def _signature_change(diff: str) -> tuple[str, int, str, str] | None:
    old = re.search(r"L\d+\s+-def (\w+)\(([^)]*)\)", diff)
    new = re.search(r"R(\d+)\s+\+def (\w+)\(([^)]*)\)", diff)
    if not old or not new or old[1] != new[2] or old[2] == new[3]:
        return None
    return new[2], int(new[1]), old[2], new[3]


def brain(body: dict[str, Any]) -> Reply:
    diff = user_text(body)
    changed = _signature_change(diff)
    if changed is None:
        return submit("Nothing to report.")
    name, line, old, new = changed
    seen = results_by_call(body)
    evidence = "\n".join([diff.split("## Related code", 1)[-1] if "## Related" in diff else ""])
    evidence += "\n" + "\n".join(result for _, _, result in seen)
    callers = [
        (path, n, code, how)
        for path, n, code, how in _sites(evidence)
        if f"{name}(" in code and "def " not in code and path != "geometry/shapes.py"
    ]
    confirmed = [c for c in callers if c[3] == "read"]
    if confirmed:
        path, n, code, _ = confirmed[0]
        finding = {
            "path": "geometry/shapes.py",
            "start_line": line,
            "end_line": line,
            "side": "RIGHT",
            "severity": "major",
            "category": "bug",
            "title": f"{name}() now takes ({new}); {path}:{n} still passes ({old})",
            "body": f"{path} line {n} calls `{code.strip()}` with the old order.",
            "evidence": f"def {name}({new})",
        }
        return submit(f"{name} changed its argument order.", [finding])
    offered = {t["function"]["name"] for t in body.get("tools", [])}
    if "read_file" not in offered:
        return submit("No callers seen.")
    if callers and not any(name == "read_file" for name, _, _ in seen):
        return tools_reply(call("read_file", path=callers[0][0]), reasoning="Read the caller.")
    if not seen:
        return tools_reply(
            call("search", pattern=f"{name}("),
            call("find_definition", symbol=name),
            reasoning=f"{name} changed its parameters: who calls it?",
        )
    return submit("No callers found.")


def test_planted_bug_is_found_through_the_tools_and_anchored_in_the_diff(
    change: Change,
) -> None:
    with K3Stub(brain=brain) as stub:
        result = review(change, config(), client_for(stub, "max"), related=False)
        requests = stub.chat_requests
    assert stub.brain_errors == []
    # The caller is in an unchanged file: the first prompt does not show it.
    assert "scale(w, h, 0.25)" not in requests[0].raw
    assert "app/render.py" not in requests[0].raw
    names = [[n for n, _, _ in results_by_call(r.body)] for r in requests]
    assert names == [[], ["search", "find_definition"], ["search", "find_definition", "read_file"]]
    assert [r.assistant_checked for r in requests] == [0, 1, 2]
    (finding,) = result.findings
    assert (finding.path, finding.start_line, finding.end_line, finding.side) == (
        "geometry/shapes.py",
        4,
        4,
        "RIGHT",
    )
    assert finding.placement is Placement.INLINE and finding.severity is Severity.MAJOR
    assert "app/render.py:6" in finding.title
    # The secret in the caller's file never reached the model.
    assert all(TOKEN not in r.raw for r in requests)


def test_without_tool_results_the_bug_is_not_found(change: Change) -> None:
    with K3Stub(brain=brain) as stub:
        result = review(change, config(agent__max_tool_calls=0), client_for(stub), related=False)
        requests = stub.chat_requests
    assert stub.brain_errors == []
    assert result.findings == []
    refused = [r for _, _, r in results_by_call(requests[-1].body)]
    assert refused and all(
        r.startswith("error: you have used the tool-call budget") for r in refused
    )


def test_one_shot_review_finds_it_in_the_related_code(change: Change) -> None:
    with K3Stub(brain=brain) as stub:
        result = review(change, config(), client_for(stub, "low"))
        (request,) = stub.chat_requests
    text = user_text(request.body)
    assert "Callers of scale (changed by this change):" in text
    assert "6 |     return scale(w, h, 0.25)" in text
    assert TOKEN not in request.raw and "[REDACTED:" in text  # the caller file's token
    (finding,) = result.findings
    assert (finding.path, finding.start_line, finding.placement) == (
        "geometry/shapes.py",
        4,
        Placement.INLINE,
    )
    with K3Stub(brain=brain) as stub:
        assert review(change, config(), client_for(stub, "low"), related=False).findings == []


# -- what the related code holds -------------------------------------------------------------


def _fenced(text: str, needle: str) -> bool:
    """Whether every occurrence of ``needle`` is inside an untrusted fence."""
    open_id: str | None = None
    for line in text.splitlines():
        opening = re.fullmatch(r"<untrusted-([0-9a-f]{12})>", line)
        if open_id is None and opening:
            open_id = opening[1]
        elif open_id is not None and line == f"</untrusted-{open_id}>":
            open_id = None
        elif needle in line and open_id is None:
            return False
    return True


def test_related_code_shows_definitions_of_what_the_change_uses(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    commit(repo, {"geometry/boxes.py": BOXES, "app/main.py": "def run():\n    return 1\n"})
    commit(
        repo,
        {
            "app/main.py": "from geometry.boxes import make_box\n\n\n"
            "def run():\n    return make_box(-1, 2)\n"
        },
    )
    change = range_change(repo, "HEAD~1", "HEAD")
    plan = plan_review(change, config(), PlanOptions(effort="low"))
    text = plan.messages[1]["content"]
    assert "Definition of make_box (used by this change):" in text
    assert "9 | def make_box(width, height):" in text
    assert '10 |     """A new box; sizes must be positive."""' in text
    assert _fenced(text, "def make_box(width, height)")
    (group,) = plan.groups
    assert group.extra_context in text


def test_related_code_leaves_out_what_the_diff_shows(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    base = "def helper(a, b):\n    return a\nanswer = helper(1, 2)\n\n\nprint(answer)\n"
    commit(repo, {"lib.py": base})
    commit(repo, {"lib.py": base.replace("helper(a, b)", "helper(b, a)")})
    plan = plan_review(range_change(repo, "HEAD~1", "HEAD"), config(), PlanOptions(effort="low"))
    # The only caller is in the diff's own hunk: nothing to add.
    assert plan.groups[0].extra_context == ""


def test_related_code_is_deterministic_and_bounded(change: Change) -> None:
    first = plan_review(change, config(), PlanOptions(effort="low"))
    again = plan_review(change, config(), PlanOptions(effort="low"))
    assert first.messages == again.messages
    small = plan_review(
        change,
        config(),
        PlanOptions(effort="low", related_limits=RelatedLimits(max_tokens=30, min_tokens=10)),
    )
    extra = small.groups[0].extra_context
    assert extra.startswith("[more related code left out")
    none = plan_review(
        change,
        config(review__max_prompt_tokens=first.estimated_tokens - 50),
        PlanOptions(effort="low"),
    )
    # No room left after the files: no related code, and the files are all still there.
    assert none.groups[0].extra_context == "" and len(none.files) == 1


def test_names_come_from_definitions_and_calls_on_changed_lines(change: Change) -> None:
    (file,) = change.diff.files
    assert changed_names(file, change.head) == ["scale"]
    # A definition is not a use of itself.
    assert used_names(file) == []


# -- where the search looks first, and how far -----------------------------------------------

CORE_OLD = "def resize(box, factor):\n    return box * factor\n"
CORE_NEW = "def resize(factor, box):\n    return box * factor\n"


def _caller(name: str, padding: int = 0) -> str:
    filler = "".join(f"# filler line {i} of {name}\n" for i in range(padding))
    return (
        f"{filler}from pkg.core.shapes import resize\n\n\ndef {name}(b):\n    return resize(b, 2)\n"
    )


@pytest.fixture(scope="module")
def spread(tmp_path_factory: pytest.TempPathFactory) -> pygit2.Repository:
    """Callers of a changed function near it and far from it, far ones first by path."""
    repo = make_repo(tmp_path_factory.mktemp("spread") / "repo")
    files = {
        "pkg/core/shapes.py": CORE_OLD,
        "pkg/core/sizes.py": _caller("near"),
        "pkg/parent.py": _caller("parent"),
        "pkg/core/deep/inner.py": _caller("inner"),
        # Before "pkg" in path order, and large: a walk in path order reads them first.
        **{f"aaa/far{i}.py": _caller(f"far{i}", padding=300) for i in range(8)},
    }
    commit(repo, files, "base")
    commit(repo, {"pkg/core/shapes.py": CORE_NEW}, "resize: factor first")
    return repo


def _callers_shown(text: str) -> list[str]:
    return re.findall(r"^(\S+\.py): lines \d+-\d+", text, re.MULTILINE)


def test_nearest_files_come_first_same_directory_then_up_then_down(
    spread: pygit2.Repository,
) -> None:
    head = range_change(spread, "HEAD~1", "HEAD").head
    assert head is not None
    order = [path for path, _ in nearest_files(head, ["pkg/core/shapes.py"])]
    assert sorted(order) == sorted(head.walk())  # every file, once
    assert order[:2] == ["pkg/core/shapes.py", "pkg/core/sizes.py"]  # same directory
    # One step up (the parent package) before one step down, then two steps (siblings).
    assert order[2:4] == ["pkg/parent.py", "pkg/core/deep/inner.py"]
    assert all(path.startswith("aaa/") for path in order[4:])
    sizes = dict(nearest_files(head, ["pkg/core/shapes.py"]))
    assert sizes["pkg/core/sizes.py"] == len(_caller("near").encode())
    # Without a change the walk starts at the root.
    assert next(nearest_files(head, []))[0] == "aaa/far0.py"
    # The staged snapshot (the hook's) lists the same files in the same order.
    staged = IndexSnapshot(spread)
    assert [path for path, _ in nearest_files(staged, ["pkg/core/shapes.py"])] == order


def test_related_search_reads_nearest_files_first_within_a_byte_bound(
    spread: pygit2.Repository,
) -> None:
    change = range_change(spread, "HEAD~1", "HEAD")
    assert change.head is not None
    # Room for the four files of pkg/ (each costs its size plus 4 kB), not for aaa/.
    pkg = [size or 0 for path, size in nearest_files(change.head, []) if path.startswith("pkg/")]
    near = RelatedLimits(max_scan_bytes=sum(pkg) + len(pkg) * 4_096, max_sites=10)
    plan = plan_review(change, config(), PlanOptions(effort="low", related_limits=near))
    text = plan.groups[0].extra_context
    assert "Callers of resize (changed by this change):" in text
    assert _callers_shown(text) == ["pkg/core/sizes.py", "pkg/parent.py", "pkg/core/deep/inner.py"]
    assert "[the search for related code stopped early: results are partial]" in text
    # Bounded in bytes, not time: the same prompt on every run.
    again = plan_review(change, config(), PlanOptions(effort="low", related_limits=near))
    assert again.messages == plan.messages
    # With room for everything, the far callers follow the near ones.
    everything = RelatedLimits(max_sites=20)
    whole = plan_review(change, config(), PlanOptions(effort="low", related_limits=everything))
    shown = _callers_shown(whole.groups[0].extra_context)
    assert shown[:3] == ["pkg/core/sizes.py", "pkg/parent.py", "pkg/core/deep/inner.py"]
    assert shown[3:] == [f"aaa/far{i}.py" for i in range(8)]
    assert "results are partial" not in whole.groups[0].extra_context

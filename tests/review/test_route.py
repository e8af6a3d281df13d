"""The router's decision on real commits (pygit2 repositories): what counts as formatting
only, and which route the built-in and the team's rules give."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.domain.route import Route
from bot.git.repo import range_change
from bot.review import decide_route
from bot.settings.repository import Config, parse_config
from tests.support.repos import commit, make_repo

Files = dict[str, str | None]


def route_of(tmp_path: Path, before: Files, after: Files, config: Config | None = None) -> Route:
    repo = make_repo(tmp_path / "repo")
    base = commit(repo, before, "before")
    head = commit(repo, after, "after")
    change = range_change(repo, str(base.id), str(head.id))
    return decide_route(change, config or Config(), "high")


@pytest.mark.parametrize(
    ("path", "old", "new"),
    [
        ("a.py", "if x:\n    y = 1\n", "if x:\n        y = 1\n"),  # reindented alike
        ("a.py", "f('a',b)\n", 'f("a", b)\n'),  # a formatter's quotes and spaces
        ("a.py", "x = 1\ny = 2\n", "x = 1\n\n\ny = 2   \n"),
        ("a.c", "int f(int a,int b){return a+b;}\n", "int f(int a, int b) {\n  return a + b;\n}\n"),
        ("a.go", "x := []int{1,2}\n", "x := []int{\n\t1,\n\t2}\n"),
        ("ci.yml", "a: 1   \nb: 2\n", "a: 1\nb: 2\n"),
    ],
)
def test_layout_only_is_formatting(tmp_path: Path, path: str, old: str, new: str) -> None:
    route = route_of(tmp_path, {path: old, "keep.md": "k\n"}, {path: new})
    assert (route.name, route.effort) == ("formatting", None)


@pytest.mark.parametrize(
    ("path", "old", "new"),
    [
        ("a.py", "if x:\n    y = 1\nz = 2\n", "if x:\n    y = 1\n    z = 2\n"),  # into the if
        ("a.py", "s = 'a b'\n", "s = 'a  b'\n"),  # inside a string
        ("a.py", "# a b\n", "# a  c\n"),
        ("a.c", "x = a - -b;\n", "x = a --b;\n"),  # two operators became one
        ("a.c", 'puts("a b");\n', 'puts("a  b");\n'),
        ("a.c", "x = y / *p;\n", "x = y /*p;\n"),
        ("ci.yml", "a:\n  b: 1\n", "a:\nb: 1\n"),  # YAML's indentation is its structure
        ("Makefile", "all:\n\techo\n", "all:\n    echo\n"),
        ("a.py", "x = (\n", "x = ( \n1)\n"),  # does not tokenize: in doubt, reviewed
    ],
)
def test_a_change_of_meaning_is_not_formatting(
    tmp_path: Path, path: str, old: str, new: str
) -> None:
    assert route_of(tmp_path, {path: old}, {path: new}).name != "formatting"


def test_added_deleted_and_renamed_files_are_not_formatting(tmp_path: Path) -> None:
    before: Files = {"a.py": "x = 1\n", "b.py": "y = 2\n"}
    route = route_of(tmp_path, before, {"b.py": None, "c.py": "z = 3\n"})
    assert route.name == "configured" and route.effort == "high"


def test_docs_only_and_what_is_not_docs(tmp_path: Path) -> None:
    docs = route_of(tmp_path / "1", {"README.md": "a\n"}, {"README.md": "b\n", "d/x.rst": "c\n"})
    assert (docs.name, docs.effort) == ("docs", "low")
    assert docs.reason == "docs only (README.md, d/x.rst)"
    cmake = route_of(tmp_path / "2", {"CMakeLists.txt": "a\n"}, {"CMakeLists.txt": "b\n"})
    assert cmake.name == "configured"
    # A dependency manifest is text, and sensitive before it is docs.
    reqs = route_of(tmp_path / "3", {"requirements.txt": "a\n"}, {"requirements.txt": "b\n"})
    assert (reqs.name, reqs.effort) == ("sensitive", "max")


def test_one_sensitive_file_makes_the_change_max(tmp_path: Path) -> None:
    before: Files = {"README.md": "a\n", "web/.github/x": "", ".github/workflows/ci.yml": "a\n"}
    route = route_of(tmp_path, before, {"README.md": "b\n", ".github/workflows/ci.yml": "b\n"})
    assert route == Route(
        "sensitive", "max", reason="sensitive: .github/workflows/ci.yml (CI workflows)"
    )


def test_ignored_files_do_not_route(tmp_path: Path) -> None:
    """A lock file the review never reads does not make it max."""
    route = route_of(
        tmp_path, {"yarn.lock": "a\n", "a.md": "a\n"}, {"yarn.lock": "b\n", "a.md": "b\n"}
    )
    assert route.name == "docs"


TEAM = """\
[[review.route]]
paths = ["billing/**"]
effort = "max"

[[review.route]]
paths = ["docs/**", "*.md"]
effort = "skip"
"""


def test_team_routes_first_match_wins(tmp_path: Path) -> None:
    config = parse_config(TEAM)
    # "max" applies when any file matches...
    mixed = route_of(
        tmp_path / "1",
        {"billing/a.py": "a\n", "b.md": "a\n"},
        {"billing/a.py": "b\n", "b.md": "b\n"},
        config,
    )
    assert (mixed.name, mixed.effort, mixed.reason) == (
        "team",
        "max",
        "review.route[0] (billing/**)",
    )
    # ...any other only when every file does.
    partly = route_of(
        tmp_path / "2", {"a.py": "a\n", "b.md": "a\n"}, {"a.py": "b\n", "b.md": "b\n"}, config
    )
    assert partly.name == "configured"
    skipped = route_of(
        tmp_path / "3",
        {"docs/a.rst": "a\n", "b.md": "a\n"},
        {"docs/a.rst": "b\n", "b.md": "b\n"},
        config,
    )
    assert (skipped.name, skipped.skip) == ("team", True)


def test_routing_off_leaves_the_team_routes(tmp_path: Path) -> None:
    config = parse_config("[review]\nrouting = false\n")
    assert (
        route_of(tmp_path / "1", {"auth/a.py": "a\n"}, {"auth/a.py": "b\n"}, config).effort
        == "high"
    )
    assert (
        route_of(tmp_path / "2", {"a.py": "x=1\n"}, {"a.py": "x = 1\n"}, config).name
        == "configured"
    )

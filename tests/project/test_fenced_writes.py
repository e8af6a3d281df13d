"""Every write a job makes to GitHub goes through the one fenced poster
(:class:`bot.usecases.poster.Poster`), read from the code with :mod:`ast` (nothing runs).

Where jobs run (the use cases, the commands, the workers, the Action), no module but the
poster imports a write of :mod:`bot.gh` (a review, a comment, a reply, a reaction,
threads resolved, a GraphQL mutation), creates a check run, or calls a write method of
PyGithub or of a check run itself; and each of the poster's writes asks the fence first.
A new path that forgot the fence cannot post: it fails here.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from tests.support.paths import ROOT

#: Where the jobs' code lives (``bot/gh`` defines the writes, the poster fences them).
WHERE_JOBS_RUN = ("bot/usecases", "bot/commands", "bot/action", "workers")
POSTER = ROOT / "bot" / "usecases" / "poster.py"

#: The writes of ``bot.gh``, by the name a module would import.
GH_WRITES = frozenset(
    {
        "post_review",
        "post_issue_comment",
        "post_once",
        "post_pr_comment",
        "post_thread_reply",
        "react",
        "address_threads",
        "run_mutation",
    }
)
#: ``Check.start(…)``, ``Check.skipped(…)``: a check run created.
CHECK_CREATES = frozenset({"start", "skipped"})
#: Write methods of PyGithub's objects, its requester, and a check run's ``complete``.
WRITE_METHODS = frozenset(
    {
        "create_review",
        "create_issue_comment",
        "create_comment",
        "create_review_comment",
        "create_review_comment_reply",
        "create_reaction",
        "create_check_run",
        "create_issue",
        "create_pull",
        "create_status",
        "create_git_ref",
        "create_file",
        "update_file",
        "delete_file",
        "edit",
        "merge",
        "dismiss",
        "add_to_labels",
        "remove_from_labels",
        "complete",
        "graphql_query",
        "graphql_named_mutation",
        "requestJsonAndCheck",
        "requestJson",
    }
)


def unfenced_writes(tree: ast.Module, where: str) -> list[str]:
    """The writes of ``tree`` that do not go through the poster: ``path:line what``."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("bot.gh"):
            for alias in node.names:
                if alias.name in GH_WRITES:
                    found.append(f"{where}:{node.lineno} imports {node.module}.{alias.name}")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            attr, owner = node.func.attr, node.func.value
            if isinstance(owner, ast.Name) and owner.id == "Check" and attr in CHECK_CREATES:
                found.append(f"{where}:{node.lineno} calls Check.{attr}")
            elif attr in WRITE_METHODS:
                found.append(f"{where}:{node.lineno} calls .{attr}()")
    return found


def _modules() -> Iterator[Path]:
    for top in WHERE_JOBS_RUN:
        yield from sorted((ROOT / top).rglob("*.py"))


def test_no_job_writes_to_github_but_through_the_fenced_poster() -> None:
    checked = [path for path in _modules() if path != POSTER]
    assert len(checked) > 40  # the scan reads the jobs' code, not nothing
    found = [
        hit
        for path in checked
        for hit in unfenced_writes(ast.parse(path.read_text()), str(path.relative_to(ROOT)))
    ]
    assert found == [], "write through bot.usecases.poster.Poster, which fences each write"


def test_the_check_finds_a_write_that_forgot_the_fence() -> None:
    forgot = """
from bot.gh.post import post_review
from bot.gh.checks import Check

def nothing_new(gh, repo, sha, check, thread):
    Check.skipped(repo, sha, external_id="d", title="t", summary="s")
    check.complete(None)
    repo.get_issue(1).create_comment("Addressed in abc1234.")
"""
    found = unfenced_writes(ast.parse(forgot), "forgot.py")
    assert [hit.split(" ", 1)[1] for hit in found] == [
        "imports bot.gh.post.post_review",
        "calls Check.skipped",
        "calls .complete()",
        "calls .create_comment()",
    ]


def test_each_write_of_the_poster_asks_the_fence_first() -> None:
    tree = ast.parse(POSTER.read_text())
    [poster] = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Poster"]
    methods = [n for n in poster.body if isinstance(n, ast.FunctionDef) and n.name != "__init__"]
    assert len(methods) >= 9
    unfenced = []
    for method in methods:
        body = method.body[1:] if ast.get_docstring(method) else method.body
        first = body[0]
        asks = (
            isinstance(first, ast.Expr)
            and isinstance(first.value, ast.Call)
            and ast.unparse(first.value) == "self.fence()"
        )
        if not asks:
            unfenced.append(method.name)
    assert unfenced == []

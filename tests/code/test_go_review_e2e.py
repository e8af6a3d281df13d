"""End to end on a Go repository built from the gin bundle: a pull request whose planted
bug needs a definition from another file gets that definition in the prompt (from the
symbol index kept beside the mirror) and its finding posted.

The PR adds ``Context.HasTrailingSlash``, which calls ``lastChar(c.FullPath())``;
``FullPath`` is "" when no route matched, and ``lastChar`` (in ``utils.go``, untouched
by the PR) panics on "". Only with ``lastChar``'s body in view is that a bug.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.code.grammars import available
from bot.usecases.review.run import run_review_job
from tests.support.job_world import CONFIG, REPO, job_world, submit
from tests.support.real_repos import checkout

NO_PARSERS = "the parsers extra is not installed: pip install 'gitneural[parsers]'"
pytestmark = pytest.mark.skipif(not available("go"), reason=NO_PARSERS)

ADDED = """
// HasTrailingSlash reports whether the matched route ends with a slash.
func (c *Context) HasTrailingSlash() bool {
\treturn lastChar(c.FullPath()) == '/'
}
"""
DEFINITION = "func lastChar(str string) uint8 {"
PANIC = 'panic("The length of the string can\'t be 0")'


def _gin_files() -> dict[str, str | None]:
    root = checkout("gin")
    files: dict[str, str | None] = {}
    for path in [*sorted(root.glob("*.go")), root / "go.mod"]:
        files[path.name] = path.read_text()
    return files


def test_a_go_pull_request_gets_the_definition_it_needs(tmp_path: Path) -> None:
    base = _gin_files()
    context = base["context.go"]
    assert context is not None and DEFINITION in (base["utils.go"] or "")
    changed = context + ADDED
    line = changed.split("\n").index("\treturn lastChar(c.FullPath()) == '/'") + 1
    finding = {
        "path": "context.go",
        "start_line": line,
        "end_line": line,
        "side": "RIGHT",
        "severity": "major",
        "category": "bug",
        "title": "lastChar panics when no route matched",
        "body": "FullPath() is empty when no route matched, and lastChar panics on an "
        "empty string.",
        "suggestion": "\tpath := c.FullPath()\n\treturn path != \"\" && lastChar(path) == '/'",
        "evidence": "\treturn lastChar(c.FullPath()) == '/'",
    }
    with job_world(
        tmp_path,
        base_files={**base, ".gitneural.toml": CONFIG},
        pr_files={"context.go": changed},
    ) as w:
        w.stub.push(submit(finding))
        head = w.gh.head_sha(REPO, w.number)
        outcome = run_review_job(w.job("opened"), w.ctx)
        [request] = w.stub.chat_requests
        [review] = w.reviews()

    prompt = "\n".join(
        str(m.get("content") or "") for m in request.body["messages"] if isinstance(m, dict)
    )
    # The definition from the other file, with the line that makes the call a bug.
    assert "Definition of lastChar (used by this change):" in prompt
    assert DEFINITION in prompt and PANIC in prompt
    assert outcome.status == "posted"
    [comment] = review["comments"]
    assert comment["path"] == "context.go" and comment["line"] == line
    assert "lastChar panics when no route matched" in comment["body"]
    # The index was built once for the head, beside the mirror.
    saved = list((tmp_path / "mirrors").rglob(f"gitneural/symbols/{head}.json.gz"))
    assert len(saved) == 1

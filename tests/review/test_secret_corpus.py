"""Every planted secret of the corpus (tests/support/secret_corpus.py) is kept from the
model and reported: alone through the redaction, then all at once through a review whose
K3 stub records what it was sent."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bot.domain.results import Severity
from bot.git.repo import range_change
from bot.review.pipeline import review
from bot.review.secrets.redaction import redact_path, redact_text, secret_notes
from tests.fakes.k3 import K3Stub, Reply
from tests.fakes.k3.brain import client_for, config
from tests.support.repos import commit, make_repo
from tests.support.secret_corpus import SLIPPED, Planted, corpus

CORPUS = corpus()


def _windows(needle: str, size: int = 12) -> set[str]:
    """Every ``size``-character piece of a secret: a partial leak is a leak too."""
    size = min(size, len(needle))
    return {needle[i : i + size] for i in range(len(needle) - size + 1)}


def _leaks(text: str, case: Planted) -> list[str]:
    pieces = set().union(*(_windows(n) for n in case.needles))
    return sorted(p for p in pieces if p in text or json.dumps(p)[1:-1] in text)


def test_the_corpus_covers_the_issue() -> None:
    names = [c.name for c in CORPUS]
    assert len(set(names)) == len(names) >= 80
    assert set(SLIPPED) <= set(names)
    assert {c.where for c in CORPUS} == {"file", "name", "title", "description"}


@pytest.mark.parametrize("case", CORPUS, ids=[c.name for c in CORPUS])
def test_each_planted_secret_is_redacted_and_reported(case: Planted) -> None:
    if case.where == "file":
        shown, hits = redact_text(case.content)
        reported = [h.kind for h in hits if h.report]
        assert shown.count("\n") == case.content.count("\n")
    elif case.where == "name":
        shown = redact_path(case.path)
        reported = [h.kind for h in redact_text(case.path)[1] if h.report]
    else:
        shown = redact_text(case.content)[0]
        title = case.content if case.where == "title" else ""
        reported = secret_notes(title, case.content if case.where == "description" else "")
    assert _leaks(shown, case) == []
    assert reported, f"{case.name}: redacted but not reported"


def _submit_at_once(body: dict[str, Any]) -> Reply:
    return Reply(
        reasoning="Reviewed.",
        tool_calls=[("submit_review", {"summary": "Reviewed.", "findings": []})],
    )


def test_a_review_of_the_whole_corpus_sends_none_and_reports_each(tmp_path: Path) -> None:
    files = {c.path: c.content for c in CORPUS if c.where in ("file", "name")}
    title = next(c for c in CORPUS if c.where == "title")
    description = next(c for c in CORPUS if c.where == "description")
    repo = make_repo(tmp_path / "repo")
    commit(repo, {"README.md": "planted secrets\n"}, "base")
    commit(repo, files, f"{title.content}\n\n{description.content}")
    change = range_change(repo, "HEAD~1", "HEAD")

    with K3Stub(brain=_submit_at_once) as stub:
        result = review(change, config(), client_for(stub, "low"))
        requests = stub.chat_requests
    assert requests and all(r.status == 200 for r in requests)
    sent = "".join(r.raw for r in requests)
    assert {c.name: _leaks(sent, c) for c in CORPUS if _leaks(sent, c)} == {}
    # The files were really shown (redacted), not skipped.
    assert sent.count("[REDACTED:") >= len(files)

    reported = {f.path for f in result.findings if f.source == "secret-scan"}
    assert all(f.severity is Severity.CRITICAL for f in result.findings)
    assert sorted(set(files) - reported) == []
    assert "change's title" in result.summary
    assert "change's description or commit messages" in result.summary
    # What GitNeural writes never repeats a secret (a finding's path is the file's own
    # name, which the pull request already shows).
    everything = json.dumps([[f.title, f.body] for f in result.findings] + [result.summary])
    assert {c.name: _leaks(everything, c) for c in CORPUS if _leaks(everything, c)} == {}

"""Tokens GitNeural sends versus a naive prompt, and a 3,000-file change end to end.

On the same change of real code (:mod:`benchmarks.corpus`: modules of the standard
library, each edited in a few places), it compares:

- the **naive prompt**: the whole diff plus every touched file in full, as a reviewer bot
  without context selection would send it;
- **GitNeural's one-shot prompt** (``--effort low``, the hook): the annotated diff, the
  enclosing functions of each change, the related code (callers and definitions) and the
  fixed instructions;
- **GitNeural's agentic first prompt** (``max``): the same plus the read-only tools' specs;
  the model then reads only what it asks for.

All three are counted with the core's own estimator (``bot.review.token_estimate``: one token per
3 bytes, an over-count), and also as the K3 stub counted the request it received.

Then a change touching 3,000 real files is reviewed against the K3 stub (which answers at
once: the time is GitNeural's own) with the default settings: the time, the parts it was
split into, and its coverage (files reviewed and skipped out of the change).
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any

import pygit2

from benchmarks.common import Row, k3_stub, row, within_refs
from benchmarks.corpus import BASE_BRANCH, add_change, build_repo, source_files
from benchmarks.standalone import main
from bot.domain.change import Change
from bot.effort import Effort
from bot.git.repo import diff_to_bytes, range_change
from bot.llm.client import K3Client
from bot.llm.settings import LLMSettings
from bot.review import PlanOptions, plan_review, review
from bot.review.token_estimate import estimate_tokens
from bot.settings.repository import Config
from bot.text import decode_text
from tests.fakes.k3 import Reply

TOKEN_FILES = 30
QUICK_TOKEN_FILES = 5
EDIT = {"hunks": 3, "inserted": 2}
LARGE_FILES = 3000
QUICK_LARGE_FILES = 60
#: GitNeural's one-shot prompt should cost at most this share of the naive one.
RATIO_BUDGET = 0.5
#: Was 120 s, restated in reference units from the runs of the 2-core machine.
LARGE_REFS = 30
LARGE_WHY = "2-core runs: 23.1 loaded, 22.9 quiet; was 120 s"
#: In quick mode the large change gets a small prompt budget, so that it still splits.
QUICK_PROMPT_TOKENS = 20_000


def _naive_text(repo: pygit2.Repository, change: Change) -> str:
    """The whole diff, then every touched file of the new version in full."""
    base = repo.revparse_single(BASE_BRANCH).peel(pygit2.Commit)
    head = repo.revparse_single(change.head_sha or "HEAD").peel(pygit2.Commit)
    diff = base.tree.diff_to_tree(head.tree)
    parts = [decode_text(diff_to_bytes(diff))]
    assert change.head is not None
    for file in change.diff:
        data = change.head.read(file.path)
        if data is not None:
            parts.append(f"File {file.path}:\n{decode_text(data)}")
    return "\n\n".join(parts)


def _submit_at_once(body: dict[str, Any]) -> Any:
    """The stub model: submits an empty review at once, so the time measured is ours."""
    return Reply(
        reasoning="Reviewed.",
        tool_calls=[("submit_review", {"summary": "Reviewed.", "findings": []})],
    )


def _stub_prompt_tokens(change: Change, config: Config, effort: Effort) -> tuple[int, int]:
    """(prompt tokens of the first request as the stub counted them, requests made)."""
    with k3_stub(brain=_submit_at_once) as stub:
        client = K3Client(LLMSettings(api_key=stub.api_key, base_url=stub.base_url, effort=effort))
        review(change, config, client)
        requests = stub.chat_requests
    first = requests[0].usage or {}
    return int(first.get("prompt_tokens", 0)), len(requests)


def _token_rows(repo: pygit2.Repository, files: int, quick: bool) -> list[Row]:
    corpus = source_files(files)
    branch = add_change(repo, "tokens", corpus, **EDIT)
    change = range_change(repo, BASE_BRANCH, branch)
    config = Config()
    naive = _naive_text(repo, change)
    naive_tokens = estimate_tokens(naive)
    low = plan_review(change, config, PlanOptions(effort="low"))
    high = plan_review(change, config, PlanOptions(effort="max"))
    label = f"{len(change.diff):,} files, {change.diff.lines_changed:,} changed lines"
    ratio = low.estimated_tokens / naive_tokens
    stub_low, _ = _stub_prompt_tokens(change, config, "low")
    stub_naive = -(-len(naive) // 4)  # the stub's own count: 4 characters per token
    related = sum(estimate_tokens(g.extra_context) for g in low.groups)
    return [
        row(f"tokens, naive prompt (whole diff + touched files): {label}", naive_tokens),
        row("tokens, GitNeural one-shot prompt (low, hook)", low.estimated_tokens),
        row("  of which related code (callers, definitions)", related),
        # A tiny quick-mode change is mostly the fixed instructions: no budget there.
        row(
            "tokens, GitNeural one-shot / naive",
            ratio,
            "x",
            "" if quick else f"<= {RATIO_BUDGET:g}x",
            None if quick else ratio <= RATIO_BUDGET,
        ),
        row("tokens, GitNeural agentic first prompt (max, with tool specs)", high.estimated_tokens),
        row("tokens as the K3 stub counted: naive", stub_naive),
        row("tokens as the K3 stub counted: GitNeural one-shot request", stub_low),
    ]


def _large_rows(repo: pygit2.Repository, files: int, quick: bool) -> list[Row]:
    corpus = source_files(files)
    branch = add_change(repo, "large", corpus, **EDIT)
    change = range_change(repo, BASE_BRANCH, branch)
    config = Config()
    if quick:
        config.review.max_prompt_tokens = QUICK_PROMPT_TOKENS
    with k3_stub(brain=_submit_at_once) as stub:
        client = K3Client(LLMSettings(api_key=stub.api_key, base_url=stub.base_url, effort="low"))
        started = time.perf_counter()
        result = review(change, config, client)
        elapsed = time.perf_counter() - started
        parts = len(stub.chat_requests)
    total = len(change.diff)
    reviewed = len(result.coverage.reviewed)
    skipped = len(result.coverage.skipped)
    accounted = reviewed + skipped == total
    label = f"{total:,}-file change"
    timed = f"{label}, K3 stub, time"
    return [
        row(timed, elapsed, "s")
        if quick  # too small to hold to the budget
        else within_refs(timed, elapsed, "s", LARGE_REFS, LARGE_WHY),
        row(f"{label}, parts reviewed in parallel", parts),
        row(f"{label}, files reviewed", reviewed),
        row(f"{label}, files skipped (with a reason)", skipped),
        row(
            f"{label}, every file reviewed or skipped with a reason",
            f"{reviewed + skipped:,} of {total:,}",
            "",
            "all",
            accounted,
        ),
        row(f"{label}, prompt tokens sent", result.usage.prompt_tokens),
    ]


def run(quick: bool = False) -> list[Row]:
    token_files = QUICK_TOKEN_FILES if quick else TOKEN_FILES
    large_files = QUICK_LARGE_FILES if quick else LARGE_FILES
    with tempfile.TemporaryDirectory(prefix="gitneural-bench-tokens-") as tmp:
        repo = build_repo(Path(tmp) / "repo.git", source_files(max(token_files, large_files)))
        return _token_rows(repo, token_files, quick) + _large_rows(repo, large_files, quick)


if __name__ == "__main__":
    raise SystemExit(main(run))

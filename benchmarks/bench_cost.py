"""Cost per review: prompt tokens, cached tokens on a re-review, GitHub API calls.

For a pull request editing 1, 30 and 300 real files (:mod:`benchmarks.corpus`: the
standard library's, the same whatever is installed), the whole review job runs as a
worker runs it (``bot.usecases.review.run.run_review_job``: the fake GitHub through PyGithub, the
PR fetched by git into the mirror, the K3 stub as the model, the default settings, so
effort ``max``):

1. ``opened``: the prompt tokens the stub counted, and the GitHub API calls the job made
   (token minting left out: once an hour, not per review);
2. one line of one file changes and is pushed, and ``/review full`` reviews the whole PR
   again. The job runner passes the files changed since the last review as
   ``changed_last``: they go last in the prompt, but the prompt the cache holds (the first
   review's) had that file in path order, so the cache can serve only what came before it;
3. the same line changes again and ``/review full`` runs again: now everything before
   the changed file, at the end, is the prefix the last prompt sent;
4. it changes a third time and the automatic ``synchronize`` re-review sends only what
   changed since the reviewed head, after the same system prompt and instructions.

For 2–4 the share of the prompt the stub served from its prefix cache (K3's automatic
cache: the longest prefix shared with an earlier prompt, above 256 tokens) is judged
against its physical limit (:mod:`benchmarks.prefix_limit`): the share of the prompt
before the first character that differs from the previous review's prompt, in the
characters the stub counts its tokens on. Nothing after that character can be cached.

Budgets: every re-review serves at least 95% of its limit from the cache, and nothing
changed before the pushed file's section, in this prompt or the previous one (the fence
around a file's diff is named by a hash of the diff, so a change starts at that file's
fence; a file moved to the end by ``changed_last`` starts it where the file was); GitHub
API calls per review (issue 5): the same small number for 1 and 300 files, at most 8.
"""

from __future__ import annotations

import itertools
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.common import Row, main, row
from benchmarks.corpus import SourceFile, edited, source_files
from benchmarks.prefix_limit import PrefixLimit, prefix_limit, serialised
from bot.jobs import ReviewJob
from bot.usecases.review.run import run_review_job
from tests.fakes.github import FakeGitHub
from tests.fakes.k3 import K3Stub, Reply
from tests.support.job_world import make_context

SIZES = (1, 30, 300)
#: Quick: one size (every size runs the same code), of two files: the pushed file is
#: one of several, so ``changed_last`` still moves it.
QUICK_SIZES = (2,)
EDIT = {"hunks": 3, "inserted": 2}
#: The share of its physical limit a re-review's prompt must be served from the cache.
CACHE_BUDGET = 0.95
CALLS_BUDGET = 8
REPO = "octo/app"

_deliveries = itertools.count(1)


@dataclass
class Review:
    prompt_tokens: int
    cached_tokens: int
    requests: int
    api_calls: int
    status: str
    #: Each request's prompt as the stub counted it.
    prompts: tuple[str, ...]

    @property
    def cached_share(self) -> float:
        return self.cached_tokens / self.prompt_tokens if self.prompt_tokens else 0.0


@dataclass
class Cost:
    files: int
    #: Where the pushed file sorts among the PR's files (0-based), and its path.
    place: int
    pushed: str
    first: Review
    full_first: Review
    full_again: Review
    resync: Review


class _Rig:
    def __init__(self, gh: Any, stub: Any, ctx: Any, number: int) -> None:
        self.gh, self.stub, self.ctx, self.number = gh, stub, ctx, number

    def review(self, trigger: str, **kwargs: Any) -> Review:
        """Run one job; what it cost."""
        self.ctx.tokens.get(1)  # minted once an hour in production, not per review
        self.gh.clear_requests()
        seen = len(self.stub.chat_requests)
        head = None if trigger == "command" else self.gh.head_sha(REPO, self.number)
        job = ReviewJob(
            installation_id=1,
            repo=REPO,
            pr_number=self.number,
            head_sha=head,
            trigger=trigger,
            delivery_id=f"cost-{next(_deliveries)}",
            **kwargs,
        )
        outcome = run_review_job(job, self.ctx)
        requests = self.stub.chat_requests[seen:]
        usages = [r.usage or {} for r in requests]
        calls = [r for r in self.gh.requests(kind="api") if not r.path.endswith("/access_tokens")]
        return Review(
            prompt_tokens=sum(u.get("prompt_tokens", 0) for u in usages),
            cached_tokens=sum(u.get("cached_tokens", 0) for u in usages),
            requests=len(usages),
            api_calls=len(calls),
            status=outcome.status,
            prompts=tuple(serialised(r.body) for r in requests),
        )


def _submit_nothing(_body: dict[str, Any]) -> Any:
    return Reply(
        reasoning="Read the change; nothing to report.",
        tool_calls=[("submit_review", {"summary": "Reviewed.", "findings": []})],
    )


@contextmanager
def _rig(root: Path, files: list[SourceFile]) -> Iterator[_Rig]:
    with FakeGitHub(root / "gh") as gh, K3Stub(brain=_submit_nothing, check_history=False) as stub:
        gh.create_repo(REPO, installation_id=1, files={f.path: f.data for f in files})
        gh.push(REPO, "feature", {f.path: edited(f, **EDIT) for f in files}, "Edit the files")
        number = gh.create_pull(REPO, head="feature", title="Edit files", body="Benchmark")
        yield _Rig(gh, stub, make_context(gh, stub, root), number)


def measure(count: int) -> Cost:
    files = source_files(count)
    with (
        tempfile.TemporaryDirectory(prefix="gitneural-bench-cost-") as tmp,
        _rig(Path(tmp), files) as rig,
    ):
        first = rig.review("opened")
        pushed = files[0]
        version = edited(pushed, **EDIT)

        def push_one_line(n: int) -> None:
            # One line changes: the edit marker on the file's first edited line.
            nonlocal version
            version = version.replace(b"  # edited", f"  # edited {n}".encode(), 1)
            rig.gh.push(REPO, "feature", {pushed.path: version}, f"Touch one line ({n})")

        push_one_line(1)
        full_first = rig.review("command", full=True)
        push_one_line(2)
        full_again = rig.review("command", full=True)
        push_one_line(3)
        resync = rig.review("synchronize")
    place = sorted(f.path for f in files).index(pushed.path)
    return Cost(count, place, pushed.path, first, full_first, full_again, resync)


def _cache_rows(where: str, name: str, r: Review, limit: PrefixLimit) -> list[Row]:
    ratio = r.cached_tokens / limit.tokens if limit.tokens else 0.0
    return [
        row(f"{where}: {name}: prompt from cache",
            round(100 * r.cached_share, 1), f"% of {r.prompt_tokens:,} tokens"),
        row(f"{where}: {name}: limit (prompt before the first change)",
            round(100 * limit.share, 1), "%", "nothing changed before the pushed file",
            limit.first_change_in_pushed_file),
        row(f"{where}: {name}: cached / limit",
            round(100 * ratio, 1), "%", f">= {CACHE_BUDGET:.0%}", ratio >= CACHE_BUDGET),
    ]  # fmt: skip  # a table, kept compact


def _rows(c: Cost) -> list[Row]:
    where = f"cost, {c.files}-file PR"
    rows = [
        row(f"{where}: prompt tokens, first review", c.first.prompt_tokens, "tokens"),
        row(
            f"{where}: GitHub API calls per review",
            c.first.api_calls,
            "",
            f"<= {CALLS_BUDGET}",
            c.first.api_calls <= CALLS_BUDGET,
        ),
    ]
    scenarios = (
        ("re-review after a 1-line push", c.full_again, c.resync),
        ("/review full, same line pushed again", c.full_first, c.full_again),
        (f"/review full, 1st push (file {c.place + 1} of {c.files} by path)",
         c.first, c.full_first),
    )  # fmt: skip  # a table, kept compact
    for name, previous, r in scenarios:
        limit = prefix_limit(previous.prompts, r.prompts, c.pushed)
        rows += _cache_rows(where, name, r, limit)
    return rows


def run(quick: bool = False) -> list[Row]:
    costs = [measure(n) for n in (QUICK_SIZES if quick else SIZES)]
    rows = [r for c in costs for r in _rows(c)]
    small, large = costs[0], costs[-1]
    calls = f"{small.first.api_calls} and {large.first.api_calls}"
    rows.append(
        row(
            f"GitHub API calls per review, {small.files} vs {large.files} files",
            calls,
            "",
            "the same",
            small.first.api_calls == large.first.api_calls,
        )
    )
    reviews = [(c.files, r) for c in costs for r in (c.first, c.full_first, c.full_again, c.resync)]
    bad = [f"{files}: {r.status}" for files, r in reviews]
    bad = [b for b in bad if not b.endswith("posted")]
    if bad:
        rows.append(row("cost: every review posted", ", ".join(bad), "", "all", False))
    return rows


if __name__ == "__main__":
    raise SystemExit(main(run))

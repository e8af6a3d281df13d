"""The one way a job writes to GitHub: every write fenced right before it is sent.

A review, an answer, the notice after a job's last retry: each write passes the job's
``fence`` first, which raises :class:`~bot.usecases.errors.FencedError` when this run may
no longer write (its claim or lock taken over, or the store unable to say). A path that
forgot to ask cannot post: the modules of :mod:`bot.usecases` write through a
:class:`Poster` only (``tests/project/test_fenced_writes.py`` checks every one of them).
The fence of a run nobody can take over (the CLI, the Action, the fast queue's 👀) is
:func:`~bot.usecases.errors.unfenced`.

Only writes are here; reads go to :mod:`bot.gh` directly. A write that GitHub may
repeat in parts (a check run's annotations, a batch of threads) is fenced once, before
its first request.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import github

from bot.gh.addressing import Addressed, Addressing, address_threads
from bot.gh.answers import post_pr_comment, post_thread_reply, react
from bot.gh.checks import Check, CheckOutput
from bot.gh.post import Posted, ReviewDraft, post_issue_comment, post_review
from bot.gh.pulls import lazy_repo
from bot.usecases.errors import unfenced


class Poster:
    """GitHub's writes for one run: ``fence()`` before each, then the write."""

    def __init__(
        self,
        gh: github.Github,
        fence: Callable[[], None] = unfenced,
        on_401: Callable[[], None] | None = None,
    ) -> None:
        self.gh, self.fence, self.on_401 = gh, fence, on_401

    # -- reviews and comments -------------------------------------------------------------

    def review(
        self,
        full_name: str,
        number: int,
        draft: ReviewDraft,
        *,
        already_posted: Callable[[], int | None],
    ) -> Posted:
        """The review, once (:func:`bot.gh.post.post_review`)."""
        self.fence()
        return post_review(
            lazy_repo(self.gh, full_name),
            number,
            draft,
            already_posted=already_posted,
            on_401=self.on_401,
        )

    def notice(self, full_name: str, number: int, body: str) -> int:
        """A plain comment on the PR (a notice that is not an answer)."""
        self.fence()
        return post_issue_comment(self.gh, full_name, number, body)

    def pr_comment(
        self, full_name: str, number: int, body: str, *, already_posted: Callable[[], int | None]
    ) -> tuple[int, bool]:
        """An answer on the PR's conversation, once: ``(id, found already posted)``."""
        self.fence()
        return post_pr_comment(
            self.gh, full_name, number, body, already_posted=already_posted, on_401=self.on_401
        )

    def thread_reply(
        self,
        full_name: str,
        number: int,
        top_comment_id: int,
        body: str,
        *,
        already_posted: Callable[[], int | None],
    ) -> tuple[int, bool]:
        """A reply in a review thread, once: ``(id, found already posted)``."""
        self.fence()
        return post_thread_reply(
            self.gh,
            full_name,
            number,
            top_comment_id,
            body,
            already_posted=already_posted,
            on_401=self.on_401,
        )

    def react(self, full_name: str, number: int, comment_id: int, content: str) -> None:
        """A reaction to a PR conversation comment (GitHub keeps one of each per user)."""
        self.fence()
        react(self.gh, full_name, number, comment_id, content, on_401=self.on_401)

    def address_threads(self, threads: Sequence[Addressing]) -> Addressed:
        """Each thread answered "Addressed in …" and resolved (one request per 25)."""
        self.fence()
        return address_threads(self.gh, threads, on_401=self.on_401)

    # -- check runs -----------------------------------------------------------------------

    def start_check(
        self, full_name: str, head_sha: str, *, external_id: str, summary: str
    ) -> Check:
        """A check run created ``in_progress``."""
        self.fence()
        return Check.start(
            lazy_repo(self.gh, full_name),
            head_sha,
            external_id=external_id,
            summary=summary,
            on_401=self.on_401,
        )

    def skipped_check(
        self,
        full_name: str,
        head_sha: str,
        *,
        external_id: str,
        title: str,
        summary: str,
        conclusion: str,
    ) -> Check:
        """A check run created completed (``skipped``, or ``failure`` for a gate)."""
        self.fence()
        return Check.skipped(
            lazy_repo(self.gh, full_name),
            head_sha,
            external_id=external_id,
            title=title,
            summary=summary,
            on_401=self.on_401,
            conclusion=conclusion,
        )

    def complete_check(self, check: Check, output: CheckOutput) -> None:
        """A check run completed (one PATCH per 50 annotations)."""
        self.fence()
        check.complete(output)

"""The fake GitHub's test-facing controls: injected faults, triggers that change a pull
request mid-task, and what the fake saw (the request log, stored reviews, comments,
reactions and check runs). Mixed into :class:`~tests.fakes.github.server.FakeGitHub`."""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from tests.fakes.github.app import public
from tests.fakes.github.shapes import Json
from tests.fakes.github.store import Fault, RequestRecord, Store, Trigger


class FaultsAndRecords:
    store: Store
    RPC_METHODS: frozenset[str]

    # -- faults -------------------------------------------------------------------------

    def fail(
        self,
        method: str,
        path: str,
        *,
        status: int = 502,
        times: int = 1,
        headers: Mapping[str, str] | None = None,
        body: Any = None,
        apply: bool = False,
        delay: float = 0.0,
    ) -> None:
        """Answer the next ``times`` requests to ``method path`` with ``status``.

        ``path`` is relative to the API root (``/repos/o/r/pulls/1/reviews``) or a git path
        (``/o/r.git/git-upload-pack``); ``*`` makes it a glob, method ``*`` any method.
        ``body``: a dict (JSON), a str (HTML) or None (GitHub's default JSON). With
        ``apply=True`` the request is carried out first, then answered with the fault, so a
        client that retries a POST posts twice.
        """
        fault = Fault(method.upper(), path, status, dict(headers or {}), body, times, apply, delay)
        with self.store.lock:
            self.store.faults.append(fault)

    def fail_secondary_rate_limit(
        self, method: str, path: str, *, retry_after: int = 1, times: int = 1, status: int = 403
    ) -> None:
        self.fail(
            method,
            path,
            status=status,
            times=times,
            headers={"retry-after": str(retry_after)},
            body={
                "message": "You have exceeded a secondary rate limit. Please wait a few "
                "minutes before you try again.",
                "documentation_url": "https://docs.github.com/rest/overview/rate-limits",
            },
        )

    def fail_primary_rate_limit(
        self, method: str, path: str, *, reset_in: float = 1.0, times: int = 1
    ) -> None:
        self.fail(
            method,
            path,
            status=403,
            times=times,
            headers={
                "x-ratelimit-remaining": "0",
                "x-ratelimit-reset": str(int(time.time() + reset_in)),
            },
            body={
                "message": "API rate limit exceeded for installation ID 1.",
                "documentation_url": "https://docs.github.com/rest/overview/rate-limits",
            },
        )

    def clear_faults(self) -> None:
        with self.store.lock:
            self.store.faults.clear()
            self.store.triggers.clear()

    def when(
        self,
        method: str,
        path: str,
        action: str,
        *args: Any,
        times: int = 1,
        **kwargs: Any,
    ) -> None:
        """After a request to ``method path`` succeeds, call the helper ``action`` — e.g.
        ``gh.when("POST", "/repos/o/r/check-runs", "close_pull", "o/r", 1)`` closes the PR
        while its review runs. ``path`` may be a glob; works over RPC too."""
        if action not in self.RPC_METHODS:
            raise ValueError(f"no helper named {action!r}")
        helper = getattr(self, action)
        trigger = Trigger(method.upper(), path, times, lambda: helper(*args, **kwargs))
        with self.store.lock:
            self.store.triggers.append(trigger)

    # -- what happened ------------------------------------------------------------------

    def requests(
        self, method: str | None = None, path: str | None = None, kind: str | None = None
    ) -> list[RequestRecord]:
        """Logged requests, oldest first; ``path`` may be a glob (``/repos/o/r/pulls/*``)."""
        return self.store.filtered_log(method, path, kind)

    def forbidden_requests(self) -> list[RequestRecord]:
        """Requests that wrote contents, refs or merges, pushed, edited or approved."""
        return [r for r in self.store.filtered_log() if r.forbidden is not None]

    def clear_requests(self) -> None:
        with self.store.lock:
            self.store.log.clear()

    def _select(self, objects: dict[int, Json], **where: Any) -> list[Json]:
        with self.store.lock:
            items = list(objects.values())
        return [o for o in items if all(o.get(k) == v for k, v in where.items())]

    def reviews(self, full_name: str, number: int) -> list[Json]:
        """Stored reviews of the PR, each with its inline ``comments`` and ``event``."""
        out = []
        for r in self._select(self.store.reviews, _repo=full_name, _pull=number):
            comments = self._select(self.store.review_comments, pull_request_review_id=r["id"])
            out.append(
                {**public(r), "event": r["_event"], "comments": [public(c) for c in comments]}
            )
        return out

    def review_comments(self, full_name: str, number: int) -> list[Json]:
        found = self._select(self.store.review_comments, _repo=full_name, _pull=number)
        return [public(c) for c in found]

    def issue_comments(self, full_name: str, number: int) -> list[Json]:
        found = self._select(self.store.issue_comments, _repo=full_name, _issue=number)
        return [public(c) for c in found]

    def reactions(self, full_name: str, comment_id: int) -> list[Json]:
        found = self._select(self.store.reactions, _target=f"issue_comment:{comment_id}")
        return [public(r) for r in found if r["_repo"] == full_name]

    def check_runs(self, full_name: str, head_sha: str | None = None) -> list[Json]:
        """Check runs with all their ``annotations`` (accumulated over updates)."""
        where = {"_repo": full_name} | ({"head_sha": head_sha} if head_sha else {})
        return [
            {**public(r), "annotations": list(r["_annotations"])}
            for r in self._select(self.store.check_runs, **where)
        ]

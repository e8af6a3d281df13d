"""Closing the threads whose findings a push fixed: every one of a review in one request.

:func:`address_threads` sends one GraphQL mutation document for up to :data:`BATCH`
threads (one more request per further :data:`BATCH`): per thread, an aliased
``addPullRequestReviewThreadReply`` (``r0``, ``r1`` …: "Addressed in …") and
``resolveReviewThread`` (``s0``, ``s1`` …), which GitHub runs in order, the reply before
its resolution. A thread whose reply is there already (found by its marker when the
threads were read) is only resolved: its reply field is skipped
(``@include(if: $reply0)``). One document per size, 1 to :data:`BATCH`, is made at
import through :func:`~bot.gh.graphql.document`, so the tests validate every one of
them against GitHub's schema.

A mutation is a write: it is never retried blindly. The caller claims each thread in
the store before the request; GitHub may answer some aliases with errors (a thread gone,
one GitNeural may not resolve) and run the others: what ran and what failed come back,
thread by thread, for the caller to record.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import github

from bot.errors import GitHubError
from bot.gh.graphql import Document, document, run_mutation

#: Threads closed by one request at most: 2 mutations each, well within what GitHub
#: takes in one document (and the secondary limit's points a minute).
BATCH = 25


def _address_text(size: int) -> str:
    variables = ", ".join(f"$t{i}: ID!, $b{i}: String!, $reply{i}: Boolean!" for i in range(size))
    fields = "".join(
        f"""
  r{i}: addPullRequestReviewThreadReply(
    input: {{pullRequestReviewThreadId: $t{i}, body: $b{i}}}
  ) @include(if: $reply{i}) {{
    comment {{ fullDatabaseId }}
  }}
  s{i}: resolveReviewThread(input: {{threadId: $t{i}}}) {{
    thread {{ id isResolved }}
  }}"""
        for i in range(size)
    )
    return f"mutation AddressThreads{size}({variables}) {{{fields}\n}}"


#: ``ADDRESS_THREADS[n]`` replies in and resolves ``n`` threads.
ADDRESS_THREADS: dict[int, Document] = {
    n: document(f"AddressThreads{n}", _address_text(n), mutation=True) for n in range(1, BATCH + 1)
}


@dataclass(frozen=True)
class Addressing:
    """One thread to close: its node id (``PRRT_…``) and the reply to leave in it, or
    None when GitNeural's reply is there already."""

    node_id: str
    body: str | None


@dataclass
class Addressed:
    """What became of the threads: resolved ones, and why the others are not."""

    resolved: list[str] = field(default_factory=list)
    #: Node id -> one line (the alias's error, or the whole request's).
    failed: dict[str, str] = field(default_factory=dict)
    #: Requests sent.
    requests: int = 0

    def summary(self) -> str:
        """The failures in one line."""
        return "; ".join(f"{node}: {why}" for node, why in self.failed.items())


def _batch_variables(batch: Sequence[Addressing]) -> dict[str, object]:
    variables: dict[str, object] = {}
    for i, item in enumerate(batch):
        variables[f"t{i}"] = item.node_id
        variables[f"b{i}"] = item.body or ""
        variables[f"reply{i}"] = item.body is not None
    return variables


def address_threads(
    gh: github.Github,
    threads: Sequence[Addressing],
    *,
    on_401: Callable[[], None] | None = None,
) -> Addressed:
    """Reply in and resolve every thread of ``threads``, :data:`BATCH` per request.

    A request that fails as a whole stops the rest (a rate limit or an outage would
    refuse them too): its threads and the ones not sent are reported failed."""
    done = Addressed()
    for start in range(0, len(threads), BATCH):
        batch = threads[start : start + BATCH]
        try:
            answer = run_mutation(
                gh,
                ADDRESS_THREADS[len(batch)],
                _batch_variables(batch),
                doing=f"resolving {len(batch)} addressed review threads",
                on_401=on_401,
            )
        except GitHubError as exc:
            done.requests += 1
            for item in threads[start:]:
                done.failed[item.node_id] = str(exc)
            return done
        done.requests += 1
        for i, item in enumerate(batch):
            error = answer.errors.get(f"r{i}") or answer.errors.get(f"s{i}")
            thread = (answer.data.get(f"s{i}") or {}).get("thread") or {}
            if error is None and thread.get("isResolved"):
                done.resolved.append(item.node_id)
            else:
                done.failed[item.node_id] = error or "not resolved"
    return done

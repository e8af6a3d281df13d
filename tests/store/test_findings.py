"""The findings table on SQLite and PostgreSQL: one row per finding of a PR, a dismissal
that later records never undo, and concurrent writers that leave one row."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import replace

import pytest
import sqlalchemy as sa

from bot.store import Store, open_store, upgrade
from bot.store.findings import (
    Dismissal,
    DismissalReason,
    FindingFacts,
    StoredFinding,
    dismiss_finding,
    dismissed_fingerprints,
    record_finding,
    stored_finding,
)
from tests.support.store import store_url  # noqa: F401 - the fixture

FACTS = FindingFacts(
    repository_id=42,
    repository="octo/app",
    pr_number=7,
    fingerprint="fp-one",
    head_sha="a" * 40,
    path="people.py",
    side="RIGHT",
    start_line=2,
    end_line=2,
)


@pytest.fixture
def store(store_url: str) -> Iterator[Store]:  # noqa: F811
    opened = open_store(store_url)
    upgrade(opened)
    yield opened
    opened.close()


def rows(store: Store) -> list[StoredFinding]:
    with store.session() as session:
        return list(session.scalars(sa.select(StoredFinding)))


def test_a_dismissal_stands_whatever_is_recorded_after_it(store: Store) -> None:
    record_finding(store, FACTS)
    assert stored_finding(store, 42, 7, "fp-one").state == "open"  # type: ignore[union-attr]
    later = replace(FACTS, head_sha="b" * 40, comment_id=99, severity="major", title="Off by one")
    dismiss_finding(store, later, Dismissal(DismissalReason.WITHDRAWN, "alice", 100))
    dismiss_finding(store, FACTS, Dismissal(DismissalReason.WITHDRAWN, "bob", 101))
    record_finding(store, replace(FACTS, start_line=3, end_line=4))
    [row] = rows(store)
    assert (row.state, row.dismissal_reason, row.dismissed_by) == (
        "dismissed",
        "withdrawn",
        "alice",
    )
    assert (row.dismissed_comment_id, row.comment_id, row.title) == (100, 99, "Off by one")
    assert (row.start_line, row.end_line) == (3, 4)  # where it is now
    assert row.dismissed_at is not None


def test_dismissed_fingerprints_by_pull_request_and_repository(store: Store) -> None:
    withdrawn = Dismissal(DismissalReason.WITHDRAWN, "alice")
    dismiss_finding(store, FACTS, withdrawn)
    dismiss_finding(store, replace(FACTS, pr_number=8, fingerprint="fp-two"), withdrawn)
    record_finding(store, replace(FACTS, fingerprint="fp-open"))
    dismiss_finding(store, replace(FACTS, repository_id=43), withdrawn)
    assert dismissed_fingerprints(store, 42, 7) == {"fp-one"}
    assert dismissed_fingerprints(store, 42) == {"fp-one", "fp-two"}
    assert dismissed_fingerprints(store, 44) == set()


def test_writers_at_once_leave_one_row(store: Store) -> None:
    errors: list[BaseException] = []
    start = threading.Barrier(6)

    def write(n: int) -> None:
        try:
            start.wait()
            for _ in range(5):
                if n % 2:
                    dismiss_finding(store, FACTS, Dismissal(DismissalReason.WITHDRAWN, f"u{n}"))
                else:
                    record_finding(store, FACTS)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=write, args=(n,)) for n in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    [row] = rows(store)
    assert row.state == "dismissed"

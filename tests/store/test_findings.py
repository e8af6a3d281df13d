"""The findings table on SQLite and PostgreSQL: one row per finding of a PR, a dismissal
that later records never undo, a fix that a later report undoes, concurrent writers that
lose nothing, and rows of the previous revision kept by the upgrade."""

from __future__ import annotations

import threading
from dataclasses import replace

import sqlalchemy as sa

from bot.store import Store, head_revision, open_store, upgrade
from bot.store.finding_states import (
    attach_thread,
    follow,
    mark_auto_resolved,
    mark_fixed,
    pull_findings,
)
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


def test_a_finding_fixed_by_a_push_opens_again_when_reported_again(store: Store) -> None:
    record_finding(store, FACTS)
    [row] = rows(store)
    follow(store, row.id, "b" * 40, 5, 5)  # lines added above it
    mark_fixed(store, [row.id], "c" * 40)
    mark_fixed(store, [row.id], "d" * 40)  # only an open finding becomes fixed: once
    [row] = rows(store)
    assert (row.state, row.fixed_in, row.start_line, row.head_sha) == (
        "fixed",
        "c" * 40,
        5,
        "b" * 40,
    )
    follow(store, row.id, "e" * 40, 9, 9)  # a fixed finding is not followed any more
    assert rows(store)[0].start_line == 5
    record_finding(store, replace(FACTS, head_sha="f" * 40))
    [row] = rows(store)
    assert (row.state, row.fixed_in, row.head_sha) == ("open", None, "f" * 40)
    assert mark_auto_resolved(store, row.id) and not mark_auto_resolved(store, row.id)


def test_a_thread_is_attached_once_and_pull_findings_are_the_pr_s(store: Store) -> None:
    record_finding(store, FACTS)
    record_finding(store, replace(FACTS, pr_number=8))
    attach_thread(store, 42, 7, "fp-one", 500, "PRRT_500")
    attach_thread(store, 42, 7, "fp-one", 501, "PRRT_501")
    [row] = pull_findings(store, 42, 7)
    assert (row.comment_id, row.thread_node_id) == (500, "PRRT_500")
    dismiss_finding(store, FACTS, Dismissal(DismissalReason.THUMBS_DOWN, "octocat"))
    dismiss_finding(store, FACTS, Dismissal(DismissalReason.RESOLVED, "alice"))
    [row] = pull_findings(store, 42, 7)
    assert (row.state, row.dismissal_reason, row.dismissed_by) == (
        "dismissed",
        "thumbs_down",
        "octocat",
    )


def test_two_workers_settling_and_recording_at_once_lose_nothing(store: Store) -> None:
    facts = [replace(FACTS, fingerprint=f"fp-{n}") for n in range(20)]
    for f in facts:
        record_finding(store, f)
    ids = [r.id for r in rows(store)]
    errors: list[BaseException] = []
    start = threading.Barrier(2)

    def worker(n: int) -> None:
        try:
            start.wait()
            mark_fixed(store, ids[:10], f"{n}" * 40)
            for f in facts[10:]:
                record_finding(store, replace(f, head_sha=f"{n}" * 40))
                dismiss_finding(
                    store,
                    replace(f, fingerprint=f"{f.fingerprint}-d{n}"),
                    Dismissal(DismissalReason.THUMBS_DOWN, f"u{n}"),
                )
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(n,)) for n in (1, 2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    states = [(r.fingerprint, r.state) for r in rows(store)]
    assert len(states) == 40  # 20 recorded, 10 dismissed by each worker
    assert sum(s == "fixed" for _, s in states) == 10
    assert sum(s == "dismissed" for _, s in states) == 20
    assert {r.fixed_in for r in rows(store) if r.state == "fixed"} <= {"1" * 40, "2" * 40}


def test_findings_written_at_revision_0003_survive_the_upgrade(store_url: str) -> None:  # noqa: F811
    opened = open_store(store_url)
    upgrade(opened, "0003")
    with opened.engine.begin() as connection:
        connection.execute(
            sa.text(
                "INSERT INTO findings (repository_id, repository, pr_number, fingerprint, "
                "head_sha, path, side, start_line, end_line, state, dismissal_reason, "
                "dismissed_by, created_at, updated_at) VALUES (42, 'octo/app', 7, 'fp-old', "
                "'aaaa', 'people.py', 'RIGHT', 2, 2, 'dismissed', 'withdrawn', 'alice', "
                "CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)"
            )
        )
    # 0004 added the columns of fixed findings, 0006 the dismissal's scope.
    assert upgrade(opened) == head_revision()
    row = stored_finding(opened, 42, 7, "fp-old")
    assert row is not None and (row.state, row.fixed_in, row.auto_resolved_at) == (
        "dismissed",
        None,
        None,
    )
    assert row.dismissal_scope == "repository"
    assert dismissed_fingerprints(opened, 42) == {"fp-old"}
    opened.close()

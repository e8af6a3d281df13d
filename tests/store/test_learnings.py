"""The learnings table on SQLite and PostgreSQL: one rule per teaching comment (also with
two workers at once), each repository's own, forgotten once and remembered as forgotten,
a cap on what a repository keeps; and revision 0005 applied to a store at the revision
before it, keeping what was there."""

from __future__ import annotations

import threading
from dataclasses import replace

import sqlalchemy as sa
from alembic.script import ScriptDirectory

from bot.store import Store, current_revision, head_revision, open_store, upgrade
from bot.store.findings import FindingFacts, record_finding, stored_finding
from bot.store.learnings import (
    MAX_STORED,
    StoredLearning,
    Taught,
    active_learnings,
    forget,
    learn,
)
from bot.store.migrate import _config
from tests.support.store import store_url  # noqa: F401 - the fixture

TAUGHT = Taught(
    repository_id=42,
    repository="octo/app",
    text="Never report TODO comments.",
    path=None,
    author="alice",
    pr_number=7,
    comment_id=1001,
)


def test_one_rule_per_comment_and_each_repository_its_own(store: Store) -> None:
    first = learn(store, TAUGHT)
    again = learn(store, replace(TAUGHT, text="edited later"))  # the same comment
    scoped = learn(store, replace(TAUGHT, comment_id=1002, text="Tabs here", path="Makefile"))
    other = learn(store, replace(TAUGHT, repository_id=43, comment_id=1001))
    assert first is not None and again == first and first.text == "Never report TODO comments."
    assert scoped is not None and other is not None and len({first.id, scoped.id, other.id}) == 3
    assert active_learnings(store, 42) == [first, scoped]
    assert scoped.path == "Makefile" and scoped.id > first.id
    assert active_learnings(store, 43) == [other]
    assert active_learnings(store, 44) == []


def test_forget_once_and_remember_who_did(store: Store) -> None:
    rule = learn(store, TAUGHT)
    assert rule is not None
    assert forget(store, 43, rule.id, "mallory", 2000) == ("unknown", None)  # not theirs
    assert forget(store, 42, rule.id, "bob", 2001) == ("forgot", rule)
    assert forget(store, 42, rule.id, "bob", 2001) == ("forgot", rule)  # the same /forget
    assert forget(store, 42, rule.id, "carol", 2002) == ("forgotten-before", rule)
    assert forget(store, 42, rule.id + 100, "bob", 2003) == ("unknown", None)
    assert active_learnings(store, 42) == []
    with store.session() as session:
        row = session.scalars(sa.select(StoredLearning)).one()
    assert (row.forgotten_by, row.forgotten_comment_id) == ("bob", 2001)
    # The same comment teaching again does not bring it back.
    assert learn(store, TAUGHT) == rule and active_learnings(store, 42) == []


def test_a_repository_keeps_at_most_max_stored(store: Store) -> None:
    for n in range(MAX_STORED):
        assert learn(store, replace(TAUGHT, comment_id=n + 1, text=f"rule {n}")) is not None
    assert learn(store, replace(TAUGHT, comment_id=10_000)) is None
    assert learn(store, replace(TAUGHT, comment_id=1)) is not None  # taught before: found
    first = active_learnings(store, 42)[0]
    assert forget(store, 42, first.id, "bob", 5)[0] == "forgot"
    assert learn(store, replace(TAUGHT, comment_id=10_000)) is not None


def test_two_workers_teaching_the_same_comment_store_one_rule(store: Store) -> None:
    barrier = threading.Barrier(4)
    found: list[int] = []

    def teach() -> None:
        barrier.wait()
        rule = learn(store, TAUGHT)
        assert rule is not None
        found.append(rule.id)

    threads = [threading.Thread(target=teach) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert len(found) == 4 and len(set(found)) == 1
    assert len(active_learnings(store, 42)) == 1


def test_revision_0005_upgrades_a_store_at_the_revision_before_it(
    store_url: str,  # noqa: F811
) -> None:
    scripts = ScriptDirectory.from_config(_config())
    mine = scripts.get_revision("0005")
    assert mine is not None
    previous = mine.down_revision
    assert isinstance(previous, str)
    store = open_store(store_url)
    try:
        assert upgrade(store, previous) == previous
        facts = FindingFacts(42, "octo/app", 7, "fp-kept", "a" * 40, "a.py", "RIGHT", 1, 1)
        record_finding(store, facts)
        assert upgrade(store) == head_revision()
        assert current_revision(store) == head_revision()
        assert stored_finding(store, 42, 7, "fp-kept") is not None  # what was there stays
        assert learn(store, TAUGHT) is not None
    finally:
        store.close()

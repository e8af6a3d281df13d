"""Where a dismissal holds, on SQLite and PostgreSQL: a writer's for the whole repository,
a PR author's without write access for that PR only; a writer's dismissal after an
author's widens it, never the reverse; and revision 0006 turns every dismissal recorded
before it into a repository-wide one (their meaning then)."""

from __future__ import annotations

from dataclasses import replace

import sqlalchemy as sa
from alembic.script import ScriptDirectory

from bot.store import Store, current_revision, head_revision, open_store, upgrade
from bot.store.findings import (
    Dismissal,
    DismissalReason,
    DismissalScope,
    FindingFacts,
    dismiss_finding,
    held_back,
    record_finding,
    stored_finding,
)
from bot.store.migrate import _config
from tests.support.store import store_url  # noqa: F401 - the fixture

FACTS = FindingFacts(42, "octo/app", 7, "fp-one", "a" * 40, "people.py", "RIGHT", 2, 2)
BY_AUTHOR = Dismissal(DismissalReason.RESOLVED, "drive-by", scope=DismissalScope.PULL_REQUEST)
BY_WRITER = Dismissal(DismissalReason.THUMBS_DOWN, "wendy")


def test_an_authors_dismissal_holds_on_its_pull_request_only(store: Store) -> None:
    dismiss_finding(store, FACTS, BY_AUTHOR)
    record_finding(store, replace(FACTS, pr_number=8))  # the same code on another PR
    assert held_back(store, 42, 7) == {"fp-one": DismissalScope.PULL_REQUEST}
    assert held_back(store, 42, 8) == {}
    row = stored_finding(store, 42, 7, "fp-one")
    assert row is not None and (row.state, row.dismissal_scope) == ("dismissed", "pull_request")


def test_a_writers_dismissal_holds_in_the_whole_repository(store: Store) -> None:
    dismiss_finding(store, FACTS, BY_WRITER)
    assert held_back(store, 42, 7) == {"fp-one": DismissalScope.REPOSITORY}
    assert held_back(store, 42, 8) == {"fp-one": DismissalScope.REPOSITORY}
    assert held_back(store, 43, 7) == {}  # another repository
    # The same fingerprint dismissed on PR 8 by its author: the repository's word wins.
    dismiss_finding(store, replace(FACTS, pr_number=8), BY_AUTHOR)
    assert held_back(store, 42, 8) == {"fp-one": DismissalScope.REPOSITORY}


def test_a_writers_dismissal_widens_an_authors_and_not_the_reverse(store: Store) -> None:
    dismiss_finding(store, FACTS, BY_AUTHOR)
    dismiss_finding(store, FACTS, BY_WRITER)
    row = stored_finding(store, 42, 7, "fp-one")
    assert row is not None
    assert (row.dismissal_scope, row.dismissed_by, row.dismissal_reason) == (
        "repository",
        "wendy",
        "thumbs_down",
    )
    dismiss_finding(store, FACTS, replace(BY_AUTHOR, by="later"))
    row = stored_finding(store, 42, 7, "fp-one")
    assert row is not None and (row.dismissal_scope, row.dismissed_by) == ("repository", "wendy")
    assert held_back(store, 42, 99) == {"fp-one": DismissalScope.REPOSITORY}


def test_revision_0006_keeps_earlier_dismissals_repository_wide(
    store_url: str,  # noqa: F811
) -> None:
    scripts = ScriptDirectory.from_config(_config())
    mine = scripts.get_revision("0006")
    assert mine is not None and mine.down_revision == "0005"
    store = open_store(store_url)
    try:
        assert upgrade(store, "0005") == "0005"
        # Written as the code of revision 0005 wrote them: no scope column yet.
        findings = sa.table(
            "findings",
            *(sa.column(name) for name in ("repository_id", "repository", "pr_number")),
            *(sa.column(name) for name in ("fingerprint", "head_sha", "path", "side")),
            *(sa.column(name) for name in ("start_line", "end_line", "state")),
            *(sa.column(name) for name in ("dismissal_reason", "dismissed_by")),
            *(sa.column(name) for name in ("created_at", "updated_at")),
        )
        common = {
            "repository_id": 42,
            "repository": "octo/app",
            "pr_number": 7,
            "head_sha": "a" * 40,
            "path": "people.py",
            "side": "RIGHT",
            "start_line": 2,
            "end_line": 2,
            "created_at": sa.func.current_timestamp(),
            "updated_at": sa.func.current_timestamp(),
        }
        with store.engine.begin() as connection:
            connection.execute(
                findings.insert().values(
                    fingerprint="fp-old",
                    state="dismissed",
                    dismissal_reason="resolved",
                    dismissed_by="drive-by",
                    **common,
                )
            )
            connection.execute(
                findings.insert().values(fingerprint="fp-open", state="open", **common)
            )
        assert upgrade(store) == head_revision()
        assert current_revision(store) == head_revision()
        old = stored_finding(store, 42, 7, "fp-old")
        assert old is not None
        assert (old.state, old.dismissed_by, old.dismissal_scope) == (
            "dismissed",
            "drive-by",
            "repository",
        )
        still_open = stored_finding(store, 42, 7, "fp-open")
        assert still_open is not None and still_open.dismissal_scope is None
        # As before the revision: held back on every PR of the repository.
        assert held_back(store, 42, 8) == {"fp-old": DismissalScope.REPOSITORY}
    finally:
        store.close()

"""``gitneural db``: the store's schema (``upgrade``, ``current``).

``serve`` and ``worker`` upgrade by themselves at start-up; this is for operators who
migrate before a deploy, or want to see where a database stands.
"""

from __future__ import annotations

import argparse
import os
from typing import Any


def add_parser(commands: Any) -> None:
    db: argparse.ArgumentParser = commands.add_parser(
        "db",
        help="the store's schema: upgrade it, or show its revision",
        description="The store is SQLite under GITNEURAL_DATA_DIR, or the database "
        "GITNEURAL_DATABASE_URL names (postgresql+psycopg://USER@HOST/DB).",
    )
    actions = db.add_subparsers(dest="action", metavar="ACTION", required=True)
    upgrade = actions.add_parser(
        "upgrade",
        help="migrate to the newest revision",
        description="Migrate the store to the newest schema revision (under a lock: safe "
        "while serve or workers start). serve and worker do it themselves at start-up.",
    )
    upgrade.set_defaults(run=run_upgrade)
    current = actions.add_parser(
        "current",
        help="print the revision the database is at",
        description="Print the store's schema revision and whether it is the newest this "
        "version of GitNeural knows (if not: gitneural db upgrade).",
    )
    current.set_defaults(run=run_current)


def upgrade_store() -> str:
    """Migrate the environment's store to the newest revision; a line saying where."""
    from bot.store import database_url, open_store, redacted_url, upgrade

    url = database_url(os.environ)
    store = open_store(url)
    try:
        reached = upgrade(store)
    finally:
        store.close()
    return f"store {redacted_url(url)}: at revision {reached}"


def run_upgrade(args: argparse.Namespace) -> int:
    print(upgrade_store())
    return 0


def run_current(args: argparse.Namespace) -> int:
    from bot.store import current_revision, database_url, head_revision, open_store, redacted_url
    from bot.store.errors import store_errors

    url = database_url(os.environ)
    store = open_store(url)
    try:
        with store_errors(url):
            at = current_revision(store)
    finally:
        store.close()
    head = head_revision()
    state = "up to date" if at == head else f"behind (newest is {head})"
    print(f"store {redacted_url(url)}: at revision {at or 'none'}, {state}")
    return 0

"""The store's failures as one-line :class:`~bot.errors.StoreError` messages."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import sqlalchemy as sa

from bot.errors import StoreError
from bot.store.engine import redacted_url


def reason(exc: sa.exc.DBAPIError) -> str:
    """The driver's own message, first line only (psycopg's spans several)."""
    lines = str(exc.orig).strip().splitlines() or ["unknown error"]
    return " ".join(lines[0].split())


@contextlib.contextmanager
def store_errors(url: str, doing: str = "reach") -> Iterator[None]:
    """Turns "the database is down or refuses us" into one clear line naming it."""
    try:
        yield
    except (sa.exc.OperationalError, sa.exc.InterfaceError) as exc:
        raise StoreError(
            f"cannot {doing} the store at {redacted_url(url)}: {reason(exc)}"
        ) from None

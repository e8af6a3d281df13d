"""The parts of GitNeural that come with an extra, and the one line that says how to get
them when they are missing.

The default install carries the command line, the pre-commit hook, ``review --pr`` and
the GitHub Action's runner; ``gitneural[store]`` adds the memory of a pull request's
findings (SQLAlchemy, Alembic) and ``gitneural[app]`` the server (Flask, Celery,
gunicorn, the broker clients, PostgreSQL's driver, prometheus_client). Whether a
package is there is asked of the import system without importing it: the check costs
no start-up time.
"""

from __future__ import annotations

import importlib.util
from typing import Final

from bot.errors import ConfigError

#: The modules each extra brings, as imported.
EXTRAS: Final[dict[str, tuple[str, ...]]] = {
    "store": ("sqlalchemy", "alembic"),
    # Optional everywhere: without it the review falls back to heuristics.
    "parsers": ("tree_sitter",),
    "app": (
        "sqlalchemy",
        "alembic",
        "flask",
        "celery",
        "kombu",
        "redis",
        "psycopg",
        "gunicorn",
        "prometheus_client",
    ),
}


class MissingExtraError(ConfigError):
    """A command needs packages of an extra that is not installed."""


def missing(extra: str) -> list[str]:
    """The modules of ``extra`` that cannot be imported here."""
    return [m for m in EXTRAS[extra] if importlib.util.find_spec(m) is None]


def require(extra: str, what: str) -> None:
    """Raise one line naming the install command when ``extra`` is not (wholly) installed;
    ``what`` says who needs it ("gitneural serve")."""
    absent = missing(extra)
    if absent:
        raise MissingExtraError(
            f"{what} needs the {extra!r} extra ({', '.join(absent)} not installed): "
            f"pip install 'gitneural[{extra}]'"
        )

"""The parts of GitNeural that come with an extra, and the one line that says how to get
them when they are missing.

The default install carries the command line, the pre-commit hook, ``review --pr`` and
the GitHub Action's runner; ``gitneural[store]`` adds the memory of a pull request's
findings (SQLAlchemy, Alembic) and ``gitneural[app]`` the server (Flask, Celery,
gunicorn, the broker clients, PostgreSQL's driver, prometheus_client). Two are optional
everywhere, the review going on without them: ``parsers`` (tree-sitter) and ``images``
(Pillow). Whether a
package is there is asked of the import system without importing it: the check costs
no start-up time.
"""

from __future__ import annotations

import importlib.util
import json
import shlex
import sys
from typing import Final
from urllib.parse import unquote, urlparse

from bot.errors import ConfigError

#: The modules each extra brings, as imported.
EXTRAS: Final[dict[str, tuple[str, ...]]] = {
    "store": ("sqlalchemy", "alembic"),
    # Optional everywhere: without it the review falls back to heuristics.
    "parsers": ("tree_sitter",),
    # Optional everywhere: without it no image is sent, and the summary says how many.
    "images": ("PIL",),
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


def _installed_from() -> str | None:
    """Where this GitNeural was installed from, when it was a local folder or wheel (a
    clone, ``pip install .``), as pip recorded it (PEP 610's ``direct_url.json``)."""
    # Imported here, not above: importlib.metadata loads the email package, 18 ms of every
    # command's start-up (the hook's included) for a line only a missing extra prints.
    import importlib.metadata

    # Every record of the name: a source tree's own egg-info may come first on sys.path.
    records = [
        d.read_text("direct_url.json") for d in importlib.metadata.distributions(name="gitneural")
    ]
    try:
        url = str(json.loads(next((r for r in records if r), "{}")).get("url", ""))
    except (ValueError, AttributeError):
        return None
    parsed = urlparse(url)
    return unquote(parsed.path) if parsed.scheme == "file" and parsed.path else None


def install_command(extra: str) -> str:
    """The command that installs ``extra`` into this very environment: from the folder or
    wheel GitNeural came from when it was installed from one (no release need exist),
    else from the package index."""
    source = _installed_from()
    wanted = f"{source}[{extra}]" if source else f"gitneural[{extra}]"
    return f"{shlex.quote(sys.executable)} -m pip install {shlex.quote(wanted)}"


def require(extra: str, what: str) -> None:
    """Raise one line naming the install command when ``extra`` is not (wholly) installed;
    ``what`` says who needs it ("gitneural serve")."""
    absent = missing(extra)
    if absent:
        raise MissingExtraError(
            f"{what} needs the {extra!r} extra ({', '.join(absent)} not installed): "
            f"{install_command(extra)}"
        )


def left_out(extra: str, package: str) -> str | None:
    """Why what ``extra`` brings is left out here, as a review's summary says it: the
    ``package`` it lacks and the install command ("Pillow is not installed (… -m pip
    install 'gitneural[images]')"); None when the extra is installed."""
    if not missing(extra):
        return None
    return f"{package} is not installed ({install_command(extra)})"

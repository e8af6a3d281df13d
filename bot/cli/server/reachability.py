"""Before ``serve`` or ``worker`` starts: do the broker, the state store and the database
its settings name answer? A process that starts against a dead broker answers every
webhook 503 and says why only in its logs; asked here, the reason is one line among the
settings to fix, within a few seconds (each probe is bounded: see
:mod:`workers.celeryapp.health`). No line names a URL (it may carry a password).
"""

from __future__ import annotations

import os

from bot.errors import GitNeuralError


def unreachable() -> list[str]:
    """One line per service that does not answer; none when all do. Reads the settings
    from the environment, which the caller has checked already."""
    from bot.store import database_url, open_store
    from bot.store.errors import store_errors
    from workers.celeryapp import health
    from workers.celeryapp.app import create_publisher
    from workers.settings import WorkerSettings

    try:
        settings = WorkerSettings.from_env()
    except GitNeuralError:
        return []  # malformed settings are reported by the settings check itself
    problems = []
    try:
        if not settings.embedded_broker:
            health.check_broker(create_publisher(settings), settings)
    except GitNeuralError as exc:
        problems.append(f"GITNEURAL_BROKER_URL: {exc}")
    # Only servers are asked: the SQLite files are this machine's, made by the process
    # itself. The state store on the broker's own Redis: one line says that Redis is down.
    if settings.state_url is not None and not (
        problems and settings.state_url == settings.broker_url
    ):
        try:
            health.check_state_store(settings)
        except GitNeuralError as exc:
            problems.append(f"GITNEURAL_STATE_URL: {exc}")
    url = database_url(os.environ)
    if url.startswith("sqlite"):
        return problems
    try:
        store = open_store(url)
        try:
            with store_errors(url):
                store.ping()
        finally:
            store.close()
    except GitNeuralError as exc:
        problems.append(f"GITNEURAL_DATABASE_URL: {exc}")
    return problems

"""The operator's endpoints of the web app, and what it counts of the webhook.

- ``GET /readyz``: 200 when every dependency answers (the broker, the state store, the
  database), else 503 with the reasons; ``/healthz`` stays a liveness check.
- ``GET /metrics``: Prometheus' text format; with ``PROMETHEUS_MULTIPROC_DIR`` the sum
  over every process of the host (gunicorn workers, and the embedded workers of
  ``gitneural serve``), plus the queue depths, measured at scrape time.
- ``GET /status``: the status page (:mod:`bot.web.status_page`), behind the bearer token
  ``GITNEURAL_ADMIN_TOKEN``; without a token configured the page does not exist (404),
  and a request without the right one gets 401 and nothing else.

Every ``POST /webhook`` answer is counted by event and outcome, and every log line of
the request carries its delivery id (:func:`bot.logs.log_context`).
"""

from __future__ import annotations

import hmac
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import flask

from bot import metrics
from bot.errors import GitNeuralError
from bot.logs import log_context
from bot.metrics.exposition import queue_depth_collector, render, scrape_registry
from bot.web.status_page import StatusInputs, gather_status, render_status

log = logging.getLogger("gitneural.web")

#: A dependency's check: returns when it answers, raises a GitNeuralError saying why not.
Probe = Callable[[], None]
_OUTCOMES = {"queued": "queued", "ignored": "ignored", "duplicate": "duplicate"}


@dataclass
class Operations:
    probes: Mapping[str, Probe] = field(default_factory=dict)
    #: Messages waiting per queue, for ``gitneural_queue_depth`` and the status page.
    queue_depths: Callable[[], Mapping[str, int]] | None = None
    #: ``GITNEURAL_ADMIN_TOKEN``; ``None``: no status page.
    admin_token: str | None = field(default=None, repr=False)
    status: StatusInputs = field(default_factory=StatusInputs)


def install_operations(app: flask.Flask, ops: Operations) -> None:
    registry = scrape_registry(
        [queue_depth_collector(ops.queue_depths)] if ops.queue_depths else []
    )

    @app.before_request
    def enter_log_context() -> None:
        if flask.request.path == "/webhook":
            headers = flask.request.headers
            context = log_context(delivery=(headers.get("X-GitHub-Delivery") or "")[:200] or None)
            context.__enter__()
            flask.g.log_context = context

    @app.teardown_request
    def leave_log_context(_exc: BaseException | None) -> None:
        context = flask.g.pop("log_context", None)
        if context is not None:
            context.__exit__(None, None, None)

    @app.after_request
    def count_delivery(response: flask.Response) -> flask.Response:
        request = flask.request
        if request.path == "/webhook" and request.method == "POST":
            body: Any = response.get_json(silent=True) if response.is_json else None
            status = body.get("status") if isinstance(body, dict) else None
            outcome = _OUTCOMES.get(str(status), "rejected")
            metrics.webhook_delivery(request.headers.get("X-GitHub-Event", ""), outcome)
        return response

    @app.get("/readyz")
    def readyz() -> tuple[flask.Response, int]:
        checks: dict[str, str] = {}
        for name, probe in ops.probes.items():
            try:
                probe()
                checks[name] = "ok"
            except GitNeuralError as exc:
                checks[name] = str(exc)
        failed = {name: reason for name, reason in checks.items() if reason != "ok"}
        if failed:
            log.warning("not ready: %s", "; ".join(f"{n}: {r}" for n, r in failed.items()))
            return flask.jsonify(status="unavailable", checks=checks), 503
        return flask.jsonify(status="ready", checks=checks), 200

    @app.get("/metrics")
    def metrics_page() -> flask.Response:
        data, content_type = render(registry)
        return flask.Response(data, status=200, content_type=content_type)

    @app.get("/status")
    def status() -> flask.Response:
        if not ops.admin_token:
            flask.abort(404)
        if not _authorized(flask.request.headers.get("Authorization", ""), ops.admin_token):
            return flask.Response(
                "401 Unauthorized: send Authorization: Bearer <GITNEURAL_ADMIN_TOKEN>\n",
                status=401,
                content_type="text/plain; charset=utf-8",
                headers={"WWW-Authenticate": 'Bearer realm="gitneural"'},
            )
        view = gather_status(ops.status, ops.queue_depths)
        page = flask.Response(render_status(view), content_type="text/html; charset=utf-8")
        # Closed networks: the page loads nothing from anywhere, and is never cached.
        page.headers["Content-Security-Policy"] = (
            "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
        )
        page.headers["Cache-Control"] = "no-store"
        return page


def _authorized(header: str, token: str) -> bool:
    scheme, _, given = header.partition(" ")
    if scheme.lower() != "bearer":
        return False
    return hmac.compare_digest(given.strip().encode(), token.encode())

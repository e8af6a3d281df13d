"""The webhook server: verify, de-duplicate, route, enqueue — and answer in milliseconds.

``POST /webhook`` answers:

- 202 ``{"status": "queued"}``: a review job was accepted by the queue;
- 200 ``{"status": "ignored", "reason": …}``: nothing to do (or a ping);
- 200 ``{"status": "duplicate"}``: this ``X-GitHub-Delivery`` was already queued;
- 202 ``{"status": "ignored", "reason": "duplicate body"}``: these exact bytes were
  already queued under another delivery id (a replayed delivery; see ``deliveries``);
- 400 malformed delivery, 401 missing or wrong signature, 413 body over the cap,
  503 queue or delivery log unavailable (GitHub shows the delivery as failed and it can
  be redelivered).

The request path never calls GitHub, never mints a token and never imports anything:
everything is set up by :func:`create_app`.
"""

from __future__ import annotations

import logging
import time

import flask
from werkzeug.exceptions import HTTPException, RequestEntityTooLarge

from bot.jobs import JobQueue, QueueError
from bot.text import loggable
from bot.web import signature
from bot.web.deliveries import DeliveryLog, DeliveryLogError, body_digest, open_delivery_log
from bot.web.events import Decision, route
from bot.web.operations import Operations, install_operations
from bot.web.payload import PayloadError, parse
from bot.web.settings import WebSettings

log = logging.getLogger("gitneural.web")

Answer = tuple[flask.Response, int]


def create_app(
    settings: WebSettings,
    queue: JobQueue,
    *,
    deliveries: DeliveryLog | None = None,
    operations: Operations | None = None,
) -> flask.Flask:
    """The Flask app; ``deliveries`` defaults to :func:`open_delivery_log` (``settings``);
    ``operations``: readiness probes, queue depths and the status page's sources."""
    app = flask.Flask(__name__)
    install_operations(app, operations or Operations())
    # Werkzeug refuses a Content-Length over the limit unread, but silently truncates a
    # chunked body at the limit: allow one byte more and refuse a body that used it.
    cap = settings.max_body_bytes
    app.config["MAX_CONTENT_LENGTH"] = cap + 1
    delivery_log = deliveries if deliveries is not None else open_delivery_log(settings)
    secret = settings.webhook_secret.encode()

    def answer(status: int, body: dict[str, object], line: str) -> Answer:
        log.info("%s status=%d", line, status)
        return flask.jsonify(body), status

    @app.get("/healthz")
    def healthz() -> Answer:
        return flask.jsonify(status="ok"), 200

    @app.post("/webhook")
    def webhook() -> Answer:
        started = time.perf_counter()
        headers = flask.request.headers
        event = headers.get("X-GitHub-Event", "")
        delivery_id = headers.get("X-GitHub-Delivery", "")
        line = _request_line()
        body = flask.request.get_data(cache=False)
        if len(body) > cap:
            raise RequestEntityTooLarge()
        if not signature.verify(secret, body, headers.get("X-Hub-Signature-256")):
            reason = "missing or invalid X-Hub-Signature-256"
            return answer(401, _refused(reason), f"{line} decision=unsigned")
        if not event or not delivery_id or len(delivery_id) > 200:
            reason = "missing X-GitHub-Event or X-GitHub-Delivery"
            return answer(400, _refused(reason), f"{line} decision=malformed")
        try:
            decision = route(event, parse(body), delivery_id, settings)
        except PayloadError as exc:
            return answer(
                400, _refused(str(exc)), f"{line} decision=malformed reason={str(exc)[:200]!r}"
            )
        line = _describe(line, decision)
        job = decision.job
        if job is None:
            return answer(200, {"status": "ignored", "reason": decision.reason}, line)
        if delivery_log.seen_or_record(delivery_id):
            return answer(200, {"status": "duplicate"}, f"{line} decision=duplicate")
        digest = body_digest(body)
        try:
            replayed = delivery_log.seen_or_record(digest, "body")
        except BaseException:
            delivery_log.forget(delivery_id)
            raise
        if replayed:
            # The id is new but the bytes are not: nothing to queue, and nothing of this id
            # to keep (the body's own record already answers every later copy).
            delivery_log.forget(delivery_id)
            ignored: dict[str, object] = {"status": "ignored", "reason": "duplicate body"}
            return answer(202, ignored, f"{line} decision=duplicate-body")
        try:
            queue.submit(job)
        except BaseException:
            # Not accepted: release the claims so GitHub's redelivery is queued, then let
            # the error handlers answer (503 for QueueError).
            delivery_log.forget(delivery_id)
            delivery_log.forget(digest, "body")
            raise
        try:
            delivery_log.confirm(delivery_id)
            delivery_log.confirm(digest, "body")
        except DeliveryLogError as exc:
            # The job is accepted, so answer 202: a 503 would invite a redelivery. The
            # claim still guards the id for its lease; the worker absorbs a late duplicate.
            log.warning("%s could not be confirmed: %s", line, exc)
        ms = (time.perf_counter() - started) * 1000
        reply = {"status": "queued", "repo": job.repo, "pr": job.pr_number, "trigger": job.trigger}
        return answer(202, reply, f"{line} decision=queued trigger={job.trigger} ms={ms:.1f}")

    @app.errorhandler(QueueError)
    @app.errorhandler(DeliveryLogError)
    def unavailable(exc: QueueError | DeliveryLogError) -> Answer:
        # str(exc) is a one-line GitNeuralError message that carries no secret.
        log.error("%s decision=unavailable status=503 reason=%s", _request_line(), exc)
        return flask.jsonify(status="unavailable", reason=str(exc)), 503

    @app.errorhandler(HTTPException)
    def http_error(exc: HTTPException) -> Answer:
        code = exc.code or 500
        log.info("%s decision=refused status=%d", _request_line(), code)
        return flask.jsonify(status="error", reason=exc.name), code

    return app


def _request_line() -> str:
    headers = flask.request.headers
    delivery = loggable(headers.get("X-GitHub-Delivery") or None)
    return f"delivery={delivery} event={loggable(headers.get('X-GitHub-Event') or None)}"


def _refused(reason: str) -> dict[str, object]:
    return {"status": "refused", "reason": reason}


def _describe(line: str, decision: Decision) -> str:
    parts = [
        line,
        f"action={loggable(decision.action)}",
        f"repo={loggable(decision.repo)}",
        f"pr={loggable(decision.pr)}",
    ]
    if decision.job is None:
        parts.append(f"decision=ignored reason={decision.reason[:200]!r}")
    return " ".join(parts)

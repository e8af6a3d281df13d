"""One stored comment read, edited or deleted: GitHub answers issue comments and pull request
review comments alike (GET is open, PATCH and DELETE need a token), only the resource named
in a 422 and its message differ."""

from __future__ import annotations

import time

from flask import Response, request

from tests.fakes.github.app import (
    body_json,
    json_response,
    owned,
    public,
    require_token,
    store,
    validation_failed,
)
from tests.fakes.github.attachments import body_html
from tests.fakes.github.diff import MAX_BODY
from tests.fakes.github.shapes import Json, iso
from tests.fakes.github.store import Repo


def answer_comment(
    repo: Repo, table: dict[int, Json], cid: int, resource: str, invalid: str
) -> Response:
    """GET, PATCH (a new ``body``) or DELETE comment ``cid`` of ``table``; ``invalid`` is the
    422 message for a blank or over-long body."""
    comment = owned(repo, table, cid)
    if request.method == "GET":
        data = public(comment)
        if "full+json" in request.headers.get("Accept", ""):  # Markdown, HTML and text
            data.update(body_html=body_html(store(), str(data["body"])), body_text=data["body"])
        return json_response(data)
    require_token()
    s = store()
    if request.method == "DELETE":
        with s.lock:
            del table[cid]
        return Response(status=204)
    body = body_json().get("body")
    if not isinstance(body, str) or not body or len(body) > MAX_BODY:
        raise validation_failed(resource, "body", invalid)
    comment.update(body=body, updated_at=iso(time.time()))
    return json_response(public(comment))

"""The fake GitHub's attachments: what GitHub serves for images pasted into a pull
request, and a host that is not GitHub's.

- ``{web}/user-attachments/assets/ID`` (github.com's link, as Markdown holds it)
  redirects to the signed link, or to wherever ``redirect_to`` says;
- ``{web}/private-user-images/REPO_ID/ID.png?jwt=…`` (what ``body_html`` shows for a
  private repository) serves the bytes when the signature is the one issued, 404 else;
- ``/elsewhere/NAME`` serves bytes too: a test links it by another host name
  (``localhost`` for ``127.0.0.1``) and counts its hits, which must stay at zero.

The ``full`` media type's ``body_html`` renders the body with cmarkgfm and rewrites each
``user-attachments/assets`` link to its signed link, as GitHub does.
"""

from __future__ import annotations

import re
import secrets

import cmarkgfm
from flask import Blueprint, Response, abort, redirect, request

from tests.fakes.github.app import store
from tests.fakes.github.store import Attachment, Store

_ASSET = re.compile(r"(https?://[^\s\"'()<>]+)/user-attachments/assets/([0-9a-f-]{36})")


def signed_url(s: Store, aid: str) -> str:
    item = s.attachments[aid]
    return f"{s.web_url}/private-user-images/{item.repo_id}/{aid}.png?jwt={item.jwt}"


def body_html(s: Store, body: str) -> str:
    """The body as GitHub renders it, each attachment link signed."""
    html = cmarkgfm.github_flavored_markdown_to_html(
        body, options=cmarkgfm.Options.CMARK_OPT_UNSAFE
    )
    known = s.attachments

    def sign(match: re.Match[str]) -> str:
        aid = match.group(2)
        if aid not in known or known[aid].redirect_to is not None:
            return match.group(0)  # left as written: fetching it meets the redirect
        return signed_url(s, aid)

    return _ASSET.sub(sign, html)


def new_attachment(
    s: Store,
    data: bytes,
    repo_id: int,
    content_type: str = "image/png",
    redirect_to: str | None = None,
) -> str:
    """Store ``data``; its link as pasted into Markdown."""
    aid = "%08x-%04x-%04x-%04x-%012x" % tuple(  # noqa: UP031 - a UUID's layout
        secrets.randbits(bits) for bits in (32, 16, 16, 16, 48)
    )
    with s.lock:
        s.attachments[aid] = Attachment(
            data, content_type, secrets.token_urlsafe(24), repo_id, redirect_to
        )
    return f"{s.web_url}/user-attachments/assets/{aid}"


def blueprint() -> Blueprint:
    bp = Blueprint("attachments", __name__)

    @bp.get("/user-attachments/assets/<aid>")
    def asset(aid: str) -> Response:
        item = store().attachments.get(aid)
        if item is None:
            abort(404)
        return redirect(item.redirect_to or signed_url(store(), aid), code=302)  # type: ignore[return-value]

    @bp.get("/private-user-images/<int:repo_id>/<name>")
    def private_image(repo_id: int, name: str) -> Response:
        item = store().attachments.get(name.removesuffix(".png"))
        if item is None or item.repo_id != repo_id or request.args.get("jwt") != item.jwt:
            abort(404)
        return Response(item.data, mimetype=item.content_type)

    @bp.get("/elsewhere/<name>")
    def other_host(name: str) -> Response:
        data = store().elsewhere.get(name)
        if data is None:
            abort(404)
        return Response(data, mimetype="image/png")

    return bp

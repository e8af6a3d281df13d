"""Who a token is: ``GET /user`` answers for a person's token and refuses installation
tokens (the App's, or a workflow's ``GITHUB_TOKEN``) with GitHub's 403; and the identity
of GitHub Actions' own App, which a workflow's token posts as."""

from __future__ import annotations

from flask import Blueprint, Response

from tests.fakes.github.app import ApiError, authenticate_token, json_response, request_token, store
from tests.fakes.github.shapes import Json

ACTIONS_LOGIN = "github-actions[bot]"
#: GitHub Actions' App on github.com (check runs made with ``GITHUB_TOKEN`` belong to it).
ACTIONS_APP: Json = {"id": 15368, "slug": "github-actions", "name": "GitHub Actions"}
NOT_FOR_INTEGRATIONS = "Resource not accessible by integration"


def app_of_request() -> Json:
    """The App a check run created by this request belongs to."""
    token = request_token()
    if token is not None and token.kind == "actions":
        return dict(ACTIONS_APP)
    s = store()
    return {"id": s.app_id, "slug": s.app_slug, "name": s.app_slug}


def blueprint(prefix: str) -> Blueprint:
    bp = Blueprint("users", __name__, url_prefix=prefix)

    @bp.get("/user")
    def authenticated_user() -> Response:
        authenticate_token()
        token = request_token()
        if token is None:
            raise ApiError(401, "Requires authentication")
        if token.kind != "user" or not token.login:
            raise ApiError(403, NOT_FOR_INTEGRATIONS)
        return json_response(store().user(token.login))

    return bp

"""The fake GitHub's Flask app: every request is logged, may meet an injected fault, is
authenticated like GitHub does it, and leaves with ``x-ratelimit-*`` headers.

Routes live in ``rest.py``, ``pulls.py``, ``threads.py``, ``checks.py``, ``graphql.py``
and ``git.py``;
this module holds the plumbing they share (errors, auth, pagination).
"""

from __future__ import annotations

import json
import math
import time
import urllib.parse
from http import HTTPStatus
from typing import Any

import jwt
from cryptography.hazmat.primitives import serialization
from flask import Flask, Response, current_app, g, request
from flask.typing import ResponseReturnValue

from tests.fakes.github.shapes import Json
from tests.fakes.github.store import (
    DOCS,
    RATE_LIMIT,
    Fault,
    Installation,
    Repo,
    RequestRecord,
    Store,
    Token,
    clean_headers,
)

JWT_MAX_LIFETIME = 600
CLOCK_SKEW = 60


class ApiError(Exception):
    """An error answered in GitHub's shape: ``{"message", "errors"?, "documentation_url"}``."""

    def __init__(
        self,
        status: int,
        message: str,
        *,
        errors: list[Any] | None = None,
        docs: str = DOCS,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.body: Json = {"message": message, "documentation_url": docs, "status": str(status)}
        if errors is not None:
            self.body["errors"] = errors
        self.headers = headers or {}


def validation_failed(resource: str, field: str, message: str, docs: str = DOCS) -> ApiError:
    error = {"resource": resource, "code": "custom", "field": field, "message": message}
    return ApiError(422, "Validation Failed", errors=[error], docs=docs)


def store() -> Store:
    s: Store = current_app.config["STORE"]
    return s


def record() -> RequestRecord:
    r: RequestRecord = g.record
    return r


def forbid(reason: str) -> None:
    """Mark this request as one GitNeural must never make (a repository write, an approval)."""
    record().forbidden = reason


def body_json() -> Json:
    data = request.get_json(silent=True)
    if data is None and request.get_data():
        raise ApiError(400, "Problems parsing JSON")
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ApiError(400, "Problems parsing JSON")
    return data


def json_response(data: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    resp = Response(json.dumps(data), status=status, mimetype="application/json")
    for key, value in (headers or {}).items():
        resp.headers[key] = value
    return resp


class helper_context:
    """Run JSON builders that read ``flask.current_app`` outside a request (test helpers)."""

    def __init__(self, s: Store) -> None:
        app = Flask("fakegithub-helpers")
        app.config["STORE"] = s
        self._ctx = app.app_context()

    def __enter__(self) -> None:
        self._ctx.push()

    def __exit__(self, *exc: object) -> None:
        self._ctx.pop()


def public(obj: Json) -> Json:
    """A stored object without the fake's bookkeeping keys (those starting with ``_``)."""
    return {k: v for k, v in obj.items() if not k.startswith("_")}


def paginate(items: list[Json], *, wrap: str | None = None) -> Response:
    """GitHub pagination: ``per_page`` (default 30, max 100), ``page``, and a Link header."""
    try:
        per_page = max(1, min(int(request.args.get("per_page", 30)), 100))
        page = max(1, int(request.args.get("page", 1)))
    except ValueError:
        raise ApiError(400, "Invalid pagination parameters") from None
    last = max(1, math.ceil(len(items) / per_page))
    chunk = [public(i) for i in items[(page - 1) * per_page : page * per_page]]

    def link(n: int) -> str:
        query = {**request.args.to_dict(), "per_page": str(per_page), "page": str(n)}
        return f"{store().api_url}{record().path}?{urllib.parse.urlencode(query)}"

    rels = []
    if page < last:
        rels += [f'<{link(page + 1)}>; rel="next"', f'<{link(last)}>; rel="last"']
    if page > 1:
        rels += [f'<{link(page - 1)}>; rel="prev"', f'<{link(1)}>; rel="first"']
    headers = {"Link": ", ".join(rels)} if rels else {}
    data: Any = {"total_count": len(items), wrap: chunk} if wrap else chunk
    return json_response(data, headers=headers)


# -- authentication ---------------------------------------------------------------------


def _credentials() -> tuple[str, str] | None:
    header = request.headers.get("Authorization", "")
    scheme, _, value = header.partition(" ")
    if not value:
        return None
    return scheme.lower(), value.strip()


def require_jwt() -> None:
    """Authenticate the App itself: an RS256 JWT signed with its key, iss = app id."""
    creds = _credentials()
    if creds is None or creds[0] != "bearer":
        raise ApiError(401, "A JSON web token could not be decoded")
    s = store()
    key = serialization.load_pem_private_key(s.private_key_pem.encode(), None).public_key()
    try:
        claims = jwt.decode(
            creds[1],
            key,  # type: ignore[arg-type]
            algorithms=["RS256"],
            options={"require": ["exp", "iat", "iss"]},
            leeway=CLOCK_SKEW,
        )
    except jwt.ExpiredSignatureError:
        raise ApiError(
            401,
            "'Expiration time' claim ('exp') must be a numeric value representing the future "
            "time at which the assertion expires",
        ) from None
    except jwt.PyJWTError:
        raise ApiError(401, "A JSON web token could not be decoded") from None
    if claims["exp"] > time.time() + JWT_MAX_LIFETIME + CLOCK_SKEW:
        raise ApiError(401, "'Expiration time' claim ('exp') is too far in the future")
    if str(claims["iss"]) != str(s.app_id):
        raise ApiError(401, "Integration not found")
    record().auth = "app"


def _rate_limited(inst: Installation) -> None:
    now = time.time()
    if now >= inst.reset_at:
        inst.remaining, inst.reset_at = RATE_LIMIT, now + 3600
    if inst.remaining <= 0:
        raise ApiError(
            403,
            f"API rate limit exceeded for installation ID {inst.id}.",
            docs="https://docs.github.com/rest/overview/rate-limits-for-the-rest-api",
            headers={"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(int(inst.reset_at))},
        )
    inst.remaining -= 1


def authenticate_token() -> int | None:
    """The installation a request's token belongs to (None when there is no token)."""
    creds = _credentials()
    if creds is None:
        return None
    token = store().valid_token(creds[1]) if creds[0] in ("token", "bearer") else None
    if token is None:
        record().auth = "invalid"
        raise ApiError(401, "Bad credentials")
    credit(token)
    with store().lock:
        _rate_limited(store().installations[token.installation_id])
    return token.installation_id


def credit(token: Token) -> None:
    """Note who this request acts as: the log's ``auth`` (``installation:<id>`` for the
    App's tokens, ``actions:<id>`` for a workflow's, ``user:<login>`` for a person's)."""
    if token.kind == "user":
        record().auth = f"user:{token.login}"
    else:
        prefix = "actions" if token.kind == "actions" else "installation"
        record().auth = f"{prefix}:{token.installation_id}"
    record().installation_id = token.installation_id
    g.token = token


def request_token() -> Token | None:
    """The valid token this request was authenticated with, if any."""
    token: Token | None = g.get("token")
    return token


def actor_login() -> str:
    """Who what this request posts appears under: the token's login, else the App's bot."""
    token = request_token()
    return token.login if token is not None and token.login else store().bot_login


def auth_repo(owner: str, name: str) -> Repo:
    """The repository, if this request's token may see it; 404 otherwise, like GitHub."""
    s = store()
    installation_id = authenticate_token()
    repo = s.repos.get(f"{owner}/{name}")
    if repo is None:
        raise ApiError(404, "Not Found")
    creds = _credentials()
    token = s.valid_token(creds[1]) if creds else None
    if token is None:
        if repo.private:
            raise ApiError(404, "Not Found")
    elif installation_id is None or not s.token_allows(token, repo):
        raise ApiError(404, "Not Found")
    return repo


def owned(repo: Repo, table: dict[int, Json], key: int) -> Json:
    """``table[key]`` if it belongs to ``repo``; 404 otherwise, as GitHub hides other repos'."""
    obj = table.get(key)
    if obj is None or obj["_repo"] != repo.full_name:
        raise ApiError(404, "Not Found")
    return obj


def require_token() -> None:
    if record().installation_id is None:
        raise ApiError(401, "Requires authentication")


# -- the app ----------------------------------------------------------------------------


def _fault_response(fault: Fault) -> Response:
    if isinstance(fault.body, str):
        resp = Response(fault.body, status=fault.status, mimetype="text/html")
    else:
        phrase = (
            HTTPStatus(fault.status).phrase if fault.status in HTTPStatus._value2member_map_ else ""
        )
        body = (
            fault.body if fault.body is not None else {"message": phrase, "documentation_url": DOCS}
        )
        resp = json_response(body, status=fault.status)
    for key, value in fault.headers.items():
        resp.headers[key] = value
    return resp


def graphql_path(api_prefix: str) -> str:
    """Where GitHub (and PyGithub) put GraphQL next to the REST API prefix: ``/graphql``,
    or ``/api/graphql`` beside GitHub Enterprise Server's ``/api/v3``."""
    return api_prefix.rstrip("/").removesuffix("/v3") + "/graphql"


def _kind_and_path(prefix: str) -> tuple[str, str]:
    path = request.path
    if path == graphql_path(prefix):
        return "api", "/graphql"
    if path == prefix or path.startswith(prefix + "/"):
        return "api", path[len(prefix) :] or "/"
    if path.startswith("/_fake/"):
        return "control", path
    if ".git/" in path:
        return "git", path
    return "web", path


def _before() -> ResponseReturnValue | None:
    kind, path = _kind_and_path(current_app.config["API_PREFIX"])
    g.fault = None
    if kind == "control":
        g.record = None
        return None
    is_json = request.mimetype == "application/json" or kind == "api"
    rec = RequestRecord(
        method=request.method,
        path=path,
        kind=kind,
        query=request.args.to_dict(),
        json=request.get_json(silent=True) if is_json else None,
        headers=clean_headers(dict(request.headers)),
    )
    g.record = rec
    s = store()
    with s.lock:
        s.log.append(rec)
    fault = s.take_fault(request.method, path)
    if fault is None:
        return None
    rec.fault = fault.status
    if fault.delay:
        time.sleep(fault.delay)
    if fault.apply:
        g.fault = fault
        return None
    rec.applied = False
    return _fault_response(fault)


def _after(resp: Response) -> Response:
    rec: RequestRecord | None = g.get("record")
    if rec is None:
        return resp
    fault: Fault | None = g.get("fault")
    if fault is not None:
        resp = _fault_response(fault)
    rec.status = resp.status_code
    if rec.kind in ("api", "git") and resp.status_code < 400:
        for trigger in store().take_triggers(rec.method, rec.path):
            trigger.action()
    rec.response_bytes = resp.calculate_content_length() or 0
    rec.done_at = time.time()
    if rec.kind == "api":
        s = store()
        inst = s.installations.get(rec.installation_id) if rec.installation_id else None
        remaining = inst.remaining if inst else RATE_LIMIT
        reset = inst.reset_at if inst else time.time() + 3600
        defaults = {
            "x-ratelimit-limit": str(RATE_LIMIT),
            "x-ratelimit-remaining": str(remaining),
            "x-ratelimit-reset": str(int(reset)),
            "x-ratelimit-used": str(RATE_LIMIT - remaining),
            "x-ratelimit-resource": "core",
            "x-github-media-type": "github.v3; format=json",
        }
        for key, value in defaults.items():
            resp.headers.setdefault(key, value)
    return resp


def _api_error(exc: ApiError) -> Response:
    return json_response(exc.body, status=exc.status, headers=exc.headers)


def create_app(s: Store, api_prefix: str) -> Flask:
    # The route modules import this one for its plumbing: they are loaded when an app is made.
    from tests.fakes.github import (
        attachments,
        checks,
        git,
        graphql,
        manifests,
        pulls,
        rest,
        threads,
        users,
    )

    app = Flask("fakegithub")
    app.config["STORE"] = s
    app.config["API_PREFIX"] = api_prefix
    app.before_request(_before)
    app.after_request(_after)
    app.register_error_handler(ApiError, _api_error)
    app.register_blueprint(pulls.blueprint(api_prefix))
    app.register_blueprint(rest.blueprint(api_prefix))
    app.register_blueprint(checks.blueprint(api_prefix))
    app.register_blueprint(users.blueprint(api_prefix))
    app.register_blueprint(threads.blueprint(api_prefix))
    app.register_blueprint(graphql.blueprint(api_prefix))
    app.register_blueprint(manifests.blueprint(api_prefix))
    app.register_blueprint(git.blueprint())
    app.register_blueprint(attachments.blueprint())
    return app

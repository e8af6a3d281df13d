"""GitHub's App manifest flow, as the fake serves it.

- ``POST /settings/apps/new?state=S`` (or ``/organizations/ORG/settings/apps/new``) with a
  form field ``manifest`` (JSON): GitHub's page that names the App and its permissions,
  whose button (``id="create"``) creates it;
- that button redirects to the manifest's ``redirect_url`` with ``?code=…&state=S``;
- ``POST {api}/app-manifests/{code}/conversions`` (no authentication, each code once):
  201 with the App's ``id``, ``slug``, ``html_url``, ``pem`` (a key made now,
  ``tests/fakes/keys.py``), ``webhook_secret``, ``client_id`` and ``client_secret``. The
  fake hosts one App: the registered one replaces it (its id, key and slug), so what was
  there before stops authenticating, and its installations become the new App's;
- ``GET /apps/<slug>/installations/new``: the page "Install on repositories" leads to;
- ``GET {api}/app/hook/config`` (JWT): the App's webhook, for ``gitneural doctor``.
"""

from __future__ import annotations

import html
import json
import re
import secrets
import time
import urllib.parse

from flask import Blueprint, Response, request

from tests.fakes.github.app import ApiError, json_response, require_jwt, store
from tests.fakes.github.shapes import Json, iso
from tests.fakes.keys import new_rsa_pem

#: GitHub refuses a manifest without these.
REQUIRED = ("url", "hook_attributes")


def _page(title: str, body: str, status: int = 200) -> Response:
    text = (
        f"<!doctype html><html><head><title>{html.escape(title)}</title></head>"
        f"<body><h1>{html.escape(title)}</h1>{body}</body></html>"
    )
    return Response(text, status=status, mimetype="text/html")


def _manifest_from_form() -> Json:
    try:
        manifest = json.loads(request.form.get("manifest", ""))
    except json.JSONDecodeError:
        raise ApiError(422, "Invalid GitHub App configuration: manifest is not JSON") from None
    if not isinstance(manifest, dict):
        raise ApiError(422, "Invalid GitHub App configuration")
    missing = [k for k in REQUIRED if not manifest.get(k)]
    if missing or not (manifest.get("hook_attributes") or {}).get("url"):
        raise ApiError(422, f"Invalid GitHub App configuration: missing {missing or 'hook url'}")
    return manifest


def _new_app_page(owner: str) -> Response:
    manifest = _manifest_from_form()
    state = request.args.get("state", "")
    permissions = "".join(
        f"<li>{html.escape(str(k))}: {html.escape(str(v))}</li>"
        for k, v in sorted((manifest.get("default_permissions") or {}).items())
    )
    hidden = {"manifest": json.dumps(manifest), "state": state, "owner": owner}
    inputs = "".join(
        f'<input type="hidden" name="{k}" value="{html.escape(v, quote=True)}">'
        for k, v in hidden.items()
    )
    return _page(
        "Create GitHub App",
        f'<p id="app-name">{html.escape(str(manifest.get("name", "")))}</p>'
        f'<p id="owner">{html.escape(owner)}</p><ul id="permissions">{permissions}</ul>'
        f'<form method="post" action="/settings/apps/new/create">{inputs}'
        f'<button type="submit" id="create">Create GitHub App for {html.escape(owner)}'
        "</button></form>",
    )


def _slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "app"


def blueprint(prefix: str) -> Blueprint:
    bp = Blueprint("manifests", __name__)

    @bp.post("/settings/apps/new")
    def new_app_for_user() -> Response:
        return _new_app_page("octocat")

    @bp.post("/organizations/<org>/settings/apps/new")
    def new_app_for_org(org: str) -> Response:
        return _new_app_page(org)

    @bp.post("/settings/apps/new/create")
    def create_app() -> Response:
        manifest = json.loads(request.form["manifest"])
        code = secrets.token_hex(10)
        s = store()
        with s.lock:
            s.manifest_codes[code] = {
                "manifest": manifest,
                "owner": request.form.get("owner", "octocat"),
                "expires_at": time.time() + 3600,
            }
        query = {"code": code}
        if request.form.get("state"):
            query["state"] = request.form["state"]
        target = manifest.get("redirect_url")
        if not target:
            return _page("App created", f"<p>{html.escape(str(manifest.get('name')))}</p>")
        sep = "&" if "?" in target else "?"
        location = target + sep + urllib.parse.urlencode(query)
        return Response(status=302, headers={"Location": location})

    @bp.get("/apps/<slug>/installations/new")
    def install_page(slug: str) -> Response:
        s = store()
        if slug != s.app_slug:
            return _page("Page not found", "", status=404)
        accounts = "".join(f"<li>{html.escape(i.account)}</li>" for i in s.installations.values())
        return _page(f"Install {slug}", f'<ul id="accounts">{accounts}</ul>')

    @bp.post(f"{prefix}/app-manifests/<code>/conversions")
    def convert(code: str) -> Response:
        s = store()
        with s.lock:
            pending = s.manifest_codes.pop(code, None)
        if pending is None or pending["expires_at"] < time.time():
            raise ApiError(404, "Not Found")
        manifest: Json = pending["manifest"]
        name = str(manifest.get("name") or "GitNeural")
        pem = new_rsa_pem()
        now = iso(time.time())
        with s.lock:
            s.app_id, s.app_slug, s.private_key_pem = s.next_id(), _slug(name), pem
            s.webhook_secret = secrets.token_hex(20)
            s.hook_url = str(manifest["hook_attributes"]["url"])
            s.registered_manifests.append(manifest)
            app: Json = {
                "id": s.app_id,
                "slug": s.app_slug,
                "node_id": f"A_{s.app_id}",
                "owner": s.user(pending["owner"]),
                "name": name,
                "description": manifest.get("description", ""),
                "external_url": manifest.get("url"),
                "html_url": f"{s.web_url}/apps/{s.app_slug}",
                "created_at": now,
                "updated_at": now,
                "permissions": manifest.get("default_permissions", {}),
                "events": manifest.get("default_events", []),
                "client_id": "Iv1." + secrets.token_hex(8),
                "client_secret": secrets.token_hex(20),
                "webhook_secret": s.webhook_secret,
                "pem": pem,
                **s.conversion_overrides,
            }
        return json_response(app, status=201)

    @bp.get(f"{prefix}/app/hook/config")
    def hook_config() -> Response:
        require_jwt()
        s = store()
        return json_response(
            {
                "content_type": "json",
                "insecure_ssl": "0",
                "url": s.hook_url or "https://gitneural.example.com/webhook",
                # GitHub shows a set secret masked; "" stands for an App with none.
                **({} if s.webhook_secret == "" else {"secret": "********"}),
            }
        )

    return bp

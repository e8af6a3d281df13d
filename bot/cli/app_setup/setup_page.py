"""``gitneural setup``'s local page: the form (account or organization, github.com or a
GitHub Enterprise Server, the public webhook URL), the manifest posted to GitHub, and
the callback that trades GitHub's code for the App's credentials.

A small standard-library server on the loopback address: it serves one person's browser
for the minutes the registration takes, and stops when the credentials are written.
Every value shown is escaped. Only the browser setup serves may finish: every request's
``Host`` must be the address setup bound (or ``--public-url``'s), so a DNS-rebinding page
is refused; the first page load gets a session cookie (``HttpOnly``, ``SameSite=Strict``)
and a later one without it is refused, so another local user cannot start a registration
of their own; ``/start`` needs that cookie and a same-origin ``Origin``; ``/callback``
needs the cookie and a ``state`` this page sent, used once.
"""

from __future__ import annotations

import html
import json
import secrets
import threading
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Final

from bot.errors import ConfigError, GitNeuralError
from bot.gh.manifest import (
    GITHUB_URL,
    RegisteredApp,
    api_url_for,
    app_manifest,
    convert_code,
    registration_url,
    site_address,
    web_url,
)

_STYLE = (
    "body{font:16px system-ui,sans-serif;max-width:42rem;margin:2rem auto;padding:0 1rem}"
    "label{display:block;margin:.8rem 0 .2rem}input[type=text],input[type=url]{width:100%}"
    "button,a.button{font-size:1rem;padding:.5rem 1rem;margin-top:1rem}"
    ".error{color:#a00}code{background:#eee;padding:0 .2rem}"
)


COOKIE: Final = "gitneural_setup"


def webhook_url(raw: str) -> str:
    """The public webhook URL, checked: http(s), a host, no credentials, query or
    fragment, and the path ``gitneural serve`` answers on (``…/webhook``)."""
    value = raw.strip()
    parts = site_address(value, path=True)
    if parts is None:
        raise ConfigError("the webhook URL must be an http(s) address GitHub can reach")
    if not parts.path.endswith("/webhook"):
        raise ConfigError(
            "the webhook URL must end in /webhook, where `gitneural serve` answers "
            "(https://HOST/webhook)"
        )
    return value


@dataclass
class SetupState:
    """What the page knows: its defaults, who may use it, the registrations started, the
    result."""

    callback_url: str
    on_registered: Callable[[RegisteredApp, str], str]
    github: str = GITHUB_URL
    organization: str = ""
    webhook_url: str = ""
    name: str = ""
    #: ``Host`` values the page answers (its bound address, the public URL's host);
    #: empty: any (only for the page's parts tested without a server of their own).
    hosts: frozenset[str] = frozenset()
    #: Origins a form may be posted from: the page's own.
    origins: frozenset[str] = frozenset()
    #: The page's address to tell a refused browser to open.
    page_url: str = ""
    secure_cookie: bool = False
    #: The one browser's session; handed out on the first page load only.
    session: str = field(default_factory=lambda: secrets.token_urlsafe(32))
    #: The one-time key in the address setup prints (``/?t=…``): the first page load must
    #: bring it, so another local user who reaches the port first gets no session.
    ticket: str = field(default_factory=lambda: secrets.token_urlsafe(16))
    session_given: bool = False
    #: state -> (GitHub's address, its API), for registrations started and not finished.
    started: dict[str, tuple[str, str]] = field(default_factory=dict)
    done: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)


def _page(title: str, body: str) -> bytes:
    return (
        f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{title}</title>'
        f"<style>{_STYLE}</style></head><body><h1>{title}</h1>{body}</body></html>"
    ).encode()


def _e(value: str) -> str:
    return html.escape(value, quote=True)


def form_page(state: SetupState, error: str = "") -> bytes:
    on_ghes = state.github != GITHUB_URL
    org = bool(state.organization)
    return _page(
        "Register GitNeural on GitHub",
        (f'<p class="error" id="error">{_e(error)}</p>' if error else "")
        + '<form method="post" action="/start">'
        "<fieldset><legend>Owner of the App</legend>"
        f'<label><input type="radio" name="owner" value="user" id="owner-user"'
        f"{'' if org else ' checked'}> my account</label>"
        f'<label><input type="radio" name="owner" value="org" id="owner-org"'
        f"{' checked' if org else ''}> an organization:</label>"
        f'<input type="text" name="organization" id="organization" '
        f'value="{_e(state.organization)}"></fieldset>'
        "<fieldset><legend>GitHub</legend>"
        f'<label><input type="radio" name="where" value="com" id="where-com"'
        f"{'' if on_ghes else ' checked'}> github.com</label>"
        f'<label><input type="radio" name="where" value="ghes" id="where-ghes"'
        f"{' checked' if on_ghes else ''}> GitHub Enterprise Server at:</label>"
        f'<input type="url" name="server" id="server" placeholder="https://github.example.com" '
        f'value="{_e(state.github if on_ghes else "")}"></fieldset>'
        '<label for="webhook">Public webhook URL (where GitHub reaches '
        "<code>gitneural serve</code>, path <code>/webhook</code>)</label>"
        f'<input type="url" name="webhook" id="webhook" required '
        f'placeholder="https://gitneural.example.com/webhook" value="{_e(state.webhook_url)}">'
        '<label for="name">App name</label>'
        f'<input type="text" name="name" id="name" value="{_e(state.name or "GitNeural")}">'
        '<button type="submit" id="continue">Continue</button></form>',
    )


def register_page(state: SetupState, fields: dict[str, str]) -> tuple[int, bytes]:
    """Check the form; the page whose button posts the manifest to GitHub."""
    try:
        github = web_url(fields.get("server", "") if fields.get("where") == "ghes" else "")
        org = fields.get("organization", "").strip() if fields.get("owner") == "org" else ""
        hook = webhook_url(fields.get("webhook", ""))
        token = secrets.token_urlsafe(24)
        target = registration_url(github, org or None, token)
    except (GitNeuralError, ValueError) as exc:
        return 400, form_page(state, str(exc))
    manifest = app_manifest(hook, state.callback_url, fields.get("name", "").strip() or None)
    with state.lock:
        state.started[token] = (github, api_url_for(github))
    owner = f"the organization {org}" if org else "your account"
    return 200, _page(
        "Register GitNeural on GitHub",
        f"<p>GitHub will ask you to name the App and create it for {_e(owner)} on "
        f"{_e(github)}, then send you back here.</p>"
        f'<form method="post" action="{_e(target)}">'
        f'<input type="hidden" name="manifest" value="{_e(json.dumps(manifest))}">'
        '<button type="submit" id="register">Register on GitHub</button></form>',
    )


def callback_page(state: SetupState, query: dict[str, str]) -> tuple[int, bytes]:
    """GitHub's redirect: check the state, convert the code, write the settings."""
    with state.lock:
        started = state.started.pop(query.get("state", ""), None)
    if started is None:
        return 400, _page(
            "Registration not recognised",
            '<p class="error" id="error">This page did not start that registration (the '
            'state does not match): <a href="/">start again</a>.</p>',
        )
    github, api = started
    try:
        app = convert_code(api, query.get("code", ""))
        written = state.on_registered(app, api)
    except GitNeuralError as exc:
        return 502, _page("Registration failed", f'<p class="error" id="error">{_e(str(exc))}</p>')
    return 200, _page(
        "GitNeural is registered",
        f"<p>The App <b>{_e(app.name)}</b> (id {app.app_id}) belongs to {_e(app.owner)} on "
        f"{_e(github)}. Its credentials are in <code>{_e(written)}</code>, readable by you "
        "only.</p><p>Next, choose the repositories it reviews:</p>"
        f'<p><a class="button" id="install" href="{_e(app.install_url)}">'
        "Install on repositories</a></p>"
        "<p>Then start it: <code>gitneural serve</code>.</p>",
    )


def refused_page(why: str, state: SetupState) -> bytes:
    where = (
        f" Open the address setup printed, <code>{_e(state.page_url)}?t=…</code>."
        if (state.page_url)
        else ""
    )
    return _page("Not this page", f'<p class="error" id="error">{_e(why)}{where}</p>')


def finish_page(path: str) -> bytes:
    """GitHub's redirect is a cross-site navigation, which a ``SameSite=Strict`` cookie
    does not follow: a click here, on this page's own origin, brings it."""
    return _page(
        "Finish the registration",
        "<p>GitHub has created the App. Finish here to write its credentials:</p>"
        f'<p><a class="button" id="finish" href="{_e(path)}">Finish</a></p>',
    )


class SetupHandler(BaseHTTPRequestHandler):
    server: SetupServer

    def log_message(self, format: str, *args: Any) -> None:
        pass  # the query carries GitHub's code: keep it off the terminal

    def _send(self, status: int, body: bytes, cookie: str = "") -> None:
        self.send_response(status)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        # Same-origin posts carry their Origin (under no-referrer browsers send "null"),
        # cross-origin navigations only the origin, never the callback's code.
        self.send_header("Referrer-Policy", "strict-origin-when-cross-origin")
        self.send_header("X-Frame-Options", "DENY")
        if cookie:
            self.send_header("Set-Cookie", cookie)
        self.end_headers()
        self.wfile.write(body)

    def _host_ok(self) -> bool:
        state = self.server.state
        if not state.hosts or self.headers.get("Host", "") in state.hosts:
            return True
        self._send(403, refused_page("This page answers only at its own address.", state))
        return False

    def _cookie(self) -> str | None:
        for part in self.headers.get("Cookie", "").split(";"):
            name, _, value = part.strip().partition("=")
            if name == COOKIE:
                return value
        return None

    def _session_ok(self) -> bool:
        state = self.server.state
        given = self._cookie()
        if given is not None and secrets.compare_digest(given, state.session):
            return True
        self._send(
            403,
            refused_page(
                "This browser did not open the setup page first (its cookie is missing "
                "or wrong): nothing was written.",
                state,
            ),
        )
        return False

    def _ticket_ok(self, query: str) -> bool:
        """The first load brings the printed one-time key (never shown by any page: a
        DNS-rebinding page could read what this origin answers it)."""
        given = dict(urllib.parse.parse_qsl(query)).get("t", "")
        if given and secrets.compare_digest(given, self.server.state.ticket):
            return True
        self._send(
            403,
            refused_page(
                "This address lacks the one-time key setup printed with it (…/?t=…), or "
                "another browser already used it: nothing was written.",
                self.server.state,
            ),
        )
        return False

    def _new_session(self) -> str:
        state = self.server.state
        with state.lock:
            if state.session_given:
                return ""
            state.session_given = True
        secure = "; Secure" if state.secure_cookie else ""
        return f"{COOKIE}={state.session}; Path=/; HttpOnly; SameSite=Strict{secure}"

    def do_GET(self) -> None:
        if not self._host_ok():
            return
        parts = urllib.parse.urlsplit(self.path)
        state = self.server.state
        if parts.path == "/":
            if self._cookie() is None and not self._ticket_ok(parts.query):
                return
            if self._cookie() is None and (cookie := self._new_session()):
                self._send(200, form_page(state), cookie)
            elif self._session_ok():
                self._send(200, form_page(state))
        elif parts.path == "/callback":
            query = dict(urllib.parse.parse_qsl(parts.query))
            with state.lock:
                known = query.get("state", "") in state.started
            if self._cookie() is None and known:
                self._send(200, finish_page(self.path))
                return
            if not self._session_ok():
                return
            status, body = callback_page(state, query)
            self._send(status, body)
            if status == 200:
                state.done.set()  # answered: setup may stop
        else:
            self._send(404, _page("Not found", '<p><a href="/">Start</a></p>'))

    def do_POST(self) -> None:
        if not self._host_ok():
            return
        if urllib.parse.urlsplit(self.path).path != "/start":
            self._send(404, _page("Not found", '<p><a href="/">Start</a></p>'))
            return
        state = self.server.state
        if state.origins and self.headers.get("Origin", "") not in state.origins:
            self._send(403, refused_page("The form was not posted from this page.", state))
            return
        if not self._session_ok():
            return
        length = min(int(self.headers.get("Content-Length") or 0), 64 * 1024)
        fields = dict(urllib.parse.parse_qsl(self.rfile.read(length).decode("utf-8", "replace")))
        self._send(*register_page(state, fields))


class SetupServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, address: tuple[str, int], state: SetupState) -> None:
        super().__init__(address, SetupHandler)
        self.state = state

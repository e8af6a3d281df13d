"""``gitneural setup`` run as the CLI, its real page driven over HTTP against the fake
GitHub's manifest flow: the browser that opened the page registers the App; a DNS-
rebinding page (another ``Host``), a cross-site form (another ``Origin``) and another
local user (no cookie, or a forged one) end with nothing written; a line break in
GitHub's answer is refused, not turned into settings of its own; ``--public-url`` puts
the callback and the webhook on the server's own name; a webhook URL not ending in
``/webhook`` is refused in one line."""

from __future__ import annotations

import html
import http.client
import re
import signal
import subprocess
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from bot.settings.env_file import read_settings
from tests.fakes.github import FakeGitHub
from tests.support.paths import ROOT
from tests.support.services import GITNEURAL
from tests.support.signals import interruptible

HOOK = "https://hooks.example/webhook"


@dataclass
class Answer:
    status: int
    headers: dict[str, str]
    text: str


@dataclass
class Setup:
    """``gitneural setup`` in a subprocess, and the page's address it printed."""

    process: subprocess.Popen[str]
    page: str
    settings: Path
    #: Where the page listens (behind --public-url's proxy, the bound address).
    address: str

    def origin(self) -> str:
        return f"http://{self.address}"

    @property
    def first(self) -> str:
        """The printed page's path with its one-time key (``/?t=…``): the first load's."""
        parts = urllib.parse.urlsplit(self.page)
        return f"{parts.path}?{parts.query}"

    def stop(self) -> tuple[int, str]:
        """Ctrl-C, as a person who gives up waiting would."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
        return self.finished()

    def finished(self) -> tuple[int, str]:
        _, err = self.process.communicate(timeout=30)
        return self.process.returncode, err


def ask(
    address: str, method: str, path: str, headers: dict[str, str] | None = None, body: str = ""
) -> Answer:
    conn = http.client.HTTPConnection(address, timeout=30)
    try:
        sent = {"Content-Type": "application/x-www-form-urlencoded", **(headers or {})}
        conn.request(method, path, body=body.encode() if body else None, headers=sent)
        response = conn.getresponse()
        return Answer(response.status, dict(response.getheaders()), response.read().decode())
    finally:
        conn.close()


def start_setup(tmp: Path, *args: str) -> Setup:
    settings = tmp / "gitneural.env"
    process = subprocess.Popen(
        [*GITNEURAL, "setup", "--port", "0", "--settings-file", str(settings), *args],
        cwd=tmp,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), "HOME": str(tmp)},
        preexec_fn=interruptible,  # stop() sends SIGINT: tests/support/signals.py says why
    )
    assert process.stdout is not None
    first = process.stdout.readline()
    assert "open " in first, first + (process.communicate()[1] if process.poll() else "")
    page = first.split("open ", 1)[1].split(" ", 1)[0]
    bound = first.split("served at ", 1)[1].split("/ ", 1)[0] if "served at" in first else page
    return Setup(process, page, settings, urllib.parse.urlsplit(bound).netloc)


@pytest.fixture
def gh(tmp_path: Path) -> Iterator[FakeGitHub]:
    with FakeGitHub(tmp_path / "gh") as fake:
        yield fake


@pytest.fixture
def setup(tmp_path: Path) -> Iterator[Setup]:
    started = start_setup(tmp_path)
    try:
        yield started
    finally:
        if started.process.poll() is None:
            started.process.kill()
            started.process.communicate()


def cookie_of(answer: Answer) -> str:
    return answer.headers.get("Set-Cookie", "").split(";", 1)[0]


def post_start(setup: Setup, gh: FakeGitHub, headers: dict[str, str], hook: str = HOOK) -> Answer:
    form = {"where": "ghes", "server": gh.web_url, "webhook": hook}
    return ask(setup.address, "POST", "/start", headers, urllib.parse.urlencode(form))


def _field(page: str, pattern: str) -> str:
    found = re.search(pattern, page)
    assert found, page
    return html.unescape(found[1])


def manifest_of(register: Answer) -> str:
    return _field(register.text, r'name="manifest" value="([^"]*)"')


def through_github(gh: FakeGitHub, register: Answer) -> str:
    """GitHub's part: the manifest posted, "Create" pressed; the callback's path."""
    action = urllib.parse.urlsplit(_field(register.text, r'<form method="post" action="([^"]+)"'))
    form = urllib.parse.urlencode({"manifest": manifest_of(register)})
    page = ask(action.netloc, "POST", f"{action.path}?{action.query}", {}, form)
    hidden = re.findall(r'<input type="hidden" name="(\w+)" value="([^"]*)"', page.text)
    create = urllib.parse.urlencode({k: html.unescape(v) for k, v in hidden})
    created = ask(action.netloc, "POST", "/settings/apps/new/create", {}, create)
    assert created.status == 302, created.text
    location = urllib.parse.urlsplit(created.headers["Location"])
    return f"{location.path}?{location.query}"


def test_the_browser_that_opened_the_page_registers_the_app(setup: Setup, gh: FakeGitHub) -> None:
    first = ask(setup.address, "GET", setup.first, {"Host": setup.address})
    cookie = cookie_of(first)
    assert first.status == 200 and cookie.startswith("gitneural_setup=")
    assert "HttpOnly" in first.headers["Set-Cookie"]
    assert "SameSite=Strict" in first.headers["Set-Cookie"]
    register = post_start(setup, gh, {"Cookie": cookie, "Origin": setup.origin()})
    assert register.status == 200, register.text
    callback = through_github(gh, register)
    done = ask(setup.address, "GET", callback, {"Cookie": cookie})
    assert done.status == 200 and "GitNeural is registered" in done.text
    code, err = setup.finished()
    assert code == 0, err
    assert read_settings(setup.settings)["GITHUB_APP_ID"] == str(gh.app_id)


def assert_nothing_written(setup: Setup, gh: FakeGitHub) -> None:
    code, _ = setup.stop()
    assert code == 130  # still waiting for its own browser when stopped
    assert not setup.settings.exists()


def test_a_dns_rebinding_page_is_refused_at_every_door(setup: Setup, gh: FakeGitHub) -> None:
    rebound = {"Host": f"rebind.example:{setup.address.rsplit(':', 1)[1]}"}
    first = ask(setup.address, "GET", setup.first, rebound)
    assert first.status == 403 and not cookie_of(first)
    shown = html.unescape(first.text)
    assert setup.page.split("?")[0] in shown  # told where to go instead
    assert setup.page.split("?t=")[1] not in shown  # never the key: that page can read it
    start = post_start(setup, gh, {**rebound, "Origin": "http://rebind.example"})
    assert start.status == 403
    assert ask(setup.address, "GET", "/callback?code=abc&state=x", rebound).status == 403
    assert gh.registered_manifests() == []
    assert_nothing_written(setup, gh)


def test_another_local_user_cannot_start_a_registration(setup: Setup, gh: FakeGitHub) -> None:
    cookie = cookie_of(ask(setup.address, "GET", setup.first))  # the person who ran setup
    again = ask(setup.address, "GET", setup.first)  # someone else, later, with the key
    assert again.status == 403 and not cookie_of(again)
    for headers in ({}, {"Cookie": "gitneural_setup=forged"}):
        start = post_start(setup, gh, {**headers, "Origin": setup.origin()})
        assert start.status == 403 and "nothing was written" in start.text
    # A cross-site form post, even with the browser's cookie attached:
    cross = post_start(setup, gh, {"Cookie": cookie, "Origin": "http://attacker.example"})
    assert cross.status == 403
    assert post_start(setup, gh, {"Cookie": cookie}).status == 403  # no Origin at all
    assert gh.registered_manifests() == []
    assert_nothing_written(setup, gh)


def test_a_local_user_who_reaches_the_port_first_gets_no_session(
    setup: Setup, gh: FakeGitHub
) -> None:
    # Someone else on this machine finds the port before the person who ran setup opens
    # the printed address: without its one-time key the page gives them nothing.
    for path in ("/", "/?t=", "/?t=guessed"):
        early = ask(setup.address, "GET", path)
        assert early.status == 403 and not cookie_of(early), path
        assert "one-time key" in early.text
    start = post_start(setup, gh, {"Origin": setup.origin()})
    assert start.status == 403
    # The printed address still works for the person who ran setup, once.
    mine = ask(setup.address, "GET", setup.first)
    assert mine.status == 200 and cookie_of(mine)
    assert ask(setup.address, "GET", setup.first).status == 403  # the key was used
    assert gh.registered_manifests() == []
    assert_nothing_written(setup, gh)


def test_a_callback_without_the_browsers_cookie_writes_nothing(
    setup: Setup, gh: FakeGitHub
) -> None:
    cookie = cookie_of(ask(setup.address, "GET", setup.first))
    register = post_start(setup, gh, {"Cookie": cookie, "Origin": setup.origin()})
    callback = through_github(gh, register)
    forged = ask(setup.address, "GET", callback, {"Cookie": "gitneural_setup=forged"})
    assert forged.status == 403
    # No cookie (GitHub's cross-site redirect, or someone who saw the URL): a page whose
    # link, followed on this origin, brings the Strict cookie; nothing is converted.
    bare = ask(setup.address, "GET", callback)
    assert bare.status == 200 and 'id="finish"' in bare.text
    assert not setup.settings.exists() and gh.registered_manifests() == []
    assert ask(setup.address, "GET", callback, {"Cookie": cookie}).status == 200
    code, err = setup.finished()
    assert code == 0, err
    assert read_settings(setup.settings)["GITHUB_APP_ID"] == str(gh.app_id)


def test_a_line_break_in_githubs_answer_is_refused(setup: Setup, gh: FakeGitHub) -> None:
    with gh.store.lock:
        gh.store.conversion_overrides = {
            "webhook_secret": "a-webhook-secret-" + "x" * 16 + "\rKIMI_BASE_URL=http://evil.test/v1"
        }
    cookie = cookie_of(ask(setup.address, "GET", setup.first))
    register = post_start(setup, gh, {"Cookie": cookie, "Origin": setup.origin()})
    done = ask(setup.address, "GET", through_github(gh, register), {"Cookie": cookie})
    assert done.status == 502, done.text
    assert "control character" in done.text and "nothing written" in done.text
    assert "evil.test" not in done.text
    assert_nothing_written(setup, gh)


def test_public_url_puts_the_callback_and_webhook_on_the_servers_name(
    tmp_path: Path, gh: FakeGitHub
) -> None:
    setup = start_setup(tmp_path, "--public-url", "https://gitneural.example.com/")
    try:
        assert setup.page.startswith("https://gitneural.example.com/?t=")
        local = ask(setup.address, "GET", setup.first)  # the bound address is not the page's now
        assert local.status == 403
        proxied = {"Host": "gitneural.example.com"}
        first = ask(setup.address, "GET", setup.first, proxied)
        assert first.status == 200 and "; Secure" in first.headers["Set-Cookie"]
        assert 'value="https://gitneural.example.com/webhook"' in first.text
        headers = {**proxied, "Cookie": cookie_of(first), "Origin": "https://gitneural.example.com"}
        form = {
            "where": "ghes",
            "server": gh.web_url,
            "webhook": "https://gitneural.example.com/webhook",
        }
        register = ask(setup.address, "POST", "/start", headers, urllib.parse.urlencode(form))
        assert register.status == 200, register.text
        manifest = manifest_of(register)
        assert '"redirect_url": "https://gitneural.example.com/callback"' in manifest
        assert '"url": "https://gitneural.example.com/webhook"' in manifest
    finally:
        setup.stop()


def test_a_webhook_url_not_ending_in_webhook_is_refused(
    setup: Setup, gh: FakeGitHub, tmp_path: Path
) -> None:
    cookie = cookie_of(ask(setup.address, "GET", setup.first))
    wrong = post_start(
        setup, gh, {"Cookie": cookie, "Origin": setup.origin()}, "https://hooks.example/"
    )
    assert wrong.status == 400 and "must end in /webhook" in wrong.text
    other = tmp_path / "other"
    other.mkdir()
    done = subprocess.run(
        [*GITNEURAL, "setup", "--port", "0", "--webhook-url", "https://hooks.example/hooks"],
        cwd=other,
        text=True,
        capture_output=True,
        timeout=60,
        check=False,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)},
    )
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.strip().splitlines() == [
        "gitneural: error: the webhook URL must end in /webhook, where `gitneural serve` "
        "answers (https://HOST/webhook)"
    ]

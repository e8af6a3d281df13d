"""A newcomer's way to the first review, in a fresh virtual environment where GitNeural is
installed by ``deploy/Containerfile``'s own install commands (``pip install '.[app]'``
in a copy of the repository as git knows it):

- the container file's start command serves until ``/readyz`` answers 200, its health
  check passes, and ``serve`` says in one line where it serves, without the libraries'
  banners;
- ``gitneural setup`` registers the App on the fake GitHub through headless Chromium
  (the manifest flow), then ``gitneural serve`` with nothing but the settings file it
  wrote and a model key receives a signed ``pull_request`` delivery and posts a review
  from the K3 stub.
"""

from __future__ import annotations

import contextlib
import http.client
import os
import signal
import stat
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from bot.gh.manifest import load_manifest
from tests.support.browser import artifacts_dir, chromium
from tests.support.containerfile import build_context, read_containerfile
from tests.support.once import built_once
from tests.support.paths import ROOT
from tests.support.services import SUGGESTION, AppWorld, app_world, free_port, wait_for
from tests.support.webhooks import encode, headers_for, http_post

# The install alone takes minutes on a loaded machine.
pytestmark = [pytest.mark.slow, pytest.mark.timeout(1800)]

#: What the fast tests of the App set too: quick polling, short leases.
QUICK = {
    "GITNEURAL_BROKER_POLL_INTERVAL": "0.05",
    "GITNEURAL_LOCK_RETRY_DELAY": "0.3",
    "GITNEURAL_RETRY_BACKOFF": "0.2",
    "GITNEURAL_RETRY_BACKOFF_MAX": "1",
    "GITNEURAL_SHUTDOWN_GRACE": "2",
}


@pytest.fixture(scope="session")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtual environment with GitNeural installed as the container file says
    (made once per run: both tests here use it, and xdist hands them to two workers)."""
    root = built_once(tmp_path_factory, "newcomer", install_as_the_container_file_says)
    return root / "venv" / "bin"


def install_as_the_container_file_says(root: Path) -> None:
    context = build_context(root / "context")
    subprocess.run([sys.executable, "-m", "venv", str(root / "venv")], check=True)
    bin_dir = root / "venv" / "bin"
    env = {**clean_env(), "PATH": f"{bin_dir}:{os.environ['PATH']}"}
    commands = read_containerfile().install_commands
    assert commands, "the container file installs GitNeural with pip"
    for command in commands:
        done = subprocess.run(
            ["sh", "-c", command],
            cwd=context,
            env=env,
            capture_output=True,
            text=True,
            timeout=1200,
            check=False,
        )
        assert done.returncode == 0, f"{command}:\n{done.stdout[-2000:]}{done.stderr[-3000:]}"
    assert (bin_dir / "gitneural").exists()


def clean_env() -> dict[str, str]:
    """This machine's environment without any setting of GitNeural's or GitHub's."""
    prefixes = ("GITNEURAL_", "GITHUB_", "KIMI_", "MOONSHOT_", "VIRTUAL_ENV", "PYTHON")
    return {k: v for k, v in os.environ.items() if not k.startswith(prefixes)}


def get_status(address: str, path: str) -> int:
    conn = http.client.HTTPConnection(address, timeout=5)
    try:
        conn.request("GET", path)
        return conn.getresponse().status
    except OSError:
        return 0
    finally:
        conn.close()


class Started:
    """A command of the fresh install in its own process, its output in a file."""

    def __init__(self, argv: list[str], env: dict[str, str], cwd: Path, log: Path) -> None:
        self.log_path = log
        self._log = log.open("wb")
        self.proc = subprocess.Popen(
            argv, env=env, cwd=cwd, stdout=self._log, stderr=subprocess.STDOUT
        )

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def wait_status(self, address: str, path: str, timeout: float = 120) -> None:
        def answered() -> bool:
            if self.proc.poll() is not None:
                raise AssertionError(f"exited {self.proc.returncode}:\n{self.log()[-3000:]}")
            return get_status(address, path) == 200

        wait_for(answered, f"GET {path} 200", timeout, 0.2)

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            code = self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            code = self.proc.wait()
        self._log.close()
        return code


@pytest.fixture
def world(tmp_path: Path) -> Iterator[AppWorld]:
    with app_world(tmp_path / "fakes") as w:
        yield w


def test_the_container_files_start_command_serves_until_readyz_answers(
    venv: Path, world: AppWorld, tmp_path: Path
) -> None:
    image = read_containerfile()
    port = free_port()
    # As `podman run --env-file gitneural.env -e GITNEURAL_PORT=… -v data:…` would.
    env = {
        **clean_env(),
        **image.env,
        **world.env(tmp_path / "data"),
        **QUICK,
        "GITNEURAL_HOST": "127.0.0.1",
        "GITNEURAL_PORT": str(port),
        "PATH": f"{venv}:{os.environ['PATH']}",
    }
    home = tmp_path / "home"
    home.mkdir()
    served = Started(image.cmd, env, home, tmp_path / "serve.log")
    try:
        served.wait_status(f"127.0.0.1:{port}", "/readyz")
        health = subprocess.run(
            image.healthcheck,
            env=env,
            cwd=home,
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
        assert health.returncode == 0, health.stderr
    finally:
        assert served.stop() == 0
    log = served.log()
    assert f"gitneural: serving the webhook at http://127.0.0.1:{port}/webhook" in log
    # No -v: none of Celery's or gunicorn's banners, no root SecurityWarning.
    for banner in (
        "-------------- celery@",
        "[config]",
        "[queues]",
        "Booting worker",
        "Listening at",
        "SecurityWarning",
        "Task ",
        "Connected to",
    ):
        assert banner not in log, log


def test_a_newcomer_registers_the_app_in_the_browser_and_gets_a_review(
    venv: Path, world: AppWorld, tmp_path: Path
) -> None:
    gh = world.gh
    home = tmp_path / "home"
    home.mkdir()
    env = {**clean_env(), "PATH": f"{venv}:{os.environ['PATH']}", "HOME": str(home)}
    serve_port = free_port()
    webhook = f"http://127.0.0.1:{serve_port}/webhook"
    setup = subprocess.Popen(
        [str(venv / "gitneural"), "setup", "--port", "0"],
        env=env,
        cwd=home,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert setup.stdout is not None
        first = setup.stdout.readline()
        page = first.split("open ", 1)[1].split(" ", 1)[0]
        with chromium() as browser:
            browser.get(page)
            assert browser.title == "Register GitNeural on GitHub"
            browser.find_element("id", "where-ghes").click()
            browser.find_element("id", "server").send_keys(gh.web_url)
            browser.find_element("id", "webhook").send_keys(webhook)
            browser.find_element("id", "continue").click()
            # The next page has the same title as the form: wait for its button instead.
            _element(browser, "register").click()
            # GitHub's page (the fake's): the manifest's permissions, then "Create".
            _arrive(browser, "Create GitHub App")
            assert "contents: read" in browser.find_element("id", "permissions").text
            browser.find_element("id", "create").click()
            _arrive(browser, "GitNeural is registered")
            browser.save_screenshot(str(artifacts_dir() / "setup-registered.png"))
            browser.find_element("id", "install").click()
            _arrive(browser, f"Install {gh.store.app_slug}")
        _, err = setup.communicate(timeout=30)
    finally:
        if setup.poll() is None:
            setup.kill()
            setup.communicate()
    assert setup.returncode == 0, err
    [manifest] = gh.registered_manifests()
    assert manifest["hook_attributes"]["url"] == webhook
    assert manifest["default_permissions"] == load_manifest()["default_permissions"]
    assert (
        manifest["default_permissions"]
        == yaml.safe_load((ROOT / "app.yml").read_text())["default_permissions"]
    )
    settings = home / "gitneural.env"
    assert stat.S_IMODE(settings.stat().st_mode) == 0o600
    text = settings.read_text()
    assert f"GITHUB_APP_ID={gh.app_id!s}" in text.replace('"', "")
    assert gh.webhook_secret and gh.webhook_secret in text

    # Then serve, with nothing but that file and a model key.
    serve_env = {
        **env,
        "KIMI_API_KEY": world.stub.api_key,
        "KIMI_BASE_URL": world.stub.base_url,
        "GITNEURAL_DATA_DIR": str(tmp_path / "data"),
        **QUICK,
    }
    served = Started(
        [str(venv / "gitneural"), "serve", "--port", str(serve_port), "--workers", "1"],
        serve_env,
        home,
        tmp_path / "serve.log",
    )
    try:
        address = f"127.0.0.1:{serve_port}"
        served.wait_status(address, "/readyz")
        number = world.new_pull()
        body = encode(world.opened(number))
        headers = headers_for(
            "pull_request", body, delivery=str(uuid.uuid4()), secret=gh.webhook_secret
        )
        reply = http_post(address, "/webhook", body, headers)
        assert reply.status == 202, reply
        [review] = wait_for(lambda: world.reviews(number), "the review", 120, 0.2)
    finally:
        assert served.stop() == 0
    assert "settings from" in served.log() and str(settings) in served.log()
    [comment] = review["comments"]
    assert comment["path"] == "people.py" and SUGGESTION in comment["body"]


def _settle(browser: Any, loaded: Callable[[Any], object]) -> None:
    """Wait (up to 30 s) until ``loaded(browser)``: a click returns before the browser has
    navigated, so reading the next page at once races the form's submission. The caller's
    own check afterwards says what was missing."""
    from selenium.common.exceptions import TimeoutException
    from selenium.webdriver.support.ui import WebDriverWait

    with contextlib.suppress(TimeoutException):
        WebDriverWait(browser, 30).until(loaded)


def _element(browser: Any, element_id: str) -> Any:
    """The element once the page holding it has loaded (a CI run found the form's page
    still showing)."""
    _settle(browser, lambda b: b.find_elements("id", element_id))
    return browser.find_element("id", element_id)


def _arrive(browser: Any, title: str) -> None:
    """Wait for the page titled ``title``."""
    _settle(browser, lambda b: b.title == title)
    assert browser.title == title

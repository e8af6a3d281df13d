"""``gitneural setup``'s parts that need no browser: the settings file it writes (owner
only, other lines kept, read back exactly, the environment winning), its refusal to
replace credentials without ``--force``, a callback whose ``state`` it did not send, a
code GitHub does not know, and the organization's and GHES's addresses. The whole flow in
headless Chromium is ``tests/system/test_newcomer.py``."""

from __future__ import annotations

import http.client
import stat
import subprocess
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.cli.app_setup.setup_page import SetupServer, SetupState, register_page
from bot.errors import ConfigError, GitHubError
from bot.gh.manifest import RegisteredApp, api_url_for, convert_code, registration_url, web_url
from bot.settings.env_file import load_settings_file, read_settings, write_settings
from tests.fakes.github import FakeGitHub
from tests.fakes.keys import new_rsa_pem
from tests.support.services import GITNEURAL, ROOT


def test_the_settings_file_is_owner_only_and_reads_back_exactly(tmp_path: Path) -> None:
    path = tmp_path / "gitneural.env"
    path.write_text("# mine\nKIMI_API_KEY=sk-kept\nGITHUB_APP_ID=1\n")
    path.chmod(0o644)
    pem = new_rsa_pem()
    values = {"GITHUB_APP_ID": "77", "GITHUB_PRIVATE_KEY": pem, "GITHUB_WEBHOOK_SECRET": 'a"b$c'}
    write_settings(path, values, "written by a test")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert [p.name for p in tmp_path.iterdir()] == ["gitneural.env"]  # no temporary left
    text = path.read_text()
    assert "KIMI_API_KEY=sk-kept" in text and "# mine" in text and "GITHUB_APP_ID=1\n" not in text
    assert pem not in text  # one line, with \n escapes
    assert read_settings(path) == {**values, "KIMI_API_KEY": "sk-kept"}
    environ = {"GITNEURAL_SETTINGS_FILE": str(path), "GITHUB_APP_ID": "99"}
    assert load_settings_file(environ) == path
    assert environ["GITHUB_APP_ID"] == "99"  # the environment wins
    assert environ["GITHUB_PRIVATE_KEY"] == pem


@pytest.mark.parametrize(
    "line", ["GITHUB_APP_ID", "GITHUB APP ID=1", 'KEY="unclosed', "KEY='unclosed", "=1"]
)
def test_a_line_that_is_not_name_equals_value_is_refused_with_its_number(
    tmp_path: Path, line: str
) -> None:
    path = tmp_path / "gitneural.env"
    path.write_text(f"# ok\nA=1\n{line}\n")
    with pytest.raises(ConfigError, match=rf"{path}:3 is not a NAME=value line"):
        read_settings(path)


def test_a_settings_file_named_but_missing_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not a file"):
        load_settings_file({"GITNEURAL_SETTINGS_FILE": str(tmp_path / "nope.env")})


def run_setup(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*GITNEURAL, "setup", "--port", "0", *args],
        cwd=cwd,
        text=True,
        capture_output=True,
        timeout=60,
        check=False,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)},
    )


def test_setup_refuses_to_replace_credentials_without_force(tmp_path: Path) -> None:
    path = tmp_path / "gitneural.env"
    path.write_text("GITHUB_APP_ID=12\nGITHUB_WEBHOOK_SECRET=x\n")
    done = run_setup(tmp_path)
    assert done.returncode == 2
    assert done.stderr.strip() == (
        f"gitneural: error: {path} already holds App credentials (GITHUB_APP_ID, "
        "GITHUB_WEBHOOK_SECRET): pass --force to register a new App and replace them"
    )
    assert path.read_text() == "GITHUB_APP_ID=12\nGITHUB_WEBHOOK_SECRET=x\n"


@pytest.fixture
def setup_page(tmp_path: Path) -> Iterator[tuple[str, list[RegisteredApp]]]:
    written: list[RegisteredApp] = []

    def write(app: RegisteredApp, api: str) -> str:
        written.append(app)
        return str(tmp_path / "gitneural.env")

    server = SetupServer(("127.0.0.1", 0), SetupState("http://x/callback", write))
    import threading

    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"127.0.0.1:{server.server_address[1]}", written
    finally:
        server.shutdown()
        server.server_close()


def get(address: str, path: str) -> tuple[int, str]:
    conn = http.client.HTTPConnection(address, timeout=10)
    try:
        conn.request("GET", path)
        response = conn.getresponse()
        return response.status, response.read().decode()
    finally:
        conn.close()


def test_a_callback_with_a_state_setup_did_not_send_writes_nothing(
    setup_page: tuple[str, list[RegisteredApp]],
) -> None:
    address, written = setup_page
    status, _ = get(address, "/callback?code=abc&state=forged")
    assert status == 403  # no cookie of the page's: refused before the state is read
    assert written == []


def test_a_code_github_does_not_know_is_refused_and_nothing_is_written(tmp_path: Path) -> None:
    with FakeGitHub(tmp_path / "gh") as gh:
        state = SetupState("http://127.0.0.1:9/callback", lambda app, api: "never")
        status, _ = register_page(
            state,
            {"where": "ghes", "server": gh.web_url, "webhook": "https://hooks.example/webhook"},
        )
        assert status == 200
        [token] = state.started
        with pytest.raises(GitHubError, match="register the App again"):
            convert_code(gh.api_url, "0123456789abcdef")
        assert gh.registered_manifests() == []
    assert token


def test_the_form_posts_to_the_organization_or_the_account_on_the_chosen_github() -> None:
    state = SetupState("http://127.0.0.1:9/callback", lambda app, api: "never")
    status, page = register_page(
        state,
        {
            "owner": "org",
            "organization": "octo-org",
            "where": "ghes",
            "server": "https://ghe.example.com",
            "webhook": "https://hooks.example/webhook",
        },
    )
    assert status == 200
    [(token, (github, api))] = state.started.items()
    action = f"https://ghe.example.com/organizations/octo-org/settings/apps/new?state={token}"
    assert f'action="{action}"' in page.decode()
    assert (github, api) == ("https://ghe.example.com", "https://ghe.example.com/api/v3")
    assert api_url_for(web_url("")) == "https://api.github.com"
    assert registration_url("https://github.com", None, "s") == (
        "https://github.com/settings/apps/new?state=s"
    )
    status, page = register_page(state, {"where": "com", "webhook": "not a url"})
    assert status == 400 and "webhook URL must be" in page.decode()
    with pytest.raises(ConfigError):
        web_url("https://ghe.example.com/some/path")
    assert urllib.parse.urlsplit(action).query.startswith("state=")


@pytest.mark.parametrize("brk", ["\r", "\x0b", "\x0c", "\x1c", "\x85", "\u2028", "\u2029", "\x00"])
def test_a_value_with_a_line_break_of_any_reader_is_refused_and_nothing_written(
    tmp_path: Path, brk: str
) -> None:
    path = tmp_path / "gitneural.env"
    path.write_text("KIMI_API_KEY=sk-kept\n")
    value = f"a-secret{brk}KIMI_BASE_URL=http://evil.test/v1"
    with pytest.raises(ConfigError, match="GITHUB_WEBHOOK_SECRET holds a control character"):
        write_settings(path, {"GITHUB_WEBHOOK_SECRET": value}, "a test")
    assert path.read_text() == "KIMI_API_KEY=sk-kept\n"
    # And the reader splits lines where the writer does, at \n alone: a hand-made line
    # holding a \r is an error naming it, not two settings.
    path.write_text(f'A=1\nGITHUB_WEBHOOK_SECRET="{value}"\n')
    with pytest.raises(ConfigError, match=rf"{path}:2 holds a control character"):
        read_settings(path)

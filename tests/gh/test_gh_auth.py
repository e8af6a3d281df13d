"""GitHub App authentication against the fake GitHub: JWTs it accepts, the token cache,
credentials from the environment, and a client that never posts twice."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import github
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from bot.action.env import ActionEnv
from bot.cli.pr_review import PullRef, parse_pull_ref
from bot.errors import ConfigError
from bot.gh.api.access_tokens import InstallationTokens
from bot.gh.api.client import installation_client
from bot.gh.api.credentials import AppCredentials, github_api_url
from bot.gh.api.errors import GitHubAuthError
from bot.gh.api.hosts import api_host_matches
from tests.cli.test_cli_review import run_cli
from tests.fakes.github import FakeGitHub

REPO = "octo/app"
MINT = "/app/installations/*/access_tokens"


@pytest.fixture
def gh(tmp_path: Path) -> Iterator[FakeGitHub]:
    with FakeGitHub(tmp_path / "gh") as fake:
        fake.create_repo(REPO, installation_id=1, files={"a.py": "x = 1\n"})
        fake.push(REPO, "feature", {"a.py": "x = 2\n"})
        fake.create_pull(REPO, head="feature")
        fake.create_repo("other/lib", installation_id=2)
        yield fake


@pytest.fixture
def creds(gh: FakeGitHub) -> AppCredentials:
    return AppCredentials(gh.app_id, gh.private_key_pem, gh.api_url)


def client(
    creds: AppCredentials, tokens: InstallationTokens, installation_id: int = 1
) -> github.Github:
    return installation_client(
        creds, tokens, installation_id, seconds_between_requests=None, seconds_between_writes=None
    )


def _pem(key: rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey) -> str:
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()


# -- tokens -------------------------------------------------------------------------------


def test_token_is_minted_with_an_accepted_jwt_and_cached(
    gh: FakeGitHub, creds: AppCredentials
) -> None:
    tokens = InstallationTokens(creds)
    token = tokens.get(1)
    assert token.startswith("ghs_")
    assert tokens.get(1) == token
    [mint] = gh.requests("POST", MINT)
    assert (mint.path, mint.auth, mint.status) == ("/app/installations/1/access_tokens", "app", 201)
    assert client(creds, tokens).get_repo(REPO).name == "app"


def test_token_is_minted_again_near_its_expiry(gh: FakeGitHub, creds: AppCredentials) -> None:
    gh.token_lifetime = 200  # inside the 300 s refresh margin from the start
    tokens = InstallationTokens(creds, refresh_margin_s=300)
    assert tokens.get(1) != tokens.get(1)
    relaxed = InstallationTokens(creds, refresh_margin_s=100)
    assert relaxed.get(1) == relaxed.get(1)
    assert len(gh.requests("POST", MINT)) == 3


def test_debug_logs_never_show_the_token(
    gh: FakeGitHub, creds: AppCredentials, caplog: pytest.LogCaptureFixture
) -> None:
    # PyGithub pins its logger at INFO; an operator debugging GitHub calls lowers it.
    with caplog.at_level(logging.DEBUG), caplog.at_level(logging.DEBUG, logger="github"):
        tokens = InstallationTokens(creds)
        token = tokens.get(1)
        client(creds, tokens).get_repo(REPO).get_pull(1)
    assert "access_tokens" in caplog.text  # PyGithub did log the minting exchange...
    assert token not in caplog.text  # ...without the token it answered with
    assert gh.private_key_pem.splitlines()[1] not in caplog.text


def test_invalidate_forces_a_new_token(gh: FakeGitHub, creds: AppCredentials) -> None:
    tokens = InstallationTokens(creds)
    first = tokens.get(1)
    tokens.invalidate(1)
    tokens.invalidate(99)  # unknown ids are fine
    assert tokens.get(1) != first


def test_concurrent_callers_share_one_token(gh: FakeGitHub, creds: AppCredentials) -> None:
    tokens = InstallationTokens(creds)
    seen: list[str] = []
    threads = [threading.Thread(target=lambda: seen.append(tokens.get(1))) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(seen) == 8
    assert len(set(seen)) == 1
    assert len(gh.requests("POST", MINT)) == 1


def test_each_installation_has_its_own_token(gh: FakeGitHub, creds: AppCredentials) -> None:
    tokens = InstallationTokens(creds)
    assert tokens.get(1) != tokens.get(2)
    with pytest.raises(github.UnknownObjectException):
        client(creds, tokens, 2).get_repo(REPO)
    assert client(creds, tokens, 1).get_repo(REPO).default_branch == "main"


def test_minting_errors_say_what_to_fix(gh: FakeGitHub, creds: AppCredentials) -> None:
    with pytest.raises(GitHubAuthError, match="installation 77 not found") as missing:
        InstallationTokens(creds).get(77)
    assert missing.value.transient is False
    wrong_key = _pem(rsa.generate_private_key(public_exponent=65537, key_size=2048))
    other = AppCredentials(gh.app_id, wrong_key, gh.api_url)
    with pytest.raises(GitHubAuthError, match="GITHUB_APP_ID") as refused:
        InstallationTokens(other).get(1)
    assert wrong_key.splitlines()[1] not in str(refused.value)
    gh.fail("POST", MINT, status=429, headers={"retry-after": "3600"})
    with pytest.raises(GitHubAuthError) as limited:
        InstallationTokens(creds).get(1)
    assert (limited.value.transient, limited.value.retry_after) == (True, 3600.0)
    gh.fail("POST", MINT, status=503, times=1)  # minting twice is harmless: it is retried
    assert InstallationTokens(creds).get(1).startswith("ghs_")


# -- credentials from the environment -----------------------------------------------------


@pytest.fixture(scope="module")
def key_pem() -> str:
    return _pem(rsa.generate_private_key(public_exponent=65537, key_size=2048))


def test_from_env_reads_id_key_and_api_url(key_pem: str, tmp_path: Path) -> None:
    creds = AppCredentials.from_env({"GITHUB_APP_ID": "42", "GITHUB_PRIVATE_KEY": key_pem})
    assert (creds.app_id, creds.api_url) == (42, "https://api.github.com")
    assert creds.private_key.strip() == key_pem.strip()
    assert "PRIVATE" not in repr(creds)
    assert key_pem.splitlines()[1] not in repr(creds)
    path = tmp_path / "app.pem"
    path.write_text(key_pem)
    env = {
        "GITHUB_APP_ID": "7",
        "GITHUB_PRIVATE_KEY_PATH": str(path),
        "GITHUB_API_URL": "https://ghe.example.com/api/v3/",
    }
    from_file = AppCredentials.from_env(env)
    assert from_file.api_url == "https://ghe.example.com/api/v3"
    assert from_file.private_key == creds.private_key
    one_line = key_pem.strip().replace("\n", "\\n")
    squeezed = AppCredentials.from_env({"GITHUB_APP_ID": "7", "GITHUB_PRIVATE_KEY": one_line})
    assert squeezed.private_key == creds.private_key


SECRET_LOOKING = "-----BEGIN RSA PRIVATE KEY-----\nTOPSECRETBYTES\n-----END RSA PRIVATE KEY-----"


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({}, "GITHUB_APP_ID is not set"),
        ({"GITHUB_APP_ID": "abc"}, "numeric id"),
        ({"GITHUB_APP_ID": "1"}, "no App private key"),
        ({"GITHUB_APP_ID": "1", "GITHUB_PRIVATE_KEY": SECRET_LOOKING}, "not an unencrypted PEM"),
        ({"GITHUB_APP_ID": "1", "GITHUB_PRIVATE_KEY_PATH": "/nonexistent/app.pem"}, "cannot read"),
        (
            {"GITHUB_APP_ID": "1", "GITHUB_PRIVATE_KEY": "k", "GITHUB_PRIVATE_KEY_PATH": "p"},
            "not both",
        ),
    ],
)
def test_from_env_errors(env: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError, match=message) as caught:
        AppCredentials.from_env(env)
    assert "TOPSECRETBYTES" not in str(caught.value)


def test_from_env_rejects_non_rsa_keys_and_bad_api_urls(key_pem: str) -> None:
    ec_key = _pem(ec.generate_private_key(ec.SECP256R1()))
    with pytest.raises(ConfigError, match="RSA"):
        AppCredentials.from_env({"GITHUB_APP_ID": "1", "GITHUB_PRIVATE_KEY": ec_key})
    for url in ("ftp://x", "https://user:pw@api.github.com", "api.github.com"):
        env = {"GITHUB_APP_ID": "1", "GITHUB_PRIVATE_KEY": key_pem, "GITHUB_API_URL": url}
        with pytest.raises(ConfigError, match="GITHUB_API_URL") as caught:
            AppCredentials.from_env(env)
        assert "pw" not in str(caught.value)


# -- the installation client --------------------------------------------------------------


def test_a_failed_post_is_never_retried(gh: FakeGitHub, creds: AppCredentials) -> None:
    pr = client(creds, InstallationTokens(creds)).get_repo(REPO).get_pull(1)
    reviews = f"/repos/{REPO}/pulls/1/reviews"
    gh.fail("POST", reviews, status=502, apply=True)  # GitHub stored it, then failed
    with pytest.raises(github.GithubException) as caught:
        pr.create_review(body="once", event="COMMENT")
    assert caught.value.status == 502
    gh.fail("POST", reviews, status=503)  # GitHub failed before storing
    with pytest.raises(github.GithubException):
        pr.create_review(body="twice?", event="COMMENT")
    assert [r["body"] for r in gh.reviews(REPO, 1)] == ["once"]
    assert len(gh.requests("POST", reviews)) == 2


def test_reads_are_retried_on_5xx(gh: FakeGitHub, creds: AppCredentials) -> None:
    repo = client(creds, InstallationTokens(creds)).get_repo(REPO)
    gh.fail("GET", f"/repos/{REPO}/pulls/1", status=502, times=2)
    assert repo.get_pull(1).number == 1
    assert [r.status for r in gh.requests("GET", f"/repos/{REPO}/pulls/1")] == [502, 502, 200]


def test_rate_limits_on_reads_wait_briefly_or_give_up(
    gh: FakeGitHub, creds: AppCredentials
) -> None:
    repo = client(creds, InstallationTokens(creds)).get_repo(REPO)
    path = f"/repos/{REPO}/pulls/1"
    gh.fail_secondary_rate_limit("GET", path, retry_after=0)
    assert repo.get_pull(1).number == 1
    gh.fail_secondary_rate_limit("GET", path, retry_after=3600)
    started = time.monotonic()
    with pytest.raises(github.GithubException) as caught:
        repo.get_pull(1)
    assert time.monotonic() - started < 5  # the task reschedules; the worker never sleeps 1 h
    assert caught.value.status == 403
    assert caught.value.headers is not None
    assert caught.value.headers["retry-after"] == "3600"


def test_an_expired_token_is_replaced_after_invalidate(
    gh: FakeGitHub, creds: AppCredentials
) -> None:
    tokens = InstallationTokens(creds)
    repo = client(creds, tokens).get_repo(REPO)
    gh.expire_tokens(1)
    with pytest.raises(github.BadCredentialsException):
        repo.get_pull(1)
    tokens.invalidate(1)
    assert repo.get_pull(1).number == 1  # the same client object picks up the new token
    assert len(gh.requests("POST", MINT)) == 2


# -- which clone URLs belong to which API --------------------------------------------------


@pytest.mark.parametrize(
    ("api_url", "clone_url", "matches"),
    [
        ("https://api.github.com", "https://github.com/o/r.git", True),
        ("https://api.github.com/", "https://GitHub.com/o/r.git", True),
        ("https://ghe.example.com/api/v3", "https://ghe.example.com/o/r.git", True),
        ("https://api.acme.ghe.com", "https://acme.ghe.com/o/r.git", True),
        ("http://127.0.0.1:8080/api/v3", "http://127.0.0.1:8080/o/r.git", True),
        ("http://127.0.0.1:8080/api/v3", "http://127.0.0.1:8081/o/r.git", False),
        ("https://api.github.com", "http://github.com/o/r.git", False),
        ("https://api.github.com", "https://evil.example/o/r.git", False),
        ("https://api.github.com", "https://github.com.evil.example/o/r.git", False),
        ("https://api.github.com", "https://x:y@github.com/o/r.git", False),
        ("https://api.github.com", "git@github.com:o/r.git", False),
        ("https://ghe.example.com/api/v3", "https://api.ghe.example.com/o/r.git", False),
    ],
)
def test_api_host_matches(api_url: str, clone_url: str, matches: bool) -> None:
    assert api_host_matches(api_url, clone_url) is matches


# -- plain http:// beyond this machine -----------------------------------------------------


def test_plain_http_github_beyond_loopback_is_refused_unless_allowed(
    key_pem: str, tmp_path: Path
) -> None:
    event = tmp_path / "event.json"
    event.write_text("{}")
    action = {
        "GITHUB_EVENT_NAME": "pull_request",
        "GITHUB_EVENT_PATH": str(event),
        "GITHUB_REPOSITORY": REPO,
    }
    # Every way an API URL comes in: the App (its workers), a token client (review --pr),
    # and the Action.
    readers: list[Callable[[dict[str, str]], str]] = [
        lambda env: (
            AppCredentials.from_env(
                {"GITHUB_APP_ID": "1", "GITHUB_PRIVATE_KEY": key_pem, **env}
            ).api_url
        ),
        github_api_url,
        lambda env: ActionEnv.from_env({**action, **env}).api_url,
    ]
    allow = {"GITNEURAL_ALLOW_INSECURE_GITHUB": "1"}
    for read in readers:
        for url in ("http://ghe.example.com/api/v3", "http://10.0.0.7", "http://localhost.example"):
            with pytest.raises(ConfigError, match="GITNEURAL_ALLOW_INSECURE_GITHUB=1") as caught:
                read({"GITHUB_API_URL": url})
            assert str(caught.value).startswith("GITHUB_API_URL is plain http:// to ")
            assert "\n" not in str(caught.value)
            assert read({"GITHUB_API_URL": url, **allow}) == url
        for url in (
            "https://ghe.example.com/api/v3",
            "http://127.0.0.1:8080/api/v3",
            "http://127.3.2.1",
            "http://[::1]:9000/api/v3",
            "http://localhost:3000",
            "http://LOCALHOST./api/v3",
        ):
            assert read({"GITHUB_API_URL": url}) == url
        with pytest.raises(ConfigError, match="must be true or false"):
            read(
                {"GITHUB_API_URL": "http://ghe.example.com", "GITNEURAL_ALLOW_INSECURE_GITHUB": "?"}
            )
    # review --pr's address: the same rule, before it is compared with the API's host.
    with pytest.raises(ConfigError, match=r"^--pr is plain http:// to 'github\.com'"):
        parse_pull_ref("http://github.com/octo/app/pull/1", "https://api.github.com", {})
    ghe = "http://ghe.example.com"
    ref = parse_pull_ref(f"{ghe}/octo/app/pull/1", f"{ghe}/api/v3", allow)
    assert ref == PullRef("octo/app", 1)
    # And through the command: one line, exit 2, nothing sent anywhere.
    token = "ghp_" + "x" * 8
    for args, env in (
        (["--pr", "octo/app#1"], {"GITHUB_API_URL": f"{ghe}/api/v3"}),
        (["--pr", "http://github.com/octo/app/pull/1"], {}),
    ):
        done = run_cli(["review", *args], tmp_path, {"GITHUB_TOKEN": token, **env})
        assert done.returncode == 2, done.stderr
        assert done.stderr.count("\n") == 1 and "GITNEURAL_ALLOW_INSECURE_GITHUB=1" in done.stderr

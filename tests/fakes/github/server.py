"""A fake GitHub (REST API + git smart HTTP) on a real socket, for PyGithub's ``base_url``.

    with FakeGitHub(tmp_path) as gh:
        gh.create_repo("octo/app", installation_id=1, files={"a.py": "x = 1\\n"})
        gh.push("octo/app", "feature", {"a.py": "x = 2\\n"})
        number = gh.create_pull("octo/app", head="feature")
        creds = AppCredentials(gh.app_id, gh.private_key_pem, gh.api_url)
        ...
        assert gh.forbidden_requests() == []

The API lives under ``/api/v3`` (GitHub Enterprise Server's layout), git under
``/{owner}/{repo}.git``, both on one host:port. Every request is logged
(:meth:`FakeGitHub.requests`); faults are injected per route (:meth:`FakeGitHub.fail`).

Run ``python -m tests.fakes.github --state-dir D [--port N]`` to serve it from its own
process: it writes ``D/fakegithub.json`` (URLs, app id, key path) once listening, and
:class:`FakeGitHubClient` drives it over ``POST /_fake/rpc``.
"""

from __future__ import annotations

import argparse
import functools
import json
import signal
import threading
import time
from pathlib import Path
from types import TracebackType

import pygit2
from werkzeug.serving import BaseWSGIServer, WSGIRequestHandler, make_server

from tests.fakes.github.app import create_app, helper_context, public
from tests.fakes.github.faults import FaultsAndRecords
from tests.fakes.github.graphql import github_schema
from tests.fakes.github.people import PeopleHelpers
from tests.fakes.github.repos import FileMap, RepoHelpers
from tests.fakes.github.rpc import RPC_METHODS, FakeGitHubClient, add_control
from tests.fakes.github.shapes import Json
from tests.fakes.github.store import Installation, Repo, Store
from tests.fakes.github.users import ACTIONS_LOGIN
from tests.fakes.keys import new_rsa_pem

__all__ = ["FakeGitHub", "FakeGitHubClient"]


class _QuietHandler(WSGIRequestHandler):
    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        pass


@functools.cache
def _new_private_key() -> str:
    # One key per process: RSA generation costs a noticeable slice of a test.
    return new_rsa_pem()


class FakeGitHub(RepoHelpers, PeopleHelpers, FaultsAndRecords):
    RPC_METHODS = RPC_METHODS

    def __init__(
        self,
        root: Path,
        *,
        app_id: int = 4242,
        app_slug: str = "gitneural",
        host: str = "127.0.0.1",
        port: int = 0,
        api_prefix: str = "/api/v3",
        token_lifetime: float = 3600.0,
    ) -> None:
        root.mkdir(parents=True, exist_ok=True)
        (root / "repos").mkdir(exist_ok=True)
        self.store = Store(
            root, app_id=app_id, app_slug=app_slug, private_key_pem=_new_private_key()
        )
        self.store.token_lifetime = token_lifetime
        self._host, self._port, self._prefix = host, port, api_prefix
        self._server: BaseWSGIServer | None = None
        self._thread: threading.Thread | None = None
        self._commit_clock = int(time.time())

    # -- lifecycle ----------------------------------------------------------------------

    def start(self) -> FakeGitHub:
        # GitHub's schema is built once per process: 1.5 s of CPU quiet, and a CI run saw
        # 6.7 s on a loaded machine inside the first GraphQL request, which ate a worker's
        # whole 8 s time limit in a test. Built here, before anything is timed.
        github_schema()
        app = create_app(self.store, self._prefix)
        add_control(app, self)
        self._server = make_server(
            self._host, self._port, app, threaded=True, request_handler=_QuietHandler
        )
        host, port = self._host, self._server.server_port
        self.store.web_url = f"http://{host}:{port}"
        self.store.api_url = f"http://{host}:{port}{self._prefix}"
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=10)
        self._server = self._thread = None

    def __enter__(self) -> FakeGitHub:
        return self.start()

    def __exit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    # -- identity -----------------------------------------------------------------------

    @property
    def api_url(self) -> str:
        return self.store.api_url

    @property
    def web_url(self) -> str:
        return self.store.web_url

    @property
    def app_id(self) -> int:
        return self.store.app_id

    @property
    def private_key_pem(self) -> str:
        return self.store.private_key_pem

    @property
    def bot_login(self) -> str:
        """The login GitNeural's reviews and comments appear under (``<slug>[bot]``)."""
        return self.store.bot_login

    @property
    def token_lifetime(self) -> float:
        return self.store.token_lifetime

    @token_lifetime.setter
    def token_lifetime(self, seconds: float) -> None:
        self.store.token_lifetime = seconds

    def set_token_lifetime(self, seconds: float) -> None:
        self.store.token_lifetime = seconds

    @property
    def webhook_secret(self) -> str | None:
        """The secret the manifest flow gave the App (None before a registration)."""
        return self.store.webhook_secret

    def registered_manifests(self) -> list[Json]:
        """The manifests registered through the manifest flow, in order."""
        with self.store.lock:
            return [dict(m) for m in self.store.registered_manifests]

    def set_webhook_secret(self, secret: str | None) -> None:
        """What ``GET /app/hook/config`` says of the App's secret ("": it has none)."""
        with self.store.lock:
            self.store.webhook_secret = secret

    def info(self) -> Json:
        return {
            "api_url": self.api_url,
            "web_url": self.web_url,
            "app_id": self.app_id,
            "bot_login": self.bot_login,
            "private_key_pem": self.private_key_pem,
        }

    def env(self) -> dict[str, str]:
        """The environment GitNeural's App reads its credentials from."""
        return {
            "GITHUB_APP_ID": str(self.app_id),
            "GITHUB_PRIVATE_KEY": self.private_key_pem,
            "GITHUB_API_URL": self.api_url,
        }

    # -- repositories and pull requests -------------------------------------------------

    def add_installation(self, installation_id: int, account: str = "octo-org") -> None:
        with self.store.lock:
            self.store.installations.setdefault(
                installation_id, Installation(installation_id, account)
            )

    def create_repo(
        self,
        full_name: str,
        *,
        installation_id: int,
        files: FileMap | None = None,
        default_branch: str = "main",
        private: bool = True,
    ) -> Json:
        owner, _, name = full_name.partition("/")
        assert owner and name and "/" not in name, full_name
        self.add_installation(installation_id, owner)
        path = self.store.root / "repos" / owner / f"{name}.git"
        pygit2.init_repository(str(path), bare=True, initial_head=default_branch)
        s = self.store
        repo = Repo(
            full_name, s.next_id(), path, installation_id, default_branch, private, time.time()
        )
        with s.lock:
            s.repos[full_name] = repo
        self.push(full_name, default_branch, files or {"README.md": "# project\n"}, "initial")
        return s.repo_json(repo)

    def set_clone_url(self, full_name: str, url: str | None) -> None:
        """Make the API report ``url`` as the repository's ``clone_url`` (None: the real one)."""
        with self.store.lock:
            self.store.repo(full_name).reported_clone_url = url

    def set_permission(self, full_name: str, user: str, permission: str) -> None:
        with self.store.lock:
            self.store.repo(full_name).permissions[user] = permission

    def add_issue_comment(
        self,
        full_name: str,
        number: int,
        body: str,
        *,
        user: str = "alice",
        association: str = "COLLABORATOR",
    ) -> Json:
        """A comment written by someone else (a human asking ``/review``)."""
        from tests.fakes.github.rest import _issue_comment

        repo = self.store.repo(full_name)
        with helper_context(self.store):
            comment = _issue_comment(repo, number, body, user, association)
        with self.store.lock:
            self.store.issue_comments[comment["id"]] = comment
        return public(comment)

    def add_review(self, full_name: str, number: int, body: str, *, user: str = "alice") -> Json:
        """A plain review written by someone else, without inline comments."""
        from tests.fakes.github.reviews import review_json

        repo = self.store.repo(full_name)
        pull = self.store.pull(full_name, number)
        with helper_context(self.store):
            review = review_json(repo, pull, body, "COMMENT", self.store.head_sha(repo, pull))
        review["user"] = self.store.user(user)
        with self.store.lock:
            self.store.reviews[review["id"]] = review
        return public(review)

    # -- tokens and rate limits ---------------------------------------------------------

    def mint_token(self, installation_id: int) -> str:
        return self.store.mint_token(installation_id, None).value

    def actions_token(self, full_name: str) -> str:
        """A workflow's ``GITHUB_TOKEN`` for ``full_name``: a plain installation token of
        GitHub Actions' App (no JWT to trade); what it posts is by ``github-actions[bot]``."""
        return self.store.plain_token(full_name, "actions", ACTIONS_LOGIN).value

    def user_token(self, full_name: str, login: str = "alice") -> str:
        """A person's token (what ``gh auth token`` prints) that can see ``full_name``."""
        return self.store.plain_token(full_name, "user", login).value

    def expire_tokens(self, installation_id: int | None = None) -> None:
        """Make the installation tokens minted so far expire now (a token dying mid-task)."""
        with self.store.lock:
            for token in self.store.tokens.values():
                if installation_id in (None, token.installation_id):
                    token.expires_at = time.time() - 1

    def exhaust_rate_limit(self, installation_id: int, reset_in: float = 60.0) -> None:
        """Every API request of the installation gets 403 until ``reset_in`` seconds pass."""
        with self.store.lock:
            inst = self.store.installations[installation_id]
            inst.remaining, inst.reset_at = 0, time.time() + reset_in

    def pull(self, full_name: str, number: int) -> Json:
        """The PR as the API shows it (for building webhook payloads)."""
        with helper_context(self.store):
            s = self.store
            return s.pull_json(s.repo(full_name), s.pull(full_name, number))

    def repo_json(self, full_name: str) -> Json:
        return self.store.repo_json(self.store.repo(full_name))

    def head_sha(self, full_name: str, number: int) -> str:
        return self.store.head_sha(self.store.repo(full_name), self.store.pull(full_name, number))

    def branch_sha(self, full_name: str, branch: str) -> str | None:
        return self.store.ref_sha(self.store.repo(full_name), f"refs/heads/{branch}")

    def clone_url(self, full_name: str) -> str:
        return self.store.clone_url(self.store.repo(full_name))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Serve a fake GitHub until SIGTERM.")
    parser.add_argument("--state-dir", type=Path, required=True)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--app-id", type=int, default=4242)
    parser.add_argument("--token-lifetime", type=float, default=3600.0)
    args = parser.parse_args(argv)
    gh = FakeGitHub(
        args.state_dir,
        app_id=args.app_id,
        host=args.host,
        port=args.port,
        token_lifetime=args.token_lifetime,
    )
    gh.start()
    key_path = args.state_dir / "app.pem"
    key_path.write_text(gh.private_key_pem)
    key_path.chmod(0o600)
    info = {k: v for k, v in gh.info().items() if k != "private_key_pem"}
    tmp = args.state_dir / "fakegithub.json.tmp"
    tmp.write_text(json.dumps({**info, "private_key_path": str(key_path)}))
    tmp.replace(args.state_dir / "fakegithub.json")  # readers never see half a file
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    stop.wait()
    gh.stop()
    return 0

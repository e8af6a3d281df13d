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

Run ``python tests/fakegithub.py --state-dir D [--port N]`` to serve it from its own
process: it writes ``D/fakegithub.json`` (URLs, app id, key path) once listening, and
:class:`FakeGitHubClient` drives it over ``POST /_fake/rpc``.
"""

from __future__ import annotations

import argparse
import functools
import json
import signal
import sys
import threading
import time
import urllib.request
from collections.abc import Callable, Mapping
from pathlib import Path
from types import TracebackType
from typing import Any

import pygit2
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from fakegithub_app import create_app, public
from fakegithub_store import (
    Fault,
    Installation,
    Json,
    Pull,
    Repo,
    RequestRecord,
    Store,
    Trigger,
)
from flask import Flask, Response, request
from werkzeug.serving import BaseWSGIServer, WSGIRequestHandler, make_server

FileMap = Mapping[str, str | bytes | None]


class _QuietHandler(WSGIRequestHandler):
    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        pass


@functools.cache
def _new_private_key() -> str:
    # One key per process: RSA generation costs a noticeable slice of a test.
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.TraditionalOpenSSL,  # "BEGIN RSA PRIVATE KEY", as GitHub's
        serialization.NoEncryption(),
    ).decode()


class FakeGitHub:
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
        app = create_app(self.store, self._prefix)
        self._add_control(app)
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

    def _commit(self, git: pygit2.Repository, parent: str | None, files: FileMap, msg: str) -> str:
        index = pygit2.Index()
        parents = []
        if parent is not None:
            commit = git[parent].peel(pygit2.Commit)
            index.read_tree(commit.tree)
            parents = [commit.id]
        for path, content in files.items():
            if content is None:
                index.remove(path)
                continue
            data = content.encode() if isinstance(content, str) else content
            index.add(pygit2.IndexEntry(path, git.create_blob(data), pygit2.enums.FileMode.BLOB))
        self._commit_clock += 1
        sig = pygit2.Signature("Dev Eloper", "dev@example.com", self._commit_clock, 0)
        return str(git.create_commit(None, sig, sig, msg, index.write_tree(git), parents))

    def push(self, full_name: str, branch: str, files: FileMap, message: str = "change") -> str:
        """Commit ``files`` (None deletes) on top of ``branch`` (created from the default
        branch if new); open PRs from that branch get the new head (``synchronize``)."""
        repo = self.store.repo(full_name)
        git = repo.git()
        parent = self.store.ref_sha(repo, f"refs/heads/{branch}")
        if parent is None:
            parent = self.store.ref_sha(repo, f"refs/heads/{repo.default_branch}")
        sha = self._commit(git, parent, files, message)
        self._move_branch(repo, branch, sha)
        return sha

    def force_push(
        self,
        full_name: str,
        branch: str,
        *,
        sha: str | None = None,
        files: FileMap | None = None,
        onto: str | None = None,
        message: str = "rewritten",
    ) -> str:
        """Rewrite ``branch``: move it to ``sha``, or to a new commit of ``files`` on
        ``onto`` (default: the default branch), dropping its previous commits."""
        repo = self.store.repo(full_name)
        if sha is None:
            base = onto or self.store.ref_sha(repo, f"refs/heads/{repo.default_branch}")
            sha = self._commit(repo.git(), base, files or {}, message)
        self._move_branch(repo, branch, sha)
        return sha

    def delete_branch(self, full_name: str, branch: str) -> None:
        self.store.repo(full_name).git().references.delete(f"refs/heads/{branch}")

    def _move_branch(self, repo: Repo, branch: str, sha: str) -> None:
        git = repo.git()
        git.references.create(f"refs/heads/{branch}", sha, force=True)
        with self.store.lock:
            for pull in repo.pulls.values():
                if pull.head_ref == branch and pull.state == "open":
                    git.references.create(f"refs/pull/{pull.number}/head", sha, force=True)
                    pull.updated_at = time.time()

    def create_pull(
        self,
        full_name: str,
        *,
        head: str,
        base: str | None = None,
        title: str = "A change",
        body: str = "",
        draft: bool = False,
        user: str = "octocat",
    ) -> int:
        s = self.store
        repo = s.repo(full_name)
        sha = s.ref_sha(repo, f"refs/heads/{head}")
        assert sha is not None, f"no branch {head} in {full_name}"
        with s.lock:
            number = repo.next_number
            repo.next_number += 1
            pull = Pull(
                number,
                s.next_id(),
                head,
                base or repo.default_branch,
                title,
                body,
                user,
                draft,
                time.time(),
            )
            repo.git().references.create(f"refs/pull/{number}/head", sha, force=True)
            repo.pulls[number] = pull
        return number

    def _set_pull(self, full_name: str, number: int, **changes: Any) -> None:
        pull = self.store.pull(full_name, number)
        with self.store.lock:
            for key, value in changes.items():
                setattr(pull, key, value)
            pull.updated_at = time.time()

    def close_pull(self, full_name: str, number: int) -> None:
        self._set_pull(full_name, number, state="closed", closed_at=time.time())

    def reopen_pull(self, full_name: str, number: int) -> None:
        self._set_pull(full_name, number, state="open", closed_at=None)

    def set_draft(self, full_name: str, number: int, draft: bool) -> None:
        self._set_pull(full_name, number, draft=draft)

    def edit_pull(
        self, full_name: str, number: int, *, title: str | None = None, body: str | None = None
    ) -> None:
        changes = {k: v for k, v in (("title", title), ("body", body)) if v is not None}
        self._set_pull(full_name, number, **changes)

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
        from fakegithub_rest import _issue_comment

        repo = self.store.repo(full_name)
        with _app_context(self):
            comment = _issue_comment(repo, number, body, user, association)
        with self.store.lock:
            self.store.issue_comments[comment["id"]] = comment
        return public(comment)

    def add_review(self, full_name: str, number: int, body: str, *, user: str = "alice") -> Json:
        """A plain review written by someone else, without inline comments."""
        from fakegithub_pulls import review_json

        repo = self.store.repo(full_name)
        pull = self.store.pull(full_name, number)
        with _app_context(self):
            review = review_json(repo, pull, body, "COMMENT", self.store.head_sha(repo, pull))
        review["user"] = self.store.user(user)
        with self.store.lock:
            self.store.reviews[review["id"]] = review
        return public(review)

    # -- tokens and rate limits ---------------------------------------------------------

    def mint_token(self, installation_id: int) -> str:
        return self.store.mint_token(installation_id, None).value

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

    # -- faults -------------------------------------------------------------------------

    def fail(
        self,
        method: str,
        path: str,
        *,
        status: int = 502,
        times: int = 1,
        headers: Mapping[str, str] | None = None,
        body: Any = None,
        apply: bool = False,
        delay: float = 0.0,
    ) -> None:
        """Answer the next ``times`` requests to ``method path`` with ``status``.

        ``path`` is relative to the API root (``/repos/o/r/pulls/1/reviews``) or a git path
        (``/o/r.git/git-upload-pack``); ``*`` makes it a glob, method ``*`` any method.
        ``body``: a dict (JSON), a str (HTML) or None (GitHub's default JSON). With
        ``apply=True`` the request is carried out first, then answered with the fault, so a
        client that retries a POST posts twice.
        """
        fault = Fault(method.upper(), path, status, dict(headers or {}), body, times, apply, delay)
        with self.store.lock:
            self.store.faults.append(fault)

    def fail_secondary_rate_limit(
        self, method: str, path: str, *, retry_after: int = 1, times: int = 1, status: int = 403
    ) -> None:
        self.fail(
            method,
            path,
            status=status,
            times=times,
            headers={"retry-after": str(retry_after)},
            body={
                "message": "You have exceeded a secondary rate limit. Please wait a few "
                "minutes before you try again.",
                "documentation_url": "https://docs.github.com/rest/overview/rate-limits",
            },
        )

    def fail_primary_rate_limit(
        self, method: str, path: str, *, reset_in: float = 1.0, times: int = 1
    ) -> None:
        self.fail(
            method,
            path,
            status=403,
            times=times,
            headers={
                "x-ratelimit-remaining": "0",
                "x-ratelimit-reset": str(int(time.time() + reset_in)),
            },
            body={
                "message": "API rate limit exceeded for installation ID 1.",
                "documentation_url": "https://docs.github.com/rest/overview/rate-limits",
            },
        )

    def clear_faults(self) -> None:
        with self.store.lock:
            self.store.faults.clear()
            self.store.triggers.clear()

    def when(
        self,
        method: str,
        path: str,
        action: str,
        *args: Any,
        times: int = 1,
        **kwargs: Any,
    ) -> None:
        """After a request to ``method path`` succeeds, call the helper ``action`` — e.g.
        ``gh.when("POST", "/repos/o/r/check-runs", "close_pull", "o/r", 1)`` closes the PR
        while its review runs. ``path`` may be a glob; works over RPC too."""
        if action not in self.RPC_METHODS:
            raise ValueError(f"no helper named {action!r}")
        helper = getattr(self, action)
        trigger = Trigger(method.upper(), path, times, lambda: helper(*args, **kwargs))
        with self.store.lock:
            self.store.triggers.append(trigger)

    # -- what happened ------------------------------------------------------------------

    def requests(
        self, method: str | None = None, path: str | None = None, kind: str | None = None
    ) -> list[RequestRecord]:
        """Logged requests, oldest first; ``path`` may be a glob (``/repos/o/r/pulls/*``)."""
        return self.store.filtered_log(method, path, kind)

    def forbidden_requests(self) -> list[RequestRecord]:
        """Requests that wrote contents, refs or merges, pushed, edited or approved."""
        return [r for r in self.store.filtered_log() if r.forbidden is not None]

    def clear_requests(self) -> None:
        with self.store.lock:
            self.store.log.clear()

    def _select(self, objects: dict[int, Json], **where: Any) -> list[Json]:
        with self.store.lock:
            items = list(objects.values())
        return [o for o in items if all(o.get(k) == v for k, v in where.items())]

    def reviews(self, full_name: str, number: int) -> list[Json]:
        """Stored reviews of the PR, each with its inline ``comments`` and ``event``."""
        out = []
        for r in self._select(self.store.reviews, _repo=full_name, _pull=number):
            comments = self._select(self.store.review_comments, pull_request_review_id=r["id"])
            out.append(
                {**public(r), "event": r["_event"], "comments": [public(c) for c in comments]}
            )
        return out

    def review_comments(self, full_name: str, number: int) -> list[Json]:
        found = self._select(self.store.review_comments, _repo=full_name, _pull=number)
        return [public(c) for c in found]

    def issue_comments(self, full_name: str, number: int) -> list[Json]:
        found = self._select(self.store.issue_comments, _repo=full_name, _issue=number)
        return [public(c) for c in found]

    def reactions(self, full_name: str, comment_id: int) -> list[Json]:
        found = self._select(self.store.reactions, _target=f"issue_comment:{comment_id}")
        return [public(r) for r in found if r["_repo"] == full_name]

    def check_runs(self, full_name: str, head_sha: str | None = None) -> list[Json]:
        """Check runs with all their ``annotations`` (accumulated over updates)."""
        where = {"_repo": full_name} | ({"head_sha": head_sha} if head_sha else {})
        return [
            {**public(r), "annotations": list(r["_annotations"])}
            for r in self._select(self.store.check_runs, **where)
        ]

    def pull(self, full_name: str, number: int) -> Json:
        """The PR as the API shows it (for building webhook payloads)."""
        with _app_context(self):
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

    # -- control over HTTP, for a fake in another process --------------------------------

    RPC_METHODS = frozenset(
        {
            "info", "env", "add_installation", "create_repo", "push", "force_push", "delete_branch",
            "create_pull", "close_pull", "reopen_pull", "set_draft", "edit_pull",
            "set_permission", "add_issue_comment", "add_review", "mint_token",
            "expire_tokens", "exhaust_rate_limit", "set_token_lifetime", "fail",
            "fail_secondary_rate_limit", "fail_primary_rate_limit", "clear_faults", "when",
            "requests", "forbidden_requests", "clear_requests", "reviews", "review_comments",
            "issue_comments", "reactions", "check_runs", "pull", "repo_json", "head_sha",
            "branch_sha", "clone_url",
        }
    )  # fmt: skip

    def _add_control(self, app: Flask) -> None:
        def rpc() -> Response:
            call = request.get_json(force=True)
            name = call.get("method")
            if name not in self.RPC_METHODS:
                return Response(json.dumps({"error": f"no RPC method {name!r}"}), status=400)
            try:
                result = getattr(self, name)(*call.get("args", []), **call.get("kwargs", {}))
            except (KeyError, ValueError, TypeError, AssertionError) as exc:
                return Response(json.dumps({"error": f"{type(exc).__name__}: {exc}"}), status=400)
            if isinstance(result, list):
                result = [r.to_json() if isinstance(r, RequestRecord) else r for r in result]
            return Response(json.dumps({"result": result}), mimetype="application/json")

        app.add_url_rule("/_fake/rpc", "fake_rpc", rpc, methods=["POST"])


class _app_context:
    """Run JSON builders that read ``flask.current_app`` outside a request."""

    def __init__(self, gh: FakeGitHub) -> None:
        app = Flask("fakegithub-helpers")
        app.config["STORE"] = gh.store
        self._ctx = app.app_context()

    def __enter__(self) -> None:
        self._ctx.push()

    def __exit__(self, *exc: object) -> None:
        self._ctx.pop()


class FakeGitHubClient:
    """Drives a fake served by ``python tests/fakegithub.py`` from another process: every
    helper of :class:`FakeGitHub` is a method here with the same arguments."""

    def __init__(self, web_url: str) -> None:
        self.web_url = web_url.rstrip("/")
        info = self._call("info")
        self.api_url: str = info["api_url"]
        self.app_id: int = info["app_id"]
        self.bot_login: str = info["bot_login"]
        self.private_key_pem: str = info["private_key_pem"]

    @classmethod
    def from_state_dir(cls, state_dir: Path) -> FakeGitHubClient:
        return cls(json.loads((state_dir / "fakegithub.json").read_text())["web_url"])

    def _call(self, method: str, *args: Any, **kwargs: Any) -> Any:
        data = json.dumps({"method": method, "args": args, "kwargs": kwargs}).encode()
        req = urllib.request.Request(
            f"{self.web_url}/_fake/rpc", data=data, headers={"Content-Type": "application/json"}
        )
        try:
            with urllib.request.urlopen(req, timeout=30) as resp:
                result = json.loads(resp.read())["result"]
        except urllib.error.HTTPError as exc:
            raise RuntimeError(json.loads(exc.read()).get("error", str(exc))) from None
        if method in ("requests", "forbidden_requests"):
            return [RequestRecord(**r) for r in result]
        return result

    def __getattr__(self, name: str) -> Callable[..., Any]:
        if name not in FakeGitHub.RPC_METHODS:
            raise AttributeError(name)
        return lambda *args, **kwargs: self._call(name, *args, **kwargs)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Serve a fake GitHub until SIGTERM.")
    parser.add_argument("--state-dir", type=Path, required=True)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--app-id", type=int, default=4242)
    parser.add_argument("--token-lifetime", type=float, default=3600.0)
    args = parser.parse_args(argv)
    gh = FakeGitHub(
        args.state_dir, app_id=args.app_id, host=args.host, port=args.port,
        token_lifetime=args.token_lifetime,
    )  # fmt: skip
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


if __name__ == "__main__":
    sys.exit(main())

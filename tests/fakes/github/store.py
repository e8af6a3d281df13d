"""State of the fake GitHub: installations, tokens, repositories, pull requests, and the
objects GitNeural posts (reviews, comments, check runs, reactions), plus the request log
and the fault queues. Everything is guarded by one lock because werkzeug serves requests
on threads while the test thread calls helpers.

Posted objects are stored in the JSON shape GitHub answers with (``shapes``),
so the routes only filter and paginate them; keys starting with ``_`` are the fake's own.
"""

from __future__ import annotations

import fnmatch
import itertools
import secrets
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import pygit2

from tests.fakes.github.shapes import Json, Shapes

DOCS = "https://docs.github.com/rest"
RATE_LIMIT = 5000


@dataclass
class Token:
    value: str
    installation_id: int
    expires_at: float
    #: Repositories the token was narrowed to when minted (None: all of the installation's).
    repos: frozenset[str] | None = None
    #: ``app``: minted by GitNeural's App with its JWT; ``actions``: a workflow's
    #: ``GITHUB_TOKEN`` (GitHub Actions' own App); ``user``: a person's token (``gh auth
    #: token``), which cannot create check runs.
    kind: str = "app"
    #: Who what the token posts appears under (None: the App's bot, ``<slug>[bot]``).
    login: str | None = None


@dataclass
class Installation:
    id: int
    account: str
    #: Primary rate limit bucket of this installation.
    remaining: int = RATE_LIMIT
    reset_at: float = field(default_factory=lambda: time.time() + 3600)


@dataclass
class Pull:
    number: int
    id: int
    head_ref: str
    base_ref: str
    title: str
    body: str
    user: str
    draft: bool
    created_at: float
    state: str = "open"
    updated_at: float = 0.0
    closed_at: float | None = None
    labels: list[str] = field(default_factory=list)


@dataclass
class Issue:
    number: int
    id: int
    title: str
    body: str
    user: str
    state: str = "open"


@dataclass
class Repo:
    full_name: str
    id: int
    path: Path
    installation_id: int
    default_branch: str
    private: bool
    created_at: float
    pulls: dict[int, Pull] = field(default_factory=dict)
    #: Issues share the pull requests' numbers, as on GitHub.
    issues: dict[int, Issue] = field(default_factory=dict)
    #: Issues transferred away: number → (repository, number there); GitHub answers 301.
    moved: dict[int, tuple[str, int]] = field(default_factory=dict)
    #: A pull request's number -> the issues linked to it by hand (GitHub's sidebar).
    linked_issues: dict[int, list[int]] = field(default_factory=dict)
    next_number: int = 1
    #: login -> "admin" | "write" | "read" | "none" for the collaborator permission API.
    permissions: dict[str, str] = field(default_factory=dict)
    #: The ``clone_url`` the API reports instead of the fake's own (a hostile or broken
    #: GitHub pointing git elsewhere); None: the fake's git URL.
    reported_clone_url: str | None = None

    @property
    def owner(self) -> str:
        return self.full_name.split("/", 1)[0]

    @property
    def name(self) -> str:
        return self.full_name.split("/", 1)[1]

    def git(self) -> pygit2.Repository:
        return pygit2.Repository(str(self.path))


@dataclass
class Fault:
    method: str
    path: str
    status: int
    headers: dict[str, str]
    body: Any
    times: int
    #: Run the real handler first (the write happens), then answer with the fault.
    apply: bool = False
    delay: float = 0.0

    def matches(self, method: str, path: str) -> bool:
        return route_matches(self.method, self.path, method, path)


@dataclass
class Trigger:
    """Run ``action`` (a helper such as close_pull) once a matching request is handled."""

    method: str
    path: str
    times: int
    action: Callable[[], object]


def route_matches(want_method: str, want_path: str, method: str, path: str) -> bool:
    if want_method not in ("*", method):
        return False
    return fnmatch.fnmatchcase(path, want_path) if "*" in want_path else path == want_path


@dataclass
class RequestRecord:
    """One request as the fake saw it. ``headers`` never holds Authorization."""

    method: str
    #: API path without the API prefix (``/repos/o/r/pulls/1``), or the raw path for git.
    path: str
    kind: str  # "api" | "git" | "web" | "control"
    query: dict[str, str]
    json: Any
    headers: dict[str, str]
    #: "app" (JWT), "installation:<id>", "anonymous", or "invalid".
    auth: str = "anonymous"
    installation_id: int | None = None
    status: int = 0
    #: Why this request writes to a repository or approves, if it does.
    forbidden: str | None = None
    #: The status the fault queue answered with, if a fault was injected.
    fault: int | None = None
    applied: bool = True
    time: float = field(default_factory=time.time)
    #: When the answer was ready, and its size (to tell a full fetch from an incremental one).
    done_at: float = 0.0
    response_bytes: int = 0

    def to_json(self) -> Json:
        return asdict(self)


@dataclass
class Attachment:
    """An image pasted into a pull request (``attachments.py`` serves it)."""

    data: bytes
    content_type: str
    #: The signature its signed link carries.
    jwt: str
    repo_id: int
    #: Where ``/user-attachments/assets/ID`` redirects instead of the signed link.
    redirect_to: str | None = None


class Store(Shapes):
    def __init__(self, root: Path, *, app_id: int, app_slug: str, private_key_pem: str) -> None:
        self.root = root
        self.lock = threading.RLock()
        self.app_id = app_id
        self.app_slug = app_slug
        self.private_key_pem = private_key_pem
        self.token_lifetime = 3600.0
        self.web_url = ""
        self.api_url = ""
        self.installations: dict[int, Installation] = {}
        self.tokens: dict[str, Token] = {}
        self.repos: dict[str, Repo] = {}
        self.reviews: dict[int, Json] = {}
        self.review_comments: dict[int, Json] = {}
        self.issue_comments: dict[int, Json] = {}
        self.check_runs: dict[int, Json] = {}
        self.reactions: dict[int, Json] = {}
        #: Resolved review threads: the first comment's id -> who resolved it.
        self.resolved_threads: dict[int, str] = {}
        self.log: list[RequestRecord] = []
        self.faults: list[Fault] = []
        self.triggers: list[Trigger] = []
        self._ids = itertools.count(1001)
        self._user_ids: dict[str, int] = {}
        #: The manifest flow: codes not yet converted -> the registration they stand for;
        #: the manifests registered, in order; the App's webhook secret and hook URL.
        self.manifest_codes: dict[str, Json] = {}
        self.registered_manifests: list[Json] = []
        #: Fields the next manifest conversions answer with instead of their own: a
        #: hostile GitHub's answer (a secret holding a line break).
        self.conversion_overrides: Json = {}
        self.webhook_secret: str | None = None
        self.hook_url: str | None = None
        #: Attachments by id, and what ``/elsewhere/NAME`` (not GitHub) serves.
        self.attachments: dict[str, Attachment] = {}
        self.elsewhere: dict[str, bytes] = {}

    @property
    def bot_login(self) -> str:
        return f"{self.app_slug}[bot]"

    def next_id(self) -> int:
        with self.lock:
            return next(self._ids)

    # -- tokens -------------------------------------------------------------------------

    def mint_token(self, installation_id: int, repos: frozenset[str] | None) -> Token:
        token = Token(
            value="ghs_" + secrets.token_urlsafe(27).replace("-", "A").replace("_", "B")[:36],
            installation_id=installation_id,
            expires_at=time.time() + self.token_lifetime,
            repos=repos,
        )
        with self.lock:
            self.tokens[token.value] = token
        return token

    def plain_token(self, full_name: str, kind: str, login: str) -> Token:
        """A token handed to a workflow or a person, not minted with the App's JWT:
        it reaches ``full_name`` only, and what it posts appears under ``login``."""
        repo = self.repo(full_name)
        token = self.mint_token(repo.installation_id, frozenset({repo.name}))
        with self.lock:
            token.kind, token.login = kind, login
        return token

    def valid_token(self, value: str) -> Token | None:
        with self.lock:
            token = self.tokens.get(value)
        if token is None or token.expires_at <= time.time():
            return None
        return token

    def token_allows(self, token: Token, repo: Repo) -> bool:
        if token.installation_id != repo.installation_id:
            return False
        return token.repos is None or repo.name in token.repos

    # -- faults -------------------------------------------------------------------------

    def take_fault(self, method: str, path: str) -> Fault | None:
        with self.lock:
            for fault in self.faults:
                if fault.times > 0 and fault.matches(method, path):
                    fault.times -= 1
                    if fault.times == 0:
                        self.faults.remove(fault)
                    return fault
        return None

    def take_triggers(self, method: str, path: str) -> list[Trigger]:
        with self.lock:
            hits = [t for t in self.triggers if route_matches(t.method, t.path, method, path)]
            for trigger in hits:
                trigger.times -= 1
            self.triggers = [t for t in self.triggers if t.times > 0]
        return hits

    # -- repository lookups -------------------------------------------------------------

    def repo(self, full_name: str) -> Repo:
        with self.lock:
            try:
                return self.repos[full_name]
            except KeyError:
                raise KeyError(f"fake GitHub has no repository {full_name!r}") from None

    def pull(self, full_name: str, number: int) -> Pull:
        repo = self.repo(full_name)
        with self.lock:
            try:
                return repo.pulls[number]
            except KeyError:
                raise KeyError(f"{full_name} has no pull request #{number}") from None

    def ref_sha(self, repo: Repo, ref: str) -> str | None:
        try:
            return str(repo.git().references[ref].resolve().target)
        except KeyError:
            return None

    def head_sha(self, repo: Repo, pull: Pull) -> str:
        sha = self.ref_sha(repo, f"refs/pull/{pull.number}/head")
        assert sha is not None
        return sha

    def base_sha(self, repo: Repo, pull: Pull) -> str:
        sha = self.ref_sha(repo, f"refs/heads/{pull.base_ref}")
        assert sha is not None, f"base branch {pull.base_ref} is gone"
        return sha

    def filtered_log(
        self, method: str | None = None, path: str | None = None, kind: str | None = None
    ) -> list[RequestRecord]:
        with self.lock:
            records = list(self.log)
        return [
            r
            for r in records
            if (method is None or r.method == method.upper())
            and (kind is None or r.kind == kind)
            and (path is None or fnmatch.fnmatchcase(r.path, path))
        ]


def clean_headers(headers: Mapping[str, str]) -> dict[str, str]:
    """Request headers as logged: lower-case names, never the credentials."""
    return {
        k.lower(): v for k, v in headers.items() if k.lower() not in ("authorization", "cookie")
    }

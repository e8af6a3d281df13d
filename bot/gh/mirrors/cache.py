"""A cache of bare git mirrors of the repositories GitNeural reviews, fetched with pygit2.

The code of a pull request comes by git, not by the API: no per-file requests and no
300-file diff limit. There is one mirror per (installation, repository), so one
installation's objects and refs are never read on behalf of another; a file lock keeps
two workers from fetching into one mirror at once, and requests that wait for it together
are fetched as one (:mod:`bot.gh.mirrors.batches`). Fetches are incremental (only the
refs asked for, negotiated against what the mirror already has).

The installation token goes to libgit2 through the credentials callback only: never into
the remote URL (the remote is anonymous, nothing is written to the mirror's config), a
log line or an exception message. It is only ever sent to the GitHub the API URL names.
"""

from __future__ import annotations

import fcntl
import os
import re
import shutil
import time
import urllib.parse
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path

import pygit2

from bot.errors import GitError
from bot.gh.api.hosts import api_host_matches
from bot.gh.mirrors import lru as mirror_lru
from bot.gh.mirrors.batches import Batch, FetchBatches

_NAME = re.compile(r"[A-Za-z0-9_.-]+")
#: libgit2 has no network timeouts unless told; a hung GitHub must not hang a worker.
_CONNECT_TIMEOUT_MS = 30_000
_IO_TIMEOUT_MS = 300_000


class MirrorError(GitError):
    """A repository that cannot be fetched into the mirror cache."""

    #: Whether the same fetch may succeed later (network faults, 5xx, a busy mirror).
    transient = False


class MirrorHostError(MirrorError):
    """The clone URL is not served by the GitHub of ``GITHUB_API_URL``."""


class MirrorAuthError(MirrorError):
    """GitHub refused the token (expired or revoked): mint a new one and try once more."""


class MirrorNotFoundError(MirrorError):
    """The repository or a requested ref does not exist (or the token cannot see it)."""


class MirrorNetworkError(MirrorError):
    """GitHub could not be reached or failed (5xx, 429, timeouts)."""

    transient = True


class MirrorBusyError(MirrorError):
    """Another worker held the mirror's lock for longer than the lock timeout."""

    transient = True


class _TokenRejected(Exception):
    """Raised from the credentials callback when libgit2 asks a second time."""


class _TokenCallbacks(pygit2.RemoteCallbacks):
    def __init__(self, token: str) -> None:
        super().__init__()
        self._token = token
        self._asked = 0

    def credentials(
        self,
        url: str,
        username_from_url: str | None,
        allowed_types: pygit2.enums.CredentialType,
    ) -> pygit2.UserPass:
        # libgit2 asks again when the server refused the first answer; asking forever
        # would loop until libgit2's replay limit, so the second request means "refused".
        self._asked += 1
        if self._asked > 1:
            raise _TokenRejected
        return pygit2.UserPass("x-access-token", self._token)


def _set_network_timeouts() -> None:
    if not pygit2.settings.server_connect_timeout:
        pygit2.settings.server_connect_timeout = _CONNECT_TIMEOUT_MS
    if not pygit2.settings.server_timeout:
        pygit2.settings.server_timeout = _IO_TIMEOUT_MS


def _repository_name(clone_url: str) -> tuple[str, str, str]:
    """(host_port, owner, repo) of ``https://host[:port]/owner/repo[.git]``."""
    parts = urllib.parse.urlsplit(clone_url)
    segments = parts.path.strip("/").removesuffix(".git").split("/")
    if len(segments) != 2 or not all(_NAME.fullmatch(s) and s not in (".", "..") for s in segments):
        raise MirrorError("the clone URL is not of the form https://HOST/OWNER/REPO.git")
    host = f"{(parts.hostname or '').lower()}_{parts.port or parts.scheme}"
    return host, segments[0], segments[1]


def _full_refs(refs: Sequence[str]) -> list[str]:
    """Full ref names; a bare name is a branch (``main`` -> ``refs/heads/main``)."""
    full = [ref if ref.startswith("refs/") else f"refs/heads/{ref}" for ref in refs]
    for ref in full:
        if not pygit2.reference_is_valid_name(ref):
            raise MirrorError(f"{ref!r} is not a valid ref name")
    if not full:
        raise MirrorError("no refs to fetch: name at least the pull request's head")
    return full


def _classify(message: str) -> type[MirrorError]:
    status = re.search(r"\b(?:status code|http status)[^0-9]*(\d{3})", message)
    if status:
        code = int(status.group(1))
        if code in (401, 403):
            return MirrorAuthError
        if code == 404:
            return MirrorNotFoundError
        if code == 429 or code >= 500:
            return MirrorNetworkError
        return MirrorError
    lowered = message.lower()
    network = ("connect", "timed out", "timeout", "resolve", "reset", "early eof", "closed")
    return MirrorNetworkError if any(w in lowered for w in network) else MirrorError


class MirrorCache:
    def __init__(
        self, root: Path, *, lock_timeout_s: float = 600.0, max_bytes: int | None = None
    ) -> None:
        self.root = root
        self.lock_timeout_s = lock_timeout_s
        #: ``GITNEURAL_MIRROR_MAX_BYTES``: least recently used mirrors not in use are
        #: evicted after each fetch and each use (:mod:`bot.gh.mirrors.lru`).
        self.max_bytes = max_bytes
        #: Requests for one mirror that arrive while it is being fetched go together.
        self._batches = FetchBatches()
        _set_network_timeouts()

    @contextmanager
    def lease(self, installation_id: int, clone_url: str) -> Iterator[None]:
        """Hold the repository's mirror in use (never evicted meanwhile) for the block:
        a job takes it before it fetches and keeps it until it has posted."""
        try:
            path: Path | None = self.path_for(installation_id, clone_url)
        except (MirrorError, ValueError):
            path = None
        if path is None:
            yield  # a URL the cache cannot name is refused by fetch(), with its reason
            return
        try:
            with mirror_lru.leased(path, self.lock_timeout_s):
                yield
        finally:
            # A failed review frees its mirror too: the cap holds whenever nothing runs.
            with suppress(OSError):
                self.enforce_cap()

    def enforce_cap(self) -> int:
        """Evict down to ``max_bytes`` (mirrors not in use, least recently used first);
        the bytes the cache holds."""
        return mirror_lru.enforce_cap(self.root, self.max_bytes)

    def path_for(self, installation_id: int, clone_url: str) -> Path:
        """Where the mirror of ``clone_url`` for this installation lives."""
        host, owner, repo = _repository_name(clone_url)
        return self.root / str(int(installation_id)) / host / owner / f"{repo}.git"

    def fetch(
        self,
        *,
        installation_id: int,
        clone_url: str,
        token: str,
        api_url: str,
        refs: Sequence[str],
    ) -> pygit2.Repository:
        """Bring ``refs`` (``refs/pull/7/head``, ``main``…) of the repository up to date
        in this installation's mirror and return the mirror."""
        if not api_host_matches(api_url, clone_url):
            raise MirrorHostError(
                f"refusing to fetch from a clone URL that GITHUB_API_URL ({api_url}) does not "
                "serve: the installation token is only sent to that GitHub"
            )
        path = self.path_for(installation_id, clone_url)
        wanted = _full_refs(refs)
        name = "/".join(path.parts[-2:]).removesuffix(".git")
        path.parent.mkdir(parents=True, exist_ok=True)
        batch, leads = self._batches.join(path, wanted)
        if leads:
            self._fetch_batch(path, batch, clone_url, token, name)
        else:
            batch.done.wait()
        if batch.error is not None:
            # Each request raises its own exception: the leader's carries its traceback.
            raise type(batch.error)(str(batch.error)) from None
        if batch.heads is None:
            raise MirrorNetworkError(f"the fetch of {name} this request joined did not finish")
        missing = [ref for ref in wanted if ref not in batch.heads]
        if missing:
            raise MirrorNotFoundError(
                f"{name} has no {', '.join(missing)}: the branch or pull request is gone"
            )
        return pygit2.Repository(str(path))

    def _fetch_batch(self, path: Path, batch: Batch, clone_url: str, token: str, name: str) -> None:
        """Fetch every ref of ``batch`` under the mirror's lock (the leader's token: the
        mirror is the installation's, so is every token of the batch)."""
        try:
            with self._locked(path.with_name(path.name + ".lock")):
                wanted = self._batches.close(path, batch)
                repo = self._open(path)
                remote = repo.remotes.create_anonymous(clone_url)
                try:
                    remote.fetch([f"+{r}:{r}" for r in wanted], callbacks=_TokenCallbacks(token))
                    heads = {h.name for h in remote.list_heads(connect=False) if h.name}
                except _TokenRejected:
                    raise MirrorAuthError(
                        f"GitHub refused the installation token for {name}: mint a new one"
                    ) from None
                except pygit2.GitError as exc:
                    reason = str(exc)
                    if len(token) >= 8:  # libgit2 never echoes it; this is belt and braces
                        reason = reason.replace(token, "***")
                    raise _classify(str(exc))(f"cannot fetch {name}: {reason}") from None
                for ref in wanted:
                    # A ref GitHub no longer has (a deleted branch) must not be read stale.
                    if ref not in heads and ref in repo.references:
                        repo.references.delete(ref)
                batch.heads = heads
                self.enforce_cap()  # this mirror is locked: only others can go
        except MirrorError as exc:
            batch.error = exc
            raise
        finally:
            self._batches.close(path, batch)  # a lock never taken ends the batch too
            batch.done.set()

    @staticmethod
    def _open(path: Path) -> pygit2.Repository:
        if path.exists():
            try:
                return pygit2.Repository(str(path))
            except pygit2.GitError:
                shutil.rmtree(path)  # a mirror left half-made by a killed worker
        return pygit2.init_repository(str(path), bare=True)

    @contextmanager
    def _locked(self, lock_path: Path) -> Iterator[None]:
        fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            deadline = time.monotonic() + self.lock_timeout_s
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() >= deadline:
                        raise MirrorBusyError(
                            f"the mirror {lock_path.stem} stayed locked for "
                            f"{self.lock_timeout_s:g}s; it is retried later"
                        ) from None
                    time.sleep(0.05)
            yield
        finally:
            os.close(fd)  # closing releases the lock

"""Keeping the mirror cache under ``GITNEURAL_MIRROR_MAX_BYTES``: least recently used
mirrors go first, and never one in use.

A job holds a *lease* on its mirror while it fetches and reviews: a shared ``flock`` on
``<repo>.git.lease``, whose mtime also records the last use. Eviction takes that lock
exclusively without waiting (and the fetch lock too): a mirror whose lock it cannot get
is in use and stays. A job that comes after an eviction fetches the repository again,
so nothing fails, it only costs a full fetch. Lease files stay (they are empty): one
removed while another process waited on it would let two lock different files.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import re
import shutil
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from bot import metrics
from bot.errors import ConfigError, GitError

log = logging.getLogger("gitneural.mirror")

MAX_BYTES_ENV: Final = "GITNEURAL_MIRROR_MAX_BYTES"
_SIZE: Final = re.compile(r"(\d+)\s*([KMGT]i?B?|B)?", re.IGNORECASE)
_UNITS: Final = {"": 1, "B": 1, "K": 1024, "M": 1024**2, "G": 1024**3, "T": 1024**4}


class MirrorLeaseBusyError(GitError):
    """An eviction held the mirror for longer than the lock timeout (retried later)."""

    transient = True


def max_bytes_from_env(env: Mapping[str, str]) -> int | None:
    """``GITNEURAL_MIRROR_MAX_BYTES`` (``500M``, ``20G`` or bytes); unset or 0: no cap."""
    raw = env.get(MAX_BYTES_ENV, "").strip()
    if not raw:
        return None
    match = _SIZE.fullmatch(raw)
    if match is None:
        raise ConfigError(f"{MAX_BYTES_ENV} must be a size such as 20G, 500M or 1000000")
    unit = (match.group(2) or "").upper()[:1]
    value = int(match.group(1)) * _UNITS[unit]
    return value or None


def tree_bytes(path: Path) -> int:
    """Bytes of the files under ``path`` (0 if it is gone)."""
    total = 0
    for root, _dirs, files in os.walk(path):
        for name in files:
            with contextlib.suppress(OSError):  # removed while we walked
                total += Path(root, name).lstat().st_size
    return total


def lease_path(mirror: Path) -> Path:
    return mirror.with_name(mirror.name + ".lease")


def lock_path(mirror: Path) -> Path:
    return mirror.with_name(mirror.name + ".lock")


@contextlib.contextmanager
def leased(mirror: Path, timeout_s: float) -> Iterator[None]:
    """Hold ``mirror`` in use (shared with other jobs of the repository)."""
    mirror.parent.mkdir(parents=True, exist_ok=True)
    path = lease_path(mirror)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        deadline = time.monotonic() + timeout_s
        while True:  # waits only while an eviction of this mirror runs
            try:
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise MirrorLeaseBusyError(
                        f"the mirror {mirror.name} stayed locked for {timeout_s:g}s; "
                        "it is retried later"
                    ) from None
                time.sleep(0.05)
        os.utime(fd)
        yield
    finally:
        with contextlib.suppress(OSError):
            os.utime(fd)  # the end of a use is its last use
        os.close(fd)


@contextlib.contextmanager
def _exclusive(path: Path) -> Iterator[bool]:
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        yield True
    finally:
        os.close(fd)


@dataclass(frozen=True)
class _Mirror:
    path: Path
    size: int
    last_used: float


def _mirrors(root: Path) -> list[_Mirror]:
    """``root/<installation>/<host>/<owner>/<repo>.git``, least recently used first."""
    found = []
    for path in root.glob("*/*/*/*.git"):
        lease = lease_path(path)
        try:
            used = lease.stat().st_mtime if lease.exists() else path.stat().st_mtime
        except OSError:
            continue
        found.append(_Mirror(path, tree_bytes(path), used))
    return sorted(found, key=lambda m: m.last_used)


def enforce_cap(root: Path, max_bytes: int | None) -> int:
    """Evict mirrors not in use, least recently used first, until the cache is at most
    ``max_bytes``; returns the bytes left (and sets ``gitneural_mirror_bytes``)."""
    mirrors = _mirrors(root)
    total = sum(m.size for m in mirrors)
    evicted = 0
    for mirror in mirrors:
        if max_bytes is None or total <= max_bytes:
            break
        with (
            _exclusive(lease_path(mirror.path)) as free,
            _exclusive(lock_path(mirror.path)) as idle,
        ):
            if not (free and idle):
                continue  # in use: never evicted
            if not mirror.path.exists():
                continue  # another worker evicted it since we looked
            shutil.rmtree(mirror.path, ignore_errors=True)
        total -= mirror.size
        evicted += 1
        log.info(
            "mirror %s evicted (%d bytes; cache now %d bytes)", mirror.path.name, mirror.size, total
        )
    if evicted:
        metrics.mirror_evicted(evicted)
    metrics.set_mirror_bytes(total)
    return total

"""The hook's result cache: the same change reviewed the same way is not paid for twice.

Committing again after an unrelated failure (another hook, a typo in the message) finds
the review here and prints it at once, without importing the model client. The key is a
SHA-256 over everything that decides the review's outcome: the diff itself, the commit it
applies to (the enclosing code shown around each hunk comes from it), the trusted
instruction files, the effective review settings, model, effort, API base URL, prompt
version and GitNeural's version. The ``[hook]`` policy is not in the key: the exit code
of a cached result is derived again from the current policy.

Entries are JSON reports (``bot.render.json_report``) written atomically (a temporary
file, then ``os.replace``), so a reader never sees half an entry. Only successful reviews
are stored. The directory is bounded: past ``max_entries`` or ``max_bytes`` the least
recently used entries go (a hit refreshes an entry's mtime). The cache is an
optimisation: when it cannot be read or written the hook simply reviews again.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import logging
import os
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path

from bot import __version__
from bot.domain.change import Change
from bot.domain.diff import Diff
from bot.domain.results import ReviewResult
from bot.errors import UsageError
from bot.render.json_report import load_json, render_json
from bot.settings.environment import data_dir
from bot.settings.repository import SCOPED_INSTRUCTION_DIRS, Config
from bot.text import encode_text

log = logging.getLogger(__name__)

KEY_VERSION = "gitneural-hook-cache/1"
SUBDIR = "hook-cache"
DEFAULT_MAX_ENTRIES = 256
DEFAULT_MAX_BYTES = 32 * 1024 * 1024
_SUFFIX = ".json"
_TMP_PREFIX = ".tmp-"
#: A temporary file this old was left by a writer that died; the eviction removes it.
_STALE_TMP_S = 3600.0
_NO_EOL = "\n\\ No newline at end of file\n"


def default_directory(env: Mapping[str, str] | None = None) -> Path:
    """``$GITNEURAL_DATA_DIR/hook-cache``, else under the user's cache directory."""
    return data_dir(os.environ if env is None else env) / SUBDIR


def diff_bytes(diff: Diff) -> bytes:
    """A canonical byte form of ``diff``: equal for equal changes, whatever produced them."""
    out: list[bytes] = []
    for f in diff.files:
        head = f"{f.status}\0{f.old_path}\0{f.path}\0{f.old_mode}\0{f.new_mode}\0{f.binary}\n"
        out.append(encode_text(head))
        for hunk in f.hunks:
            out.append(encode_text(hunk.header() + "\n"))
            out.extend(encode_text(f"{ln.kind}{ln.text}{ln.eol or _NO_EOL}") for ln in hunk.lines)
    return b"".join(out)


def cache_key(
    change: Change,
    config: Config,
    *,
    model: str,
    effort: str,
    base_url: str,
    prompt_version: str,
) -> str:
    sha = hashlib.sha256()

    def part(label: str, data: bytes) -> None:
        # Length-prefixed, so no two different inputs hash the same stream.
        sha.update(f"{label}:{len(data)}:".encode())
        sha.update(data)

    settings = {
        "review": dataclasses.asdict(config.review),
        "agent": dataclasses.asdict(config.agent),
        "walkthrough": dataclasses.asdict(config.walkthrough),
    }
    part("key", KEY_VERSION.encode())
    part("gitneural", __version__.encode())
    part("prompt", prompt_version.encode())
    part("model", model.encode())
    part("effort", effort.encode())
    part("base_url", base_url.encode())
    part("config", json.dumps(settings, sort_keys=True).encode())
    part("base", (change.base_sha or "").encode())
    for name in config.review.instructions:
        blob = change.trusted.read(name) if change.trusted is not None else None
        part(f"instructions {name}", b"\xff" if blob is None else b"=" + blob)
    if config.review.scoped_instructions and change.trusted is not None:
        for folder in SCOPED_INSTRUCTION_DIRS:
            for entry in change.trusted.list_dir(folder):
                blob = change.trusted.read(f"{folder}/{entry.name}")
                part(f"scoped {folder}/{entry.name}", b"\xff" if blob is None else b"=" + blob)
    part("diff", diff_bytes(change.diff))
    return sha.hexdigest()


class ResultCache:
    def __init__(
        self,
        directory: Path,
        *,
        max_entries: int = DEFAULT_MAX_ENTRIES,
        max_bytes: int = DEFAULT_MAX_BYTES,
    ) -> None:
        self.directory = directory
        self.max_entries = max_entries
        self.max_bytes = max_bytes

    def _path(self, key: str) -> Path:
        if len(key) != 64 or not all(c in "0123456789abcdef" for c in key):
            raise ValueError("a cache key is a SHA-256 hex digest")
        return self.directory / f"{key}{_SUFFIX}"

    def get(self, key: str) -> ReviewResult | None:
        path = self._path(key)
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        except (OSError, UnicodeDecodeError) as exc:
            log.debug("hook cache: cannot read %s: %s", path.name, exc)
            return None
        try:
            result = load_json(text)
        except UsageError:
            # A damaged entry (a disk fault, an older format): drop it and review again.
            with contextlib.suppress(OSError):
                path.unlink()
            return None
        with contextlib.suppress(OSError):
            os.utime(path)  # least recently used goes first
        return result

    def put(self, key: str, result: ReviewResult) -> None:
        path = self._path(key)
        data = render_json(result).encode("utf-8")
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=_TMP_PREFIX, suffix=_SUFFIX, dir=self.directory)
            try:
                with os.fdopen(fd, "wb") as out:
                    out.write(data)
                Path(tmp).replace(path)
            except BaseException:
                with contextlib.suppress(OSError):
                    Path(tmp).unlink()
                raise
        except OSError as exc:
            log.debug("hook cache: cannot write %s: %s", path.name, exc)
            return
        self.evict()

    def evict(self) -> None:
        """Remove the least recently used entries beyond the size bounds."""
        entries: list[tuple[float, int, Path]] = []
        now = time.time()
        try:
            with os.scandir(self.directory) as scan:
                for item in scan:
                    with contextlib.suppress(OSError):
                        st = item.stat(follow_symlinks=False)
                        if item.name.startswith(_TMP_PREFIX):
                            if now - st.st_mtime > _STALE_TMP_S:
                                Path(item.path).unlink()
                        elif item.name.endswith(_SUFFIX):
                            entries.append((st.st_mtime, st.st_size, Path(item.path)))
        except OSError:
            return
        entries.sort(key=lambda e: e[0], reverse=True)
        total = 0
        for count, (_mtime, size, path) in enumerate(entries, start=1):
            total += size
            if count > self.max_entries or total > self.max_bytes:
                with contextlib.suppress(OSError):
                    path.unlink()

    def __len__(self) -> int:
        try:
            names = [p.name for p in self.directory.iterdir()]
        except OSError:
            return 0
        return sum(1 for n in names if n.endswith(_SUFFIX) and not n.startswith(_TMP_PREFIX))

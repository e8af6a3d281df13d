"""A symbol index of one snapshot: where every name is defined and where it is used.

Built from the outline of every file a grammar reads (:func:`bot.code.outline.outline`),
skipping files over ``max_file_bytes`` and the paths no reviewer reads (lock files,
vendored and generated code: :data:`bot.config.DEFAULT_IGNORES`). Each file's entry
carries the BLAKE2 digest of its content, so an index for the next commit is **updated**
from the previous one: a file whose content did not change keeps its entry, and only the
changed files are parsed again (:attr:`SymbolIndex.parsed` counts them).

An index is saved as gzipped JSON (never pickle: the cache folder is data, and loading
it must not run code) under the commit it describes; :func:`cached_index` loads the
commit's index, or updates the newest one saved in the folder and saves the result.
"""

from __future__ import annotations

import contextlib
import fnmatch
import functools
import gzip
import hashlib
import json
import os
import re
import tempfile
import time
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from bot.code.grammars import available, language_of
from bot.code.outline import symbols
from bot.config import DEFAULT_IGNORES
from bot.domain.change import Snapshot

__all__ = [
    "Definition",
    "FileSymbols",
    "Reference",
    "SymbolIndex",
    "cached_index",
    "index_folder",
    "repository_index",
    "warm_index",
]

#: Bumped when what an entry holds changes: older saved indexes are then rebuilt.
FORMAT = 1
_COMMIT = re.compile(r"[0-9a-f]{7,64}")
_KEEP_SAVED = 3


@dataclass(frozen=True, slots=True)
class Definition:
    path: str
    name: str
    kind: str
    line: int
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class Reference:
    path: str
    name: str
    kind: str
    line: int


@dataclass(frozen=True)
class FileSymbols:
    digest: str
    #: ``(name, kind, line, start, end)`` of each definition.
    definitions: tuple[tuple[str, str, int, int, int], ...]
    #: ``(name, kind, line)`` of each reference.
    references: tuple[tuple[str, str, int], ...]


def _digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def file_symbols(path: str, data: bytes) -> FileSymbols | None:
    """One file's entry, or ``None`` when no grammar reads it here."""
    found = symbols(path, data)
    if found is None:
        return None
    units = {(u.name, u.line): u for u in found.units}
    definitions = []
    for name, kind, line in found.definitions:
        unit = units.get((name, line))
        start, end = (unit.start, unit.end) if unit is not None else (line, line)
        definitions.append((name, kind, line, start, end))
    return FileSymbols(_digest(data), tuple(definitions), tuple(found.references))


@dataclass
class SymbolIndex:
    files: dict[str, FileSymbols] = field(default_factory=dict)
    #: Files parsed to make this index (the others came unchanged from the previous one).
    parsed: int = 0
    _definitions: dict[str, list[Definition]] | None = field(default=None, repr=False)
    _references: dict[str, list[Reference]] | None = field(default=None, repr=False)

    @classmethod
    def build(
        cls,
        snapshot: Snapshot,
        *,
        previous: SymbolIndex | None = None,
        ignore: Sequence[str] = DEFAULT_IGNORES,
        max_file_bytes: int = 1_000_000,
        max_files: int = 50_000,
        deadline: float | None = None,
    ) -> SymbolIndex:
        """The index of ``snapshot``, reusing ``previous``'s entries of unchanged files.

        Raises :class:`TimeoutError` past ``deadline`` (a ``time.monotonic()`` value).
        """
        index = cls()
        old = previous.files if previous is not None else {}
        for count, path in enumerate(snapshot.walk()):
            if count >= max_files:
                break
            if deadline is not None and time.monotonic() > deadline:
                raise TimeoutError("the symbol index took longer than its time limit")
            language = language_of(path)
            if language is None or not available(language) or _ignored(path, ignore):
                continue
            size = snapshot.size(path)
            if size is None or size > max_file_bytes:
                continue
            data = snapshot.read(path)
            if data is None or b"\0" in data[:8000]:
                continue
            kept = old.get(path)
            if kept is not None and kept.digest == _digest(data):
                index.files[path] = kept
                continue
            entry = file_symbols(path, data)
            index.parsed += 1
            if entry is not None:
                index.files[path] = entry
        return index

    def with_files(self, snapshot: Snapshot, paths: Iterable[str]) -> SymbolIndex:
        """A copy with ``paths`` read again from ``snapshot`` (gone when absent there):
        a commit's index brought to the staged files the hook reviews."""
        files = dict(self.files)
        parsed = 0
        for path in paths:
            files.pop(path, None)
            language = language_of(path)
            if language is None or not available(language):
                continue
            data = snapshot.read(path)
            if data is None or b"\0" in data[:8000]:
                continue
            entry = file_symbols(path, data)
            parsed += 1
            if entry is not None:
                files[path] = entry
        return SymbolIndex(files, parsed)

    def definitions(self, name: str) -> list[Definition]:
        """Where ``name`` is defined, by path and line."""
        if self._definitions is None:
            table: dict[str, list[Definition]] = defaultdict(list)
            for path, entry in sorted(self.files.items()):
                for n, kind, line, start, end in entry.definitions:
                    table[n].append(Definition(path, n, kind, line, start, end))
            self._definitions = dict(table)
        return self._definitions.get(name, [])

    def references(self, name: str) -> list[Reference]:
        """Where ``name`` is used (called, named as a type, imported), by path and line."""
        if self._references is None:
            table: dict[str, list[Reference]] = defaultdict(list)
            for path, entry in sorted(self.files.items()):
                for n, kind, line in entry.references:
                    table[n].append(Reference(path, n, kind, line))
            self._references = dict(table)
        return self._references.get(name, [])

    def enclosing(self, path: str, line: int) -> Definition | None:
        """The smallest definition of ``path`` whose lines hold ``line``."""
        entry = self.files.get(path)
        if entry is None:
            return None
        best: Definition | None = None
        for name, kind, name_line, start, end in entry.definitions:
            if start <= line <= end and (best is None or end - start < best.end - best.start):
                best = Definition(path, name, kind, name_line, start, end)
        return best

    # -- saving ---------------------------------------------------------------------------

    def to_json(self) -> dict[str, object]:
        return {
            "format": FORMAT,
            "files": {
                path: [e.digest, [list(d) for d in e.definitions], [list(r) for r in e.references]]
                for path, e in self.files.items()
            },
        }

    @classmethod
    def from_json(cls, data: object) -> SymbolIndex | None:
        """The index saved as ``data``, or ``None`` when it is of another format."""
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            return None
        files = {}
        for path, (digest, definitions, references) in data["files"].items():
            files[str(path)] = FileSymbols(
                str(digest),
                tuple((str(n), str(k), int(ln), int(s), int(e)) for n, k, ln, s, e in definitions),
                tuple((str(n), str(k), int(ln)) for n, k, ln in references),
            )
        return cls(files)


def _ignored(path: str, ignore: Sequence[str]) -> bool:
    return _globs(tuple(ignore)).match(path) is not None


@functools.cache
def _globs(ignore: tuple[str, ...]) -> re.Pattern[str]:
    """The globs as one pattern (what :func:`fnmatch.fnmatchcase` does for each), made
    once: a repository's every path is matched against them."""
    return re.compile("|".join(fnmatch.translate(glob) for glob in ignore) or "(?!)")


def _load(path: Path) -> SymbolIndex | None:
    try:
        with gzip.open(path, "rt", encoding="utf-8") as handle:
            return SymbolIndex.from_json(json.load(handle))
    except (OSError, ValueError, TypeError, KeyError, EOFError):
        return None  # a torn or foreign file: rebuilt


def _save(index: SymbolIndex, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".index-")
    try:
        with os.fdopen(fd, "wb") as raw, gzip.open(raw, "wt", encoding="utf-8") as handle:
            json.dump(index.to_json(), handle, separators=(",", ":"))
        Path(tmp).replace(path)  # whole or not at all, for a reader in another process
    except BaseException:
        with contextlib.suppress(OSError):
            Path(tmp).unlink()
        raise


def cached_index(
    snapshot: Snapshot,
    commit: str,
    folder: Path,
    *,
    max_file_bytes: int = 1_000_000,
    max_files: int = 50_000,
    deadline: float | None = None,
) -> SymbolIndex:
    """The index of ``snapshot`` (commit ``commit``), from ``folder`` when saved there,
    else updated from the newest index saved there (or built) and saved. The folder
    keeps the last few commits' indexes."""
    if not _COMMIT.fullmatch(commit):
        raise ValueError(f"not a commit id: {commit[:80]!r}")
    target = folder / f"{commit}.json.gz"
    loaded = _load(target) if target.exists() else None
    if loaded is not None:
        return loaded
    saved = sorted(folder.glob("*.json.gz"), key=lambda p: p.stat().st_mtime, reverse=True)
    previous = next((i for i in map(_load, saved[:1]) if i is not None), None)
    index = SymbolIndex.build(
        snapshot,
        previous=previous,
        max_file_bytes=max_file_bytes,
        max_files=max_files,
        deadline=deadline,
    )
    _save(index, target)
    for stale in saved[_KEEP_SAVED - 1 :]:
        with contextlib.suppress(OSError):
            stale.unlink()
    return index


def index_folder(git_dir: str | Path) -> Path:
    """Where a repository's symbol indexes are kept: inside its git folder (the mirror's,
    or a developer's ``.git``), where git leaves unknown folders alone."""
    return Path(git_dir) / "gitneural" / "symbols"


def repository_index(
    snapshot: Snapshot, commit: str, git_dir: str | Path, *, seconds: float = 60.0
) -> SymbolIndex | None:
    """The commit's index, kept beside the repository (built or updated as needed), or
    ``None`` without the ``parsers`` extra, when the folder cannot be written, or when
    building it would take more than ``seconds`` (the review then walks the snapshot)."""
    if not available("python") and not any(available(g) for g in ("go", "java", "c")):
        return None
    try:
        return cached_index(
            snapshot, commit, index_folder(git_dir), deadline=time.monotonic() + seconds
        )
    except (OSError, ValueError, TimeoutError):
        return None


def warm_index(commit: str, git_dir: str | Path) -> SymbolIndex | None:
    """The commit's index if one is saved already; never builds (the hook's start-up)."""
    if not _COMMIT.fullmatch(commit):
        return None
    target = index_folder(git_dir) / f"{commit}.json.gz"
    return _load(target) if target.exists() else None

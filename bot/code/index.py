"""A symbol index of one snapshot: where every name is defined and where it is used.

Built from the outline of every file a grammar reads (:func:`bot.code.outline.outline`),
skipping files over ``max_file_bytes`` and the paths no reviewer reads (lock files,
vendored and generated code: :data:`bot.settings.repository.DEFAULT_IGNORES`). Each file's entry
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
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast

from bot.code.grammars import available, language_of
from bot.code.outline import symbols
from bot.domain.change import Snapshot
from bot.errors import UnparsableError
from bot.settings.repository import DEFAULT_IGNORES

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
FORMAT = 2
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


_Definitions = tuple[tuple[str, str, int, int, int], ...]
_References = tuple[tuple[str, str, int], ...]


@dataclass(frozen=True)
class FileSymbols:
    digest: str
    #: ``(name, kind, line, start, end)`` of each definition.
    definitions: _Definitions
    #: ``(name, kind, line)`` of each reference.
    references: _References


def _digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def file_symbols(path: str, data: bytes) -> FileSymbols | None:
    """One file's entry, or ``None`` when no grammar reads it here or the parser will
    not (past :mod:`bot.code.limits`: the index leaves such a file out)."""
    try:
        found = symbols(path, data)
    except UnparsableError:
        return None
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
    #: Name → the paths defining it (made on first use).
    _defined_in: dict[str, list[str]] | None = field(default=None, repr=False)
    #: Name → its references, as two parallel lists: the paths and the entries' own rows
    #: (made on first use, in one pass over every file).
    _used: dict[str, tuple[list[str], list[tuple[str, str, int]]]] | None = field(
        default=None, repr=False
    )
    #: Names some file calls.
    _called: frozenset[str] | None = field(default=None, repr=False)

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
        if self._defined_in is None:
            self._defined_in = _paths_of_names(self.files)
        return [
            Definition(path, *d)
            for path in self._defined_in.get(name, ())
            for d in self.files[path].definitions
            if d[0] == name
        ]

    def references(self, name: str) -> list[Reference]:
        """Where ``name`` is used (called, named as a type, imported), by path and line.

        Served from a table of every reference by name, made once: scanning each using
        file's references on every call cost a review 130 s when 20,000 files each
        called the 96 functions of the changed one (issue 31)."""
        paths, rows = self.reference_rows(name)
        return [Reference(path, *row) for path, row in zip(paths, rows, strict=True)]

    def reference_rows(self, name: str) -> tuple[Sequence[str], Sequence[tuple[str, str, int]]]:
        """:meth:`references` as two parallel sequences, the paths and the ``(name, kind,
        line)`` rows, made of nothing new: for a name used in thousands of files."""
        return self._reference_table().get(name, ((), ()))

    def is_called(self, name: str) -> bool:
        """Whether some file calls ``name``."""
        if self._called is None:
            self._called = frozenset(
                name
                for name, (_, rows) in self._reference_table().items()
                if any(row[1] == "call" for row in rows)
            )
        return name in self._called

    def _reference_table(self) -> dict[str, tuple[list[str], list[tuple[str, str, int]]]]:
        # Two lists of what the entries hold already, not a Reference per row: a table
        # of objects cost more memory than the index itself.
        if self._used is None:
            table: dict[str, tuple[list[str], list[tuple[str, str, int]]]] = {}
            for path in sorted(self.files):
                for row in self.files[path].references:
                    found = table.get(row[0])
                    if found is None:
                        found = table[row[0]] = ([], [])
                    found[0].append(path)
                    found[1].append(row)
            self._used = table
        return self._used

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

    # An entry is saved by columns (names, kinds, lines …), not as a list per name, and
    # a column of names as one string: a review (and the hook) loads the whole index,
    # and columns are read and checked by the library (split, zip, map) rather than
    # name by name in Python; loading costs a third of what a list per name did.

    def to_json(self) -> dict[str, object]:
        return {
            "format": FORMAT,
            "files": {
                path: [e.digest, _columns(e.definitions, 5), _columns(e.references, 3)]
                for path, e in self.files.items()
            },
        }

    @classmethod
    def from_json(cls, data: object) -> SymbolIndex | None:
        """The index saved as ``data``, or ``None`` when it is of another format.

        Raises :class:`ValueError` when an entry is not what :meth:`to_json` writes."""
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            return None
        files = {}
        for path, (digest, definitions, references) in data["files"].items():
            if not isinstance(path, str) or not isinstance(digest, str):
                raise ValueError("a path or digest that is not a string")
            # The types of every column were checked by _rows.
            files[path] = FileSymbols(
                digest,
                cast(_Definitions, _rows(definitions, (str, str, int, int, int))),
                cast(_References, _rows(references, (str, str, int))),
            )
        return cls(files)


#: Joins a column of strings into one JSON string (JSON reads one long string much
#: faster than many short ones); a column holding it stays a list.
_SEPARATOR = "\x1f"


def _columns(rows: Sequence[tuple[str | int, ...]], width: int) -> list[str | list[str | int]]:
    columns: list[str | list[str | int]] = []
    for column in zip(*rows, strict=True) if rows else [()] * width:
        texts = [v for v in column if isinstance(v, str)]
        joined = len(texts) == len(column) > 0 and not any(_SEPARATOR in v for v in texts)
        columns.append(_SEPARATOR.join(texts) if joined else list(column))
    return columns


def _rows(columns: object, types: tuple[type, ...]) -> tuple[tuple[str | int, ...], ...]:
    """The rows saved as ``columns``, each column checked to hold ``types``' values only.

    Strings are interned: a few kinds and the names a repository uses repeat across
    millions of rows (20,000 files calling the same 96 functions), and one object per
    row cost a loaded index twice the memory."""
    if not isinstance(columns, list) or len(columns) != len(types):
        raise ValueError("not the columns of an entry")
    values: list[list[str] | list[object]] = []
    for column, kind in zip(columns, types, strict=True):
        if isinstance(column, str) and kind is str:
            values.append(list(map(sys.intern, column.split(_SEPARATOR))))
        elif isinstance(column, list) and set(map(type, column)) <= {kind}:
            values.append(column)
        else:
            raise ValueError("a column with a value of another type")
    return tuple(zip(*values, strict=True))


def _paths_of_names(files: dict[str, FileSymbols]) -> dict[str, list[str]]:
    """Name → the paths (sorted) defining it. Kept instead of every definition as an
    object: a review asks of a few dozen names, and the objects of all of them cost
    more than the review's whole preparation."""
    table: dict[str, list[str]] = defaultdict(list)
    for path in sorted(files):
        for name in dict.fromkeys(row[0] for row in files[path].definitions):
            table[name].append(path)
    return dict(table)


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

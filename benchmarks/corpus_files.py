"""The benchmarks' corpus: the Python files of the running interpreter's standard library.

Synthetic text would flatter the core (short lines, no real functions to grow hunks to),
and the code installed in a virtual environment depends on what was installed. The
standard library is real code that every interpreter of the same version and build
carries alike: its ``.py`` files under ``sysconfig.get_paths()["stdlib"]``, without
``site-packages`` (installed packages live below the standard library in some layouts),
the test suites (``test/``, ``tests/``, ``idle_test/``: generated data and files that are
broken on purpose), ``idlelib``, the build's own ``_sysconfigdata_*`` and ``config-*``,
``__pycache__`` and files over :data:`MAX_FILE_BYTES`. :func:`corpus_id` names that set
by a hash of its sorted paths and contents, printed by ``python -m benchmarks.run``.

:func:`source_files` takes the files with at least ``min_anchors`` places to edit in an
order fixed by :data:`SEED`, so a sample of 300 and one of 3,000 look alike and growth
compares like with like. Every path starts with ``stdlib/`` (a checkout's ``enum.py``
at its root would shadow the real one for ``python -m`` run there). The standard library
holds about 600 such files; a larger sample repeats them under ``stdlib-2/``,
``stdlib-3/`` … in another fixed order (git stores each content once; the review core
reads every path as a file of its own).

Only the standard library is imported here: the corpus can be chosen (and checked) by an
interpreter started without ``site-packages`` (``python -S``).
"""

from __future__ import annotations

import ast
import functools
import hashlib
import os
import platform
import random
import sysconfig
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from bot.errors import GitNeuralError

#: Fixes the order of the files, for every sample size and every machine.
SEED = 6
#: Files larger than this are left out: one generated table (``pydoc_data/topics.py``,
#: 700 KB) would otherwise dominate a small sample.
MAX_FILE_BYTES = 200_000
MIN_ANCHORS = 5
#: Directories of the standard library whose files are not in the corpus.
EXCLUDED_DIRS = frozenset(
    {"site-packages", "dist-packages", "__pycache__", "test", "tests", "idle_test", "idlelib"}
)
#: Where the files go in a benchmark's repository (copies: ``stdlib-2/`` …).
PREFIX = "stdlib"
_SIMPLE = (
    ast.Assign,
    ast.AugAssign,
    ast.AnnAssign,
    ast.Expr,
    ast.Return,
    ast.Pass,
    ast.Import,
    ast.ImportFrom,
    ast.Raise,
    ast.Assert,
    ast.Delete,
    ast.Break,
    ast.Continue,
)


class CorpusError(GitNeuralError):
    """The standard library has no usable Python files (an interpreter without sources)."""


@dataclass(frozen=True)
class SourceFile:
    path: str
    data: bytes
    #: 1-based lines holding exactly one simple statement that starts the line.
    anchors: tuple[int, ...]


@dataclass(frozen=True)
class CorpusId:
    """What a benchmark run measured on: ``python -m benchmarks.run`` prints it."""

    root: str
    python: str
    files: int
    sha256: str
    seed: int

    def line(self) -> str:
        return (
            f"corpus: {self.files} files of {self.python}'s standard library "
            f"({self.root}, seed {self.seed}), sha256 {self.sha256}"
        )


def stdlib_root() -> Path:
    return Path(sysconfig.get_paths()["stdlib"]).resolve()


def python_version() -> str:
    return f"{platform.python_implementation()} {platform.python_version()}"


def _excluded(parts: Sequence[str]) -> bool:
    *dirs, name = parts
    if any(d in EXCLUDED_DIRS or d.startswith(("config-", "lib-dynload")) for d in dirs):
        return True
    return name.startswith("_sysconfigdata")


@functools.cache
def corpus_paths() -> tuple[str, ...]:
    """The corpus's files, as sorted POSIX paths relative to the standard library."""
    base = stdlib_root()
    found = []
    # Excluded directories are not entered at all: site-packages can hold far more files
    # than the standard library (a second per process for every benchmark run). Like
    # rglob, the walk does not descend into symbolic links to directories.
    for directory, subdirs, names in os.walk(base):
        subdirs[:] = [d for d in subdirs if not _excluded((d, ""))]
        for name in names:
            if not name.endswith(".py"):
                continue
            path = Path(directory, name)
            relative = path.relative_to(base)
            if _excluded(relative.parts) or not path.is_file():
                continue
            if 0 < path.stat().st_size <= MAX_FILE_BYTES:
                found.append(relative.as_posix())
    return tuple(sorted(found))


def corpus_id() -> CorpusId:
    """The corpus named by sha256 over its sorted paths and contents (12 hex digits)."""
    root = stdlib_root()
    digest = hashlib.sha256()
    for relative in corpus_paths():
        data = (root / relative).read_bytes()
        digest.update(b"%s\0%d\0" % (relative.encode(), len(data)))
        digest.update(data)
    return CorpusId(
        root=str(root),
        python=python_version(),
        files=len(corpus_paths()),
        sha256=digest.hexdigest()[:12],
        seed=SEED,
    )


def _anchors(data: bytes, lines: Sequence[bytes]) -> tuple[int, ...]:
    try:
        tree = ast.parse(data)
    except (SyntaxError, ValueError):
        return ()
    found = set()
    for node in ast.walk(tree):
        if not isinstance(node, _SIMPLE) or node.end_lineno != node.lineno:
            continue
        line = lines[node.lineno - 1]
        if not line[: node.col_offset].strip():
            found.add(node.lineno)
    return tuple(sorted(found))


@functools.cache
def _read(relative: str) -> SourceFile:
    data = (stdlib_root() / relative).read_bytes()
    return SourceFile(relative, data, _anchors(data, data.splitlines()))


def _shuffled(files: Sequence[str], seed: int, copy: int) -> list[str]:
    order = list(files)
    random.Random(f"{seed}/{copy}").shuffle(order)
    return order


def source_files(
    count: int, *, min_anchors: int = MIN_ANCHORS, seed: int = SEED
) -> list[SourceFile]:
    """``count`` real Python files with at least ``min_anchors`` places to edit.

    The order is fixed (``seed``), so ``source_files(300)`` is a prefix of
    ``source_files(3000)``; past the standard library's own files the same files come
    again under ``stdlib-2/``, ``stdlib-3/`` …, each time in another fixed order. Files
    are read and parsed only as far as the sample needs.
    """
    picked: list[SourceFile] = []
    usable: list[str] = []
    for relative in _shuffled(corpus_paths(), seed, 1):
        if len(picked) == count:
            return picked
        source = _read(relative)
        if len(source.anchors) >= min_anchors:
            usable.append(relative)
            picked.append(SourceFile(f"{PREFIX}/{relative}", source.data, source.anchors))
    if not usable and count > 0:
        raise CorpusError(
            f"no Python file under {stdlib_root()} has {min_anchors} places to edit: "
            "run the benchmarks with an interpreter that ships its standard library's sources"
        )
    copy = 2
    while len(picked) < count:
        for relative in _shuffled(sorted(usable), seed, copy)[: count - len(picked)]:
            source = _read(relative)
            picked.append(SourceFile(f"{PREFIX}-{copy}/{relative}", source.data, source.anchors))
        copy += 1
    return picked

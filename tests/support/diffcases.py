"""Hypothesis strategies for changes that stress a diff: similar blocks, renames and
copies around the threshold, CRLF, missing final newlines, long lines, foreign bytes,
binaries, mode changes, symlinks and type changes.

``changes()`` draws a ``(base, head)`` pair of file maps for :mod:`tests.support.gitdiff`.
"""

from __future__ import annotations

import base64
import random

from hypothesis import strategies as st

from tests.support.repos import Executable, FileValue, Symlink

_LINES: tuple[bytes, ...] = (
    b"\n",
    b"\n",
    b"def f():\n",
    b"    return x\n",
    b"    pass\n",
    b"x = 1\n",
    b"}\n",
    b"if (x) {\n",
    b"    y();\n",
    b"# comment\n",
    b"  \t\n",
    "é = 'café'\n".encode(),
    b"latin-1 \xe9\xff\n",
    b"L" * 150 + b"\n",
)
_PATHS = (
    "a.py",
    "b.py",
    "src/a.py",
    "src/b.py",
    "lib/a.py",
    "lib/deep/c.py",
    "README.md",
    "café.txt",
    "sp ace.txt",
    'q"uote.txt',
    "Makefile",
    "docs/a.py",
)
_ACTIONS = ("keep", "edit", "delete", "rename", "rename_edit", "copy", "chmod", "link")


@st.composite
def _text(draw: st.DrawFn) -> bytes:
    data = b"".join(draw(st.lists(st.sampled_from(_LINES), min_size=1, max_size=30)))
    if draw(st.booleans()):
        data = data.replace(b"\n", b"\r\n")
    if draw(st.booleans()):
        data = data.rstrip(b"\r\n")
    return data


@st.composite
def _bundle(draw: st.DrawFn) -> bytes:
    """Lines around a certificate-like base64 body (redacted as key material)."""
    rng = random.Random(draw(st.integers(0, 2**16)))
    body = base64.encodebytes(rng.randbytes(48 * draw(st.integers(3, 6)))).replace(b"\n", b"")
    wrapped = b"".join(body[i : i + 64] + b"\n" for i in range(0, len(body), 64))
    before = b"".join(draw(st.lists(st.sampled_from(_LINES), max_size=5)))
    after = b"".join(draw(st.lists(st.sampled_from(_LINES), max_size=5)))
    return (
        before + b"-----BEGIN CERTIFICATE-----\n" + wrapped + b"-----END CERTIFICATE-----\n" + after
    )


@st.composite
def _content(draw: st.DrawFn) -> bytes:
    kind = draw(st.sampled_from(("text", "text", "text", "text", "binary", "empty", "bundle")))
    if kind == "empty":
        return b""
    if kind == "binary":
        return b"\0" + draw(st.binary(max_size=120))
    if kind == "bundle":
        return draw(_bundle())
    return draw(_text())


@st.composite
def _edit(draw: st.DrawFn, data: bytes) -> bytes:
    lines = data.splitlines(keepends=True)
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, len(lines)))
        what = draw(st.sampled_from(("insert", "delete", "replace", "blank", "eol")))
        new = draw(st.lists(st.sampled_from(_LINES), min_size=1, max_size=6))
        if what == "insert":
            lines[at:at] = new
        elif what == "delete":
            del lines[at : at + len(new)]
        elif what == "replace":
            lines[at : at + 1] = new
        elif what == "blank" and at < len(lines):
            lines[at] = lines[at].rstrip(b"\r\n") + b" \n"
        elif lines:
            lines[-1] = lines[-1].rstrip(b"\r\n")
    return b"".join(lines)


@st.composite
def changes(draw: st.DrawFn) -> tuple[dict[str, FileValue], dict[str, FileValue]]:
    paths = draw(st.lists(st.sampled_from(_PATHS), min_size=1, max_size=6, unique=True))
    base: dict[str, FileValue] = {path: draw(_content()) for path in paths}
    head: dict[str, FileValue] = {}
    free = [p for p in _PATHS if p not in base]
    for path, value in base.items():
        assert isinstance(value, bytes)
        action = draw(st.sampled_from(_ACTIONS))
        if action in ("rename", "rename_edit", "copy") and free:
            target = draw(st.sampled_from(free))
            free.remove(target)
            moved = draw(_edit(value)) if action == "rename_edit" else value
            head[target] = moved
            if action == "copy":
                head[path] = value
        elif action == "edit":
            head[path] = draw(_edit(value))
        elif action == "chmod":
            head[path] = Executable(value)
        elif action == "link":
            head[path] = Symlink(draw(st.sampled_from(_PATHS)))
        elif action == "keep":
            head[path] = value
    added = draw(st.lists(st.sampled_from(free), max_size=2, unique=True)) if free else []
    for path in added:
        head[path] = draw(_content())
    return base, head

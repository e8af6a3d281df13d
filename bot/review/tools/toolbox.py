"""The read-only repository tools K3 may call while it reviews.

``read_file``, ``search``, ``list_dir``, ``find_definition`` and ``find_references``
read the reviewed snapshot (the head tree, or the index for a staged review) through the
:class:`~bot.domain.change.Snapshot` protocol, never the live work tree or the file
system. Their arguments come from the model and may have been planted by a prompt
injection, so paths are resolved inside the snapshot only (:mod:`bot.review.tools.paths`),
searches are bounded (:mod:`bot.review.tools.search`), and every result is redacted and
size-capped. A result is untrusted text for a ``tool`` message; nothing here acts on it.

``find_definition`` and ``find_references`` answer from the snapshot's symbol index
(:class:`bot.code.index.SymbolIndex`: definitions and references read by tree-sitter),
given or built on their first call within the search's limits; without one (no
``parsers`` extra, a repository too large to index in time) ``find_definition`` falls
back to its patterns and ``find_references`` to a word search.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import regex

from bot.code.index import SymbolIndex
from bot.domain.change import Snapshot
from bot.errors import GitNeuralError
from bot.review.secrets.redaction import redact_text
from bot.review.tools.arguments import parse_arguments
from bot.review.tools.globs import glob_matcher
from bot.review.tools.paths import ToolError, normalize, resolve, shown
from bot.review.tools.reading import CACHE_MIN_BYTES, FileCache, FileLines, undecodable
from bot.review.tools.regexes import compile_search
from bot.review.tools.search import Hit, Scanner, SearchResult, definition_pattern
from bot.review.tools.specs import tool_definitions
from bot.text import printable

__all__ = ["RepoTools", "ToolError", "ToolLimits"]

#: Lines read around a requested window so that a private key cut by the window's edge
#: is still recognised (and redacted) as a whole.
_REDACTION_MARGIN = 200
#: Bytes of one line decoded beyond ``max_line_chars``: a secret straddling the cut is
#: then still seen whole by the redaction before the line is cut.
_LINE_SLACK_BYTES = 4096


@dataclass(frozen=True)
class ToolLimits:
    max_bytes: int = 64_000
    max_lines: int = 800
    max_matches: int = 200
    search_timeout_s: float = 5.0
    max_files_scanned: int = 20_000
    #: read_file cuts longer lines (minified code) and says so.
    max_line_chars: int = 2_000
    #: search and find_definition skip larger files (and count them).
    max_search_file_bytes: int = 2_000_000
    #: read_file refuses larger files without reading them.
    max_read_bytes: int = 100_000_000
    #: Bytes of large files kept per snapshot (one file of max_read_bytes), so paging
    #: through one reads it once.
    read_cache_bytes: int = 100_000_000


#: What a hostile argument can still raise inside a tool (a regex the bounds let through
#: that the engine rejects, a pattern that overflows, memory a call could not get, a
#: timeout): each becomes the call's one-line result.
_TOOL_FAILURES = (
    re.error,
    regex.error,
    MemoryError,
    OverflowError,
    RecursionError,
    TimeoutError,
    ValueError,
)


class RepoTools:
    def __init__(
        self,
        snapshot: Snapshot,
        *,
        limits: ToolLimits | None = None,
        index: SymbolIndex | None = None,
    ) -> None:
        self._snapshot = snapshot
        self.limits = limits or ToolLimits()
        self._index = index
        self._index_tried = index is not None
        self._files = FileCache(self.limits.read_cache_bytes)
        self._handlers: dict[str, Callable[..., str]] = {
            "read_file": self.read_file,
            "search": self.search,
            "list_dir": self.list_dir,
            "find_definition": self.find_definition,
            "find_references": self.find_references,
        }

    def definitions(self) -> list[dict[str, Any]]:
        """OpenAI function-tool specs for the five tools."""
        return tool_definitions(self.limits.max_lines, self.limits.max_matches)

    def call(self, name: str, arguments: str) -> str:
        """Run one tool call; refusals and bad arguments come back as ``error: …`` text."""
        handler = self._handlers.get(name)
        if handler is None:
            known = ", ".join(self._handlers)
            return f"error: unknown tool {shown(name)}; the repository tools are {known}"
        try:
            kwargs = parse_arguments(name, arguments)
            return handler(**kwargs)
        except ToolError as exc:
            return self._finish(f"error: {exc}")
        except (GitNeuralError, OSError) as exc:
            # The snapshot itself failed (a missing object, an unreadable work-tree file).
            return self._finish(f"error: {name} failed: {type(exc).__name__}: {exc}")
        except _TOOL_FAILURES as exc:
            detail = str(exc).splitlines()[0] if str(exc) else "no detail"
            return self._finish(
                f"error: {name} failed: {type(exc).__name__}: {shown(detail)}; change the "
                "arguments (a simpler pattern, a narrower path_glob, a smaller window)"
            )

    # -- the tools ----------------------------------------------------------------------

    def read_file(
        self, path: str, start_line: int | None = None, end_line: int | None = None
    ) -> str:
        """Numbered lines ``start_line..end_line`` (1-based, inclusive) of a file."""
        real, kind = resolve(self._snapshot, path)
        if kind == "dir":
            raise ToolError(f"{shown(real or '.')} is a directory: use list_dir")
        size = self._snapshot.size(real)
        if size is not None and size > self.limits.max_read_bytes:
            raise ToolError(
                f"{shown(real)} is too large to read ({size:,} bytes); use search with "
                f"path_glob={shown(real)} to find the lines you need"
            )
        file = self._lines(real, size)
        if file is None:
            raise ToolError(f"{shown(real)} cannot be read as a file")
        if undecodable(file.data):
            return f"{printable(real)}: binary file, {len(file.data):,} bytes (not shown)"
        total = file.total
        if total == 0:
            return f"{printable(real)}: empty file"
        start, end = self._window(start_line, end_line, total)
        last_wanted = end
        end = min(end, start + self.limits.max_lines - 1)
        lines = self._redacted_lines(file, start, end)
        width = len(str(end))
        out: list[str] = []
        # Room for the header and the truncation note within max_bytes.
        used = 512
        shown_end = start - 1
        for number, text in enumerate(lines, start):
            row = f"{number:>{width}} | {text}"
            used += len(row.encode()) + 1
            if used > self.limits.max_bytes and out:
                break
            out.append(row)
            shown_end = number
        alias = "" if real == normalize(path) else f" (via symlink {shown(path)})"
        header = f"{printable(real)}{alias}: lines {start}-{shown_end} of {total:,}"
        if shown_end < last_wanted:
            out.append(
                f"[truncated: showing lines {start}-{shown_end} of {total:,}; call read_file "
                f"with start_line={shown_end + 1} for more]"
            )
        return self._finish("\n".join([header, *out]))

    def search(self, pattern: str, path_glob: str | None = None, regex: bool = False) -> str:
        """``path:line: text`` for each line matching ``pattern`` (literal unless regex)."""
        # One time limit for compiling the pattern and the glob, walking and matching.
        started = time.monotonic()
        compiled = compile_search(pattern, regex)
        selected = glob_matcher(path_glob)
        needle = b"" if regex else pattern.encode("utf-8", "surrogateescape")
        result = self._scanner(started).grep(compiled, selected, needle)
        where = f" in {shown(path_glob)}" if path_glob else ""
        empty = f"no matches for {shown(pattern)}{where} ({result.files_scanned:,} files searched)"
        return self._report(result, empty)

    def list_dir(self, path: str = "") -> str:
        """The entries directly under ``path`` (the root by default)."""
        real, kind = resolve(self._snapshot, path)
        if kind != "dir":
            raise ToolError(f"{shown(real)} is a file, not a directory: use read_file")
        rows: list[str] = []
        for entry in self._snapshot.list_dir(real):
            if entry.name.lower() == ".git":
                continue
            child = f"{real}/{entry.name}" if real else entry.name
            name = printable(entry.name)
            if entry.kind == "dir":
                rows.append(f"{name}/")
            elif entry.kind == "file":
                size = "" if entry.size is None else f"  ({entry.size:,} bytes)"
                rows.append(f"{name}{size}")
            elif entry.kind == "symlink":
                target = self._snapshot.symlink_target(child) or "?"
                rows.append(f"{name} -> {printable(target)}  (symlink)")
            else:
                rows.append(f"{name}  (submodule: not part of this review)")
        header = f"{printable(real) or '.'}/ ({len(rows):,} entries)"
        if len(rows) > self.limits.max_lines:
            rows = [
                *rows[: self.limits.max_lines],
                f"[truncated: showing {self.limits.max_lines:,} of {len(rows):,} entries]",
            ]
        return self._finish("\n".join([header, *rows]))

    def find_definition(self, symbol: str) -> str:
        """Lines that define ``symbol`` (def/class/func/fn/type/struct/… across languages):
        the symbol index's definitions and the definition patterns' lines, by path."""
        name, pattern = definition_pattern(symbol)
        result = self._scanner(time.monotonic()).definitions(name, pattern)
        index = self.symbol_index()
        found = index.definitions(name) if index is not None else []
        listed = {(h.path, h.line) for h in result.hits}
        extra = [(d.path, d.line) for d in found if (d.path, d.line) not in listed]
        if extra and len(result.hits) < self.limits.max_matches:
            # What only the parser saw ("static int\nhelper(void)", a method the patterns
            # miss) joins the patterns' lines, in path order.
            texts = self._line_texts(extra)
            hits = [*result.hits, *(Hit(p, n, texts[p, n]) for p, n in extra)]
            hits.sort(key=lambda h: (h.path, h.line))
            result.hits[:] = hits[: self.limits.max_matches]
        empty = (
            f"no definition of {shown(name)} found ({result.files_scanned:,} files searched); "
            f"try search for {shown(name)}"
        )
        return self._report(result, empty)

    def find_references(self, symbol: str) -> str:
        """Lines that call, name or import ``symbol``, each with the unit it stands in."""
        name, _ = definition_pattern(symbol)
        index = self.symbol_index()
        if index is None:
            return self.search(rf"\b{re.escape(name)}\b", regex=True)
        sites = []
        for ref in index.references(name):
            unit = index.enclosing(ref.path, ref.line)
            where = f"  (in {unit.kind} {unit.name})" if unit is not None and unit.name else ""
            sites.append((ref.path, ref.line, where))
        if not sites:
            return self._finish(
                f"no references to {shown(name)} found in the symbol index "
                f"({len(index.files):,} files indexed); try search for {shown(name)}"
            )
        return self._sites(sites)

    def symbol_index(self) -> SymbolIndex | None:
        """The snapshot's symbol index: given, or built once within the search's limits."""
        if not self._index_tried:
            self._index_tried = True
            try:
                self._index = SymbolIndex.build(
                    self._snapshot,
                    max_files=self.limits.max_files_scanned,
                    max_file_bytes=self.limits.max_search_file_bytes,
                    deadline=time.monotonic() + self.limits.search_timeout_s,
                )
            except TimeoutError:
                self._index = None
        return self._index

    # -- helpers ------------------------------------------------------------------------

    def _line_texts(self, sites: list[tuple[str, int]]) -> dict[tuple[str, int], str]:
        """The text of each ``(path, line)``, cut to ``max_line_chars``."""
        files: dict[str, list[str]] = {}
        texts = {}
        for path, line in sites:
            if path not in files:
                data = self._snapshot.read(path) or b""
                files[path] = data.decode("utf-8", "replace").split("\n")
            text = files[path][line - 1] if line <= len(files[path]) else ""
            texts[path, line] = text.removesuffix("\r")[: self.limits.max_line_chars]
        return texts

    def _sites(self, sites: list[tuple[str, int, str]]) -> str:
        """``path:line: text`` rows (with a note each), at most ``max_matches`` of them."""
        limit = self.limits.max_matches
        texts = self._line_texts([(path, line) for path, line, _ in sites[:limit]])
        rows = [
            f"{printable(path)}:{line}: {texts[path, line].strip()}{note}"
            for path, line, note in sites[:limit]
        ]
        if len(sites) > limit:
            rows.append(f"[truncated: showing the first {limit:,} of {len(sites):,} sites]")
        return self._finish("\n".join(rows))

    def _window(self, start_line: int | None, end_line: int | None, total: int) -> tuple[int, int]:
        start = 1 if start_line is None else start_line
        end = total if end_line is None else end_line
        if start < 1 or end < 1:
            raise ToolError("start_line and end_line are 1-based: use 1 or more")
        if start > total:
            raise ToolError(f"start_line {start} is past the end of the file ({total:,} lines)")
        if end < start:
            raise ToolError(f"end_line {end} is before start_line {start}")
        return start, min(end, total)

    def _lines(self, real: str, size: int | None) -> FileLines | None:
        """The file's lines: a large file from the cache, read once per snapshot."""
        if size is not None and size < CACHE_MIN_BYTES:
            data = self._snapshot.read(real)
            return None if data is None else FileLines(data)
        return self._files.get(real, lambda: self._snapshot.read(real))

    def _redacted_lines(self, file: FileLines, start: int, end: int) -> list[str]:
        """Lines ``start..end``, redacted with a margin around them, long lines cut."""
        cap = self.limits.max_line_chars
        lines = file.redacted_window(
            start, end, margin=_REDACTION_MARGIN, max_line_bytes=cap * 4 + _LINE_SLACK_BYTES
        )
        out = []
        for line in lines:
            text = line.removesuffix("\r")
            if len(text) > cap:
                text = f"{text[:cap]} … [line cut at {cap:,} characters]"
            out.append(printable(text))
        return out

    def _scanner(self, started: float) -> Scanner:
        return Scanner(
            self._snapshot,
            max_matches=self.limits.max_matches,
            max_files=self.limits.max_files_scanned,
            max_file_bytes=self.limits.max_search_file_bytes,
            deadline=started + self.limits.search_timeout_s,
        )

    def _report(self, result: SearchResult, empty: str) -> str:
        limits = self.limits
        if result.timed_out and not result.hits:
            # One line the model can act on, not "no matches" followed by a caveat.
            return self._finish(
                f"[search stopped after {limits.search_timeout_s:g} s: results are partial, "
                f"no match in the {result.files_scanned:,} files searched; simplify the "
                "pattern or narrow path_glob]"
            )
        rows = [f"{printable(h.path)}:{h.line}: {printable(h.text)}" for h in result.hits]
        if not rows:
            rows.append(empty)
        if result.more:
            rows.append(
                f"[truncated: showing the first {limits.max_matches:,} matching lines; "
                "narrow the pattern or path_glob]"
            )
        if result.timed_out:
            rows.append(
                f"[search stopped after {limits.search_timeout_s:g} s: results are partial; "
                "simplify the pattern or narrow path_glob]"
            )
        if result.file_limit:
            rows.append(
                f"[search stopped after {limits.max_files_scanned:,} files: results are "
                "partial; narrow path_glob]"
            )
        if result.skipped_large:
            files = "1 file" if result.skipped_large == 1 else f"{result.skipped_large:,} files"
            rows.append(f"[{files} over {limits.max_search_file_bytes:,} bytes not searched]")
        return self._finish("\n".join(rows))

    def _finish(self, text: str) -> str:
        """Redact, then cap to ``max_bytes``, saying so when something was cut."""
        text = printable(redact_text(text)[0])
        data = text.encode()
        if len(data) <= self.limits.max_bytes:
            return text
        cut = data[: self.limits.max_bytes].rsplit(b"\n", 1)[0]
        kept = cut.decode("utf-8", "ignore")
        return f"{kept}\n[truncated: output cut at {self.limits.max_bytes:,} bytes]"

"""Bounded, git-grep-like search over one snapshot, and definitions found with it.

Patterns come from the model, so they are untrusted: regexes run on the ``regex``
package with a timeout (a catastrophic pattern such as ``(a+)+$`` gives up with partial
results instead of hanging a worker), and every search has caps on files scanned, bytes
per file and matches returned. We chose the timeout over rejecting nested quantifiers
(which misses ``(a|aa)+$`` and friends) and over a worker process per search (costly, and
``re`` cannot be interrupted in a thread). ``regex`` measures its timeout in CPU time, so
on a heavily loaded machine a search can overrun its wall-clock budget proportionally.
Files are searched *after* secret redaction, so a pattern cannot probe a secret
character by character ("does ``ghp_a`` match?"). The pattern and ``path_glob`` are
compiled within bounds by :mod:`bot.review.tools.regexes` and :mod:`bot.review.tools.globs`;
the scan's deadline is set before either, so one limit covers compiling, walking and
matching.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import regex

from bot.domain.change import Snapshot
from bot.review.secrets.redaction import redact_text
from bot.review.tools.paths import ToolError, shown
from bot.text import decode_text

#: git's own heuristic: a NUL in the first 8,000 bytes means binary.
BINARY_PROBE = 8000
_MAX_HIT_CHARS = 300
_IDENTIFIER = re.compile(r"[A-Za-z_$][\w$]*")
_QUALIFIER = re.compile(r"\.|::|#|->")


@dataclass(frozen=True)
class Hit:
    path: str
    line: int
    #: The (redacted) line, cut to a few hundred characters.
    text: str


@dataclass
class SearchResult:
    hits: list[Hit] = field(default_factory=list)
    files_scanned: int = 0
    #: More lines matched than the cap allowed to return.
    more: bool = False
    timed_out: bool = False
    #: The scan stopped at the cap on files.
    file_limit: bool = False
    skipped_large: int = 0
    skipped_binary: int = 0


def is_binary(head: bytes) -> bool:
    return b"\0" in head[:BINARY_PROBE]


def definition_pattern(symbol: str) -> tuple[str, regex.Pattern[str]]:
    """The bare name of ``symbol`` and a pattern for lines that define it."""
    name = _QUALIFIER.split(symbol.strip())[-1]
    if len(name) > 200 or not _IDENTIFIER.fullmatch(name):
        raise ToolError(
            f"symbol {shown(symbol)} is not an identifier: pass a name such as "
            "'parse_config' or 'Config.load'"
        )
    s = regex.escape(name)
    end = r"(?![\w$])"
    mods = (
        r"(?:(?:export|default|public|private|protected|internal|static|abstract|final"
        r"|sealed|open|override|async|pub(?:\([^)]*\))?|unsafe|extern|inline|virtual"
        r"|data|case|partial|readonly|declare|local|fileprivate|suspend|operator"
        r"|external|synchronized|native|constexpr|mutating)\s+)*"
    )
    keyword = (
        r"(?:def|defp|defmodule|class|function\*?|func|fn|fun|sub|interface|struct|enum"
        r"|trait|type|typedef(?:\s+(?:struct|enum|union))?|union|protocol|record|object"
        r"|namespace|module|macro_rules!|impl(?:<[^>]*>)?|extension|actor|proc|let|const"
        r"|var|val)"
    )
    forms = [
        # def/class/func/fn/struct/type … NAME (Go receivers, Ruby self., Rust pub(crate)).
        rf"\s*{mods}{keyword}\s+(?:\([^)]*\)\s*)?(?:self\.|[\w$]+(?:\.|::))?{s}{end}",
        # A top-level assignment or annotated constant (Python, shell variables).
        rf"{s}\s*(?::[^=\n]*)?=(?![=>])",
        # C, C++, Java, C#: a return type, then NAME( … and no `;` (a call or prototype).
        r"\s*(?!(?:return|new|else|throw|await|yield|if|while|for|switch|case|delete|goto"
        r"|sizeof|typeof|print|echo)\b)(?:[\w$<>\[\],*&:.~?]+\s+)+[*&]*"
        rf"{s}\s*\([^;]*$",
        # JS/TS method shorthand `NAME(a, b) {`, and shell `NAME() {`.
        rf"\s*(?:(?:static|async|get|set|public|private|protected|override)\s+)*{s}"
        r"\s*\([^)]*\)\s*(?::\s*[^{;]+)?\{?\s*$",
        # `NAME: function`, `obj.NAME = (…) =>`, `NAME = async x =>`.
        rf"\s*(?:this\.|[\w$]+\.(?:prototype\.)?)?{s}\s*[:=]\s*(?:async\s+)?"
        r"(?:function\b|\([^)]*\)\s*(?::[^=]*)?=>|[\w$]+\s*=>)",
        rf"\s*#\s*define\s+{s}{end}",
    ]
    return name, regex.compile("|".join(f"(?:{f})" for f in forms))


class Scanner:
    """Runs one search over a snapshot within the limits and a deadline."""

    def __init__(
        self,
        snapshot: Snapshot,
        *,
        max_matches: int,
        max_files: int,
        max_file_bytes: int,
        deadline: float,
    ) -> None:
        self._snapshot = snapshot
        self._max_matches = max_matches
        self._max_files = max_files
        self._max_file_bytes = max_file_bytes
        #: ``time.monotonic()`` deadline, set before the pattern and glob were compiled.
        self._deadline = deadline
        self.result = SearchResult()

    def _remaining(self) -> float:
        return self._deadline - time.monotonic()

    def _texts(
        self,
        selected: Callable[[str], bool],
        needle: bytes,
        probe: regex.Pattern[str] | None = None,
    ) -> Iterator[tuple[str, str]]:
        """(path, redacted text) of each searchable file that may match.

        ``needle`` (bytes that must occur) and ``probe`` (a pattern that must match the
        raw text) only skip files cheaply: redaction costs more than a search, and most
        files do not match. Hits always come from the redacted text.
        """
        result = self.result
        for path in self._snapshot.walk():
            # Checked for every path, selected or not: the walk and the glob count too.
            if self._remaining() <= 0:
                result.timed_out = True
                return
            if not selected(path):
                continue
            if result.files_scanned >= self._max_files:
                result.file_limit = True
                return
            size = self._snapshot.size(path)
            if size is not None and size > self._max_file_bytes:
                result.skipped_large += 1
                continue
            data = self._snapshot.read(path)
            if data is None:
                continue
            result.files_scanned += 1
            if is_binary(data):
                result.skipped_binary += 1
                continue
            if needle and needle not in data:
                continue
            text = decode_text(data)
            if probe is not None:
                try:
                    if probe.search(text, timeout=max(self._remaining(), 0.01)) is None:
                        continue
                except TimeoutError:
                    result.timed_out = True
                    return
            yield path, redact_text(text)[0]

    def _add(self, path: str, line_no: int, line: str) -> bool:
        """Record a hit; False once the cap is reached."""
        if len(self.result.hits) >= self._max_matches:
            self.result.more = True
            return False
        text = line.rstrip("\r")
        if len(text) > _MAX_HIT_CHARS:
            text = text[:_MAX_HIT_CHARS] + " …"
        self.result.hits.append(Hit(path, line_no, text))
        return True

    def grep(
        self, pattern: regex.Pattern[str], selected: Callable[[str], bool], needle: bytes
    ) -> SearchResult:
        """Every line matching ``pattern``, one hit per line, in walk order."""
        for path, text in self._texts(selected, needle, None if needle else pattern):
            pos, line_no, counted = 0, 1, 0
            while pos <= len(text):
                try:
                    match = pattern.search(text, pos, timeout=max(self._remaining(), 0.01))
                except TimeoutError:
                    self.result.timed_out = True
                    return self.result
                if match is None:
                    break
                start = text.rfind("\n", 0, match.start()) + 1
                end = text.find("\n", match.start())
                end = len(text) if end < 0 else end
                line_no += text.count("\n", counted, start)
                counted = start
                if not self._add(path, line_no, text[start:end]):
                    return self.result
                pos = end + 1
        return self.result

    def definitions(self, name: str, pattern: regex.Pattern[str]) -> SearchResult:
        """Lines that mention ``name`` as a word and match a definition form."""
        word = regex.compile(rf"(?<![\w$]){regex.escape(name)}(?![\w$])")
        for path, text in self._texts(lambda _: True, name.encode()):
            line_no, counted = 1, 0
            seen_line = -1
            for mention in word.finditer(text):
                start = text.rfind("\n", 0, mention.start()) + 1
                if start == seen_line:
                    continue
                seen_line = start
                end = text.find("\n", start)
                line = text[start : len(text) if end < 0 else end][:1000]
                line_no += text.count("\n", counted, start)
                counted = start
                try:
                    found = pattern.match(line, timeout=max(self._remaining(), 0.01))
                except TimeoutError:
                    self.result.timed_out = True
                    return self.result
                if found is not None and not self._add(path, line_no, line):
                    return self.result
        return self.result

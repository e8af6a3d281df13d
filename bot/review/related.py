"""Related code added to the prompt up front: callers of what the change changes, and
definitions of what it uses.

One-shot reviews (the hook, ``--effort low``) cannot look around, and agentic ones save
turns when the obvious lookups are done already. For each group of files this finds, in
the reviewed (head) snapshot:

- the **callers** of functions and classes the change defines, edits or removes (a
  changed signature breaks them, and they are often in files the diff does not touch);
- the **definitions** of functions and types the added lines call or name.

Sites are classified with the tools' own definition patterns
(:func:`bot.review.tool_search.definition_pattern`) and shown through
:meth:`RepoTools.read_file`, so they are redacted and capped exactly as a tool result
would be. Sites already visible in the diff are left out. All groups' names are looked
up in one walk of the snapshot (a substring probe per name, then a word search in the
few files that contain it): a 3,000-file tree of 40 MB takes about a second. The walk is
bounded in files and time; the text is bounded in tokens. The order is deterministic
(names in diff order, sites in tree order) so that an unchanged change renders the same
prompt and K3's prefix cache keeps serving it.
"""

from __future__ import annotations

import builtins
import keyword
import re
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import regex

from bot.errors import GitNeuralError
from bot.review.budget import estimate_tokens
from bot.review.change import Snapshot
from bot.review.diff import FileDiff, decode_text
from bot.review.enclosing import enclosing_ranges
from bot.review.redact import redact_text
from bot.review.tool_search import definition_pattern, is_binary
from bot.review.tools import RepoTools

__all__ = ["RelatedFinder", "RelatedLimits", "changed_names", "used_names"]


@dataclass(frozen=True)
class RelatedLimits:
    #: Tokens of related code per prompt (less when the files leave less room).
    max_tokens: int = 8_000
    #: Names looked up per prompt: changed ones first, then used ones.
    max_names: int = 24
    #: Callers, or definitions, shown per name.
    max_sites: int = 3
    #: Lines shown of a definition (its signature and docstring, usually).
    definition_lines: int = 12
    #: Lines shown above and below a call.
    call_margin: int = 2
    #: Wall time of the one walk over the snapshot.
    timeout_s: float = 3.0
    max_files: int = 20_000
    max_file_bytes: int = 2_000_000
    #: Word matches examined per name (a name used everywhere stops early).
    max_mentions: int = 400
    #: Below this many tokens of room a prompt gets no related code.
    min_tokens: int = 400


_IDENT = r"[A-Za-z_$][\w$]*"
# A definition on a changed line, in the common languages (the name is group 1).
_DEF_LINE = re.compile(
    r"\s*(?:(?:export|default|public|private|protected|internal|static|abstract|final"
    r"|async|pub(?:\([^)]*\))?|unsafe|override|virtual|inline|extern)\s+)*"
    r"(?:def|class|function\*?|func|fn|fun|sub|struct|interface|enum|trait|type|record)"
    rf"\s+(?:\([^)]*\)\s*)?(?:{_IDENT}(?:\.|::))?({_IDENT})"
)
_ARROW = re.compile(
    rf"\s*(?:export\s+)?(?:const|let|var)\s+({_IDENT})\s*=\s*(?:async\s*)?"
    rf"(?:function\b|\([^)]*\)\s*(?::[^=]*)?=>|{_IDENT}\s*=>)"
)
_CALL = re.compile(rf"(?<![\w$])({_IDENT})\s*\(")
_TYPE = re.compile(r"(?<![\w$])([A-Z][A-Za-z0-9_]*[a-z][A-Za-z0-9_]*)(?![\w$])")

_OTHER_KEYWORDS = """if for while switch case return catch function new typeof sizeof super this
        self cls func fn let var const void static public private protected throw throws
        try else elif then end begin require include import export default extends
        implements instanceof delete await async yield struct enum impl match where
        println printf sprintf fprintf malloc free memcpy strlen make append panic
        String Object Array Map Set Promise Error Exception Optional List Dict Any
        Result Some None Ok Err Vec Box Self TODO FIXME NOTE"""

# Names whose definitions would be noise: keywords of the common languages, Python's
# builtins, and the methods of built-in containers (``append``, ``get``, ``items`` …).
_COMMON = frozenset(
    {
        *keyword.kwlist,
        *dir(builtins),
        *(n for t in (str, bytes, list, dict, set, tuple, int, float) for n in dir(t)),
        *_OTHER_KEYWORDS.split(),
    }
)

_MIN_NAME = 3
_COMMENTS = ("#", "//", "/*", "*", "--", ";")


def _definition_name(text: str) -> str | None:
    found = _DEF_LINE.match(text) or _ARROW.match(text)
    return found.group(1) if found else None


def _touched(file: FileDiff) -> set[int]:
    """New-file lines whose unit changed: added lines, and where a removal was."""
    touched = set(file.added_lines)
    for hunk in file.hunks:
        pending = False
        last: int | None = None
        for line in hunk.lines:
            if line.kind == "-":
                pending = True
            elif line.new_no is not None:
                if pending:
                    touched.add(line.new_no)
                    pending = False
                last = line.new_no
        if pending and last is not None:
            touched.add(last)
    return touched


def _add(names: list[str], seen: set[str], name: str | None) -> None:
    if name and name not in seen and len(name) >= _MIN_NAME and name not in _COMMON:
        seen.add(name)
        names.append(name)


def changed_names(file: FileDiff, head: Snapshot | None) -> list[str]:
    """Functions and classes the change defines, edits or removes, in diff order."""
    names: list[str] = []
    seen: set[str] = set()
    for hunk in file.hunks:
        for line in hunk.lines:
            if line.kind != " ":
                _add(names, seen, _definition_name(line.text))
    data = head.read(file.path) if head is not None else None
    if data is not None and len(data) <= 1_000_000 and not is_binary(data):
        for _, _, header in enclosing_ranges(file.path, decode_text(data), _touched(file)):
            _add(names, seen, _definition_name(header))
    return names


def used_names(file: FileDiff) -> list[str]:
    """Functions called and types named on added lines, most used first."""
    counts: dict[str, int] = {}
    for hunk in file.hunks:
        for line in hunk.lines:
            if line.kind != "+":
                continue
            defined = _definition_name(line.text)
            for pattern in (_CALL, _TYPE):
                for match in pattern.finditer(line.text):
                    if match.group(1) != defined:
                        counts[match.group(1)] = counts.get(match.group(1), 0) + 1
    ordered = sorted(counts, key=lambda n: -counts[n])  # stable: ties keep diff order
    names: list[str] = []
    seen: set[str] = set()
    for name in ordered:
        _add(names, seen, name)
    return names


@dataclass
class _Sites:
    definitions: list[tuple[str, int]] = field(default_factory=list)
    calls: list[tuple[str, int]] = field(default_factory=list)
    mentions: int = 0


class _Probe:
    """How one name is looked for: bytes that must occur, then words on lines."""

    def __init__(self, name: str) -> None:
        escaped = re.escape(name)
        self.name = name
        self.needle = name.encode()
        self.word = re.compile(rf"(?<![\w$]){escaped}(?![\w$])")
        # No space before "(": calls in code, not "a width (in cells)" in prose.
        self.call = re.compile(rf"(?<![\w$]){escaped}\(")
        self._definition: regex.Pattern[str] | None = None

    @property
    def definition(self) -> regex.Pattern[str]:
        """The tools' definition pattern, compiled on first use (it takes milliseconds)."""
        if self._definition is None:
            self._definition = definition_pattern(self.name)[1]
        return self._definition


@dataclass
class _Wanted:
    """One prompt's names, and the diff lines it already shows."""

    changed: list[str]
    used: list[str]
    shown: dict[str, frozenset[int]]


class RelatedFinder:
    """Related code for one or more groups of files of a change, from one walk."""

    def __init__(self, head: Snapshot, limits: RelatedLimits | None = None) -> None:
        self._head = head
        self.limits = limits or RelatedLimits()
        self._tools = RepoTools(head)
        #: Set when the walk stopped early (time or file cap): results are partial.
        self.partial = False

    def contexts(self, groups: Sequence[Sequence[FileDiff]], rooms: Sequence[int]) -> list[str]:
        """The related-code text for each group within its room in tokens ("" if none).

        ``max_names`` bounds the lookups of the whole change, shared by the groups with
        room: a change in 40 parts costs no more searching than one prompt.
        """
        served = [i for i, room in enumerate(rooms) if room >= self.limits.min_tokens]
        share = max(1, self.limits.max_names // max(1, len(served)))
        wanted = {i: self._wanted(groups[i], share) for i in served}
        names = sorted({n for w in wanted.values() for n in (*w.changed, *w.used)})
        sites = self._scan(names)
        return [
            self._render(wanted[i], sites, min(room, self.limits.max_tokens)) if i in wanted else ""
            for i, room in enumerate(rooms)
        ]

    def _wanted(self, files: Sequence[FileDiff], limit: int) -> _Wanted:
        """Up to ``limit`` names: changed ones first (a third is kept for used ones)."""
        ordered = sorted(files, key=lambda f: f.path)
        room_changed = max(1, limit - limit // 3)
        changed: list[str] = []
        seen: set[str] = set()
        for file in ordered:
            if len(changed) >= room_changed:
                break  # reading and parsing more files would find names never used
            for name in changed_names(file, self._head):
                _add(changed, seen, name)
        changed = changed[:room_changed]
        used: list[str] = []
        for file in ordered:
            if len(used) >= limit - len(changed):
                break
            for name in used_names(file):
                _add(used, seen, name)
        used = used[: max(0, limit - len(changed))]
        shown = {f.path: f.right_lines for f in files}
        return _Wanted(changed, used, shown)

    # -- the walk ------------------------------------------------------------------------

    def _scan(self, names: Iterable[str]) -> dict[str, _Sites]:
        limits = self.limits
        probes = [_Probe(n) for n in names]
        sites = {p.name: _Sites() for p in probes}
        if not probes:
            return sites
        deadline = time.monotonic() + limits.timeout_s
        for count, path in enumerate(self._head.walk()):
            if count >= limits.max_files or time.monotonic() > deadline:
                self.partial = True
                break
            size = self._head.size(path)
            if size is not None and size > limits.max_file_bytes:
                continue
            data = self._head.read(path)
            if data is None or is_binary(data):
                continue
            present = [
                p
                for p in probes
                if p.needle in data and sites[p.name].mentions < limits.max_mentions
            ]
            if present:
                self._scan_file(path, decode_text(data), present, sites, deadline)
        return sites

    def _scan_file(
        self,
        path: str,
        text: str,
        probes: list[_Probe],
        sites: dict[str, _Sites],
        deadline: float,
    ) -> None:
        for probe in probes:
            found = sites[probe.name]
            line_no, counted, last_start = 1, 0, -1
            for mention in probe.word.finditer(text):
                start = text.rfind("\n", 0, mention.start()) + 1
                if start == last_start:
                    continue
                last_start = start
                line_no += text.count("\n", counted, start)
                counted = start
                found.mentions += 1
                if found.mentions > self.limits.max_mentions:
                    break
                end = text.find("\n", start)
                # Classified on the redacted line: nothing about a secret steers the choice.
                line = redact_text(text[start : len(text) if end < 0 else end][:1000])[0]
                remaining = max(deadline - time.monotonic(), 0.01)
                try:
                    is_definition = probe.definition.match(line, timeout=remaining) is not None
                except TimeoutError:
                    self.partial = True
                    return
                if is_definition:
                    found.definitions.append((path, line_no))
                elif probe.call.search(line) and not line.lstrip().startswith(_COMMENTS):
                    found.calls.append((path, line_no))

    # -- the text ------------------------------------------------------------------------

    def _render(self, wanted: _Wanted, sites: dict[str, _Sites], budget: int) -> str:
        limits = self.limits
        sections: list[str] = []
        used = 0
        covered: dict[str, list[tuple[int, int]]] = {}
        plan: list[tuple[str, list[tuple[str, int]], int, int]] = []
        for name in wanted.changed:
            title = f"Callers of {name} (changed by this change):"
            plan.append((title, sites[name].calls, limits.call_margin, limits.call_margin))
        for name in wanted.used:
            title = f"Definition of {name} (used by this change):"
            plan.append((title, sites[name].definitions, 0, limits.definition_lines - 1))
        for title, places, before, after in plan:
            snippets: list[str] = []
            for path, line in places:
                if line in wanted.shown.get(path, frozenset()):
                    continue  # the diff shows it already
                if any(lo <= line <= hi for lo, hi in covered.get(path, [])):
                    continue
                text = self._snippet(path, max(1, line - before), line + after)
                if text is None:
                    continue
                covered.setdefault(path, []).append((line - before, line + after))
                snippets.append(text)
                if len(snippets) >= limits.max_sites:
                    break
            if not snippets:
                continue
            section = "\n\n".join([title, *snippets])
            cost = estimate_tokens(section) + 2
            if used + cost > budget:
                sections.append("[more related code left out: the prompt's token budget]")
                break
            used += cost
            sections.append(section)
        if self.partial and sections:
            sections.append("[the search for related code stopped early: results are partial]")
        return "\n\n".join(sections)

    def _snippet(self, path: str, start: int, end: int) -> str | None:
        try:
            return self._tools.read_file(path, start, end)
        except (GitNeuralError, OSError):  # ToolError included: a vanished or odd path
            return None

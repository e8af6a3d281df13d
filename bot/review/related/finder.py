"""Related code added to the prompt up front: callers of what the change changes, and
definitions of what it uses.

One-shot reviews (the hook, ``--effort low``) cannot look around, and agentic ones save
turns when the obvious lookups are done already. For each group of files this finds, in
the reviewed (head) snapshot:

- the **callers** of functions and classes the change defines, edits or removes (a
  changed signature breaks them, and they are often in files the diff does not touch);
- the **definitions** of functions and types the added lines call or name.

Sites are classified with the tools' own definition patterns
(:func:`bot.review.tools.search.definition_pattern`) and shown through
:meth:`RepoTools.read_file`, so they are redacted and capped exactly as a tool result
would be. Sites already visible in the diff are left out.

With the snapshot's symbol index (:class:`bot.code.index.SymbolIndex`, given by the
entrance that keeps one per commit), the names and sites come from it instead of a walk:
the units the added lines are in, the names they use that the repository defines, the
definitions the parser found and the calls of each changed name. They are ranked by
their ties to the change in the reference graph (:mod:`bot.review.related.ranking`), so
the most relevant fit the token budget; ties are broken by folder distance (same folder,
then same top folder, then the rest). Without one,
all groups' names are looked up in one walk of the snapshot: a substring probe per name
on the raw bytes, then a word search in the few files that contain one. The walk visits
the files nearest to the change first (:mod:`bot.review.related.nearest_files`: same directory, then
the package around it, then the rest) and stops after ``max_scan_bytes`` of file
content: reading blobs is most of its cost, and a bound in bytes (unlike one in time)
gives the same result on a slow machine as on a fast one. A small change in a large
repository thus costs a few tens of milliseconds, and an unchanged change renders the
same prompt every time, which keeps K3's prefix cache serving it. The time limit is only
a safety net. Names are in diff order and sites in the order of the walk (nearest
first); the text is bounded in tokens.
"""

from __future__ import annotations

import posixpath
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from bot.code.grammars import family_of
from bot.code.index import SymbolIndex
from bot.domain.change import Snapshot
from bot.domain.diff import FileDiff
from bot.errors import GitNeuralError
from bot.review.related.name_probe import NameProbe
from bot.review.related.nearest_files import nearest_files
from bot.review.related.ranking import file_ranks, used_by_added
from bot.review.related.symbols import add_name, changed_names, units_touched, used_names
from bot.review.secrets.redaction import redact_text
from bot.review.token_estimate import estimate_tokens
from bot.review.tools.search import is_binary
from bot.review.tools.toolbox import RepoTools
from bot.text import decode_text

__all__ = ["RelatedFinder", "RelatedLimits", "changed_names", "used_names"]


@dataclass(frozen=True)
class RelatedLimits:
    #: Tokens of related code per prompt (less when the files leave less room).
    max_tokens: int = 8_000
    #: Names looked up for the whole change (shared by its parts): changed ones first.
    max_names: int = 24
    #: The same with the symbol index: its names are all defined in the repository, and
    #: looking one up is a dictionary access, so the token budget decides what is shown.
    max_indexed_names: int = 96
    #: Callers, or definitions, shown per name.
    max_sites: int = 3
    #: Lines shown of a definition (its signature and docstring, usually).
    definition_lines: int = 12
    #: Lines shown above and below a call.
    call_margin: int = 2
    #: File content read by the one walk over the snapshot, nearest files first: the
    #: bound that keeps a small change in a large repository cheap, and deterministic.
    #: Each file counts ``file_cost_bytes`` more than its size.
    max_scan_bytes: int = 2_000_000
    #: Looking a blob up costs about as much as scanning this many bytes of it: a tree of
    #: many tiny files is not read file by file for longer than a tree of large ones.
    file_cost_bytes: int = 4_096
    #: Wall time of the walk: a safety net only (a slow disk or a huge name count); the
    #: byte bound above normally ends the walk first.
    timeout_s: float = 3.0
    #: Wall time of the whole stage with the symbol index (PageRank, names and sites,
    #: the text): each part stops at its share of it, keeping what it found, and the text
    #: says the results are partial. A name used by 20,000 files made this stage take
    #: 130 s before (issue 31).
    deadline_s: float = 10.0
    max_files: int = 20_000
    max_file_bytes: int = 2_000_000
    #: Word matches examined per name (a name used everywhere stops early).
    max_mentions: int = 400
    #: Below this many tokens of room a prompt gets no related code.
    min_tokens: int = 400


_COMMENTS = ("#", "//", "/*", "*", "--", ";")


@dataclass
class _Sites:
    definitions: list[tuple[str, int]] = field(default_factory=list)
    calls: list[tuple[str, int]] = field(default_factory=list)
    mentions: int = 0
    #: The last line of a definition, where the parser knows it: a three-line getter is
    #: shown in three lines, not ``definition_lines``.
    ends: dict[tuple[str, int], int] = field(default_factory=dict)


@dataclass
class _Section:
    """One name's part of the text: its sites, best first, and those chosen."""

    title: str
    places: list[tuple[str, int]]
    before: int
    after: int
    ends: dict[tuple[str, int], int] = field(default_factory=dict)
    snippets: list[str] = field(default_factory=list)
    #: The next site to consider.
    next: int = 0


@dataclass
class _Wanted:
    """One prompt's names, and the diff lines it already shows."""

    changed: list[str]
    used: list[str]
    shown: dict[str, frozenset[int]]


def _called(index: SymbolIndex, name: str) -> bool:
    return index.is_called(name)


class RelatedFinder:
    """Related code for one or more groups of files of a change, from one walk."""

    def __init__(
        self,
        head: Snapshot,
        limits: RelatedLimits | None = None,
        *,
        index: SymbolIndex | None = None,
    ) -> None:
        self._head = head
        self.limits = limits or RelatedLimits()
        self._tools = RepoTools(head, index=index)
        self._index = index
        #: Set when the walk stopped early (byte, file or time bound): results are partial.
        self.partial = False
        self._deadline = self._end = float("inf")

    def contexts(self, groups: Sequence[Sequence[FileDiff]], rooms: Sequence[int]) -> list[str]:
        """The related-code text for each group within its room in tokens ("" if none).

        ``max_names`` bounds the lookups of the whole change, shared by the groups with
        room: a change in 40 parts costs no more searching than one prompt.
        """
        served = [i for i, room in enumerate(rooms) if room >= self.limits.min_tokens]
        changed_paths = [f.path for i in served for f in groups[i]]
        index = self._index
        started, seconds = time.monotonic(), self.limits.deadline_s
        # The ranking gets 40% of the stage's time, the names and sites up to 80%, and
        # the text (reading each snippet) the rest: the stage ends by its deadline.
        ranking = started + seconds * 0.4
        self._deadline = started + seconds * 0.8
        self._end = started + seconds
        ranks = file_ranks(index, changed_paths, deadline=ranking) if index is not None else {}
        if time.monotonic() > ranking:
            self.partial = True
        names = self.limits.max_names if index is None else self.limits.max_indexed_names
        share = max(1, names // max(1, len(served)))
        wanted = {i: self._wanted(groups[i], share, ranks) for i in served}
        changed = {n for w in wanted.values() for n in w.changed}
        used = {n for w in wanted.values() for n in w.used}
        probes = [
            NameProbe(n, calls=n in changed, definitions=n in used) for n in sorted(changed | used)
        ]
        if index is not None:
            sites = self._from_index(index, probes, changed_paths, ranks)
        else:
            sites = self._scan(probes, changed_paths)
        return [
            self._render(wanted[i], sites, min(room, self.limits.max_tokens)) if i in wanted else ""
            for i, room in enumerate(rooms)
        ]

    def _wanted(self, files: Sequence[FileDiff], limit: int, ranks: dict[str, float]) -> _Wanted:
        """Up to ``limit`` names: changed ones first (a third is kept for used ones).

        With the index, the changed names are the units the parser finds around the added
        lines as well, kept when something calls them, and the used names are those the
        repository defines, ranked (:func:`used_by_added`)."""
        index = self._index
        ordered = sorted(files, key=lambda f: f.path)
        room_changed = max(1, limit - limit // 3)
        changed: list[str] = []
        seen: set[str] = set()
        for file in ordered:
            if len(changed) >= room_changed:
                break  # reading and parsing more files would find names never used
            if time.monotonic() > self._deadline:
                self.partial = True
                break
            for name in changed_names(file, self._head):
                if index is None or _called(index, name):
                    add_name(changed, seen, name)
            # The parser's units are real definitions: no filter of common words (a Go
            # ``Error`` method is as much changed as any other).
            if index is None:
                continue
            for name in units_touched(file, index):
                if name not in seen and _called(index, name):
                    seen.add(name)
                    changed.append(name)
        changed = changed[:room_changed]
        used: list[str] = []
        if index is not None:
            # A changed function the added lines also call keeps both parts: its
            # definition is outside the diff as often as its callers are.
            used = used_by_added(index, ordered, ranks)
        for file in ordered if index is None else ():
            if len(used) >= limit - len(changed):
                break
            for name in used_names(file):
                add_name(used, seen, name)
        used = used[: max(0, limit - len(changed))]
        shown = {f.path: f.right_lines for f in files}
        return _Wanted(changed, used, shown)

    # -- the index -----------------------------------------------------------------------

    def _from_index(
        self,
        index: SymbolIndex,
        probes: list[NameProbe],
        near: Sequence[str],
        ranks: dict[str, float],
    ) -> dict[str, _Sites]:
        folders = {posixpath.dirname(p) for p in near}
        tops = {p.split("/", 1)[0] for p in near if "/" in p}

        # A path's part of the order, once per path: a name may have 20,000 call sites.
        far: dict[str, tuple[float, int]] = {}

        def distance(site: tuple[str, int]) -> tuple[float, int, str, int]:
            path = site[0]
            known = far.get(path)
            if known is None:
                if posixpath.dirname(path) in folders:
                    known = far[path] = (-ranks.get(path, 0.0), 0)
                else:
                    top = 1 if path.split("/", 1)[0] in tops else 2
                    known = far[path] = (-ranks.get(path, 0.0), top)
            return *known, *site

        limit = self.limits.max_mentions
        families = {family_of(p) for p in near}
        sites = {p.name: _Sites() for p in probes}
        for probe in probes:
            if time.monotonic() > self._deadline:
                self.partial = True
                break
            found = sites[probe.name]
            defined = [d for d in index.definitions(probe.name) if family_of(d.path) in families]
            if probe.definitions:
                places = [(d.path, d.line) for d in defined]
                found.definitions = sorted(places, key=distance)[:limit]
                # One-line ends are names without a unit (a constant): shown as before.
                found.ends = {(d.path, d.line): d.end for d in defined if d.end > d.line}
            if probe.calls:
                # Calls from other files first: those in the changed function's own file
                # are the ones a reader of the diff is most likely to see anyway.
                home = {d.path for d in defined}
                paths, rows = index.reference_rows(probe.name)
                calls = {
                    (path, row[2])
                    for path, row in zip(paths, rows, strict=True)
                    if row[1] == "call" and family_of(path) in families
                }
                found.calls = sorted(calls, key=lambda s: (s[0] in home, *distance(s)))[:limit]
        return sites

    # -- the walk ------------------------------------------------------------------------

    def _scan(self, probes: list[NameProbe], near: Sequence[str]) -> dict[str, _Sites]:
        limits = self.limits
        sites = {p.name: _Sites() for p in probes}
        if not probes:
            return sites
        deadline = time.monotonic() + limits.timeout_s
        scanned = 0
        for count, (path, size) in enumerate(nearest_files(self._head, near)):
            if (
                count >= limits.max_files
                or scanned >= limits.max_scan_bytes
                or time.monotonic() > deadline
            ):
                self.partial = True
                break
            if size is not None and size > limits.max_file_bytes:
                continue
            data = self._head.read(path)
            if data is None:
                continue
            scanned += len(data) + limits.file_cost_bytes
            if is_binary(data):
                continue
            present = [
                p
                for p in probes
                if sites[p.name].mentions < limits.max_mentions and p.needle in data
            ]
            if present:
                self._scan_file(path, decode_text(data), present, sites, deadline)
        return sites

    def _scan_file(
        self,
        path: str,
        text: str,
        probes: list[NameProbe],
        sites: dict[str, _Sites],
        deadline: float,
    ) -> None:
        for probe in probes:
            found = sites[probe.name]
            line_no, counted, last_start = 1, 0, -1
            for at in probe.mentions(text):
                start = text.rfind("\n", 0, at) + 1
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
                call = probe.calls and probe.call.search(line) is not None
                if not call and not probe.definitions:
                    continue  # neither a call nor a wanted definition: no need to classify
                remaining = max(deadline - time.monotonic(), 0.01)
                try:
                    is_definition = probe.definition.match(line, timeout=remaining) is not None
                except TimeoutError:
                    self.partial = True
                    return
                if is_definition:
                    found.definitions.append((path, line_no))
                elif call and not line.lstrip().startswith(_COMMENTS):
                    found.calls.append((path, line_no))

    # -- the text ------------------------------------------------------------------------

    def _render(self, wanted: _Wanted, sites: dict[str, _Sites], budget: int) -> str:
        limits = self.limits
        plan: list[_Section] = []
        for name in wanted.changed:
            title = f"Callers of {name} (changed by this change):"
            plan.append(_Section(title, sites[name].calls, limits.call_margin, limits.call_margin))
        for name in wanted.used:
            title = f"Definition of {name} (used by this change):"
            named = sites[name]
            plan.append(
                _Section(title, named.definitions, 0, limits.definition_lines - 1, named.ends)
            )
        covered: dict[str, list[tuple[int, int]]] = {}
        used = 0
        left_out = False
        # Breadth first: the best site of every name before a second site of any, so a
        # tight budget shows one definition of each of many names rather than three of a
        # few (the sites of a name come best first).
        for turn in range(limits.max_sites):
            for section in plan:
                if turn > 0 and not section.snippets:
                    continue  # its first site did not fit, or it has none
                if time.monotonic() > self._end:
                    self.partial = True
                    break
                found = self._next_site(section, wanted, covered)
                if found is None:
                    continue
                text, path, span = found
                cost = estimate_tokens(text) + 2
                if not section.snippets:
                    cost += estimate_tokens(section.title) + 2
                if used + cost > budget:
                    left_out = True
                    continue
                used += cost
                section.snippets.append(text)
                covered.setdefault(path, []).append(span)
        sections = ["\n\n".join([s.title, *s.snippets]) for s in plan if s.snippets]
        if left_out:
            sections.append("[more related code left out: the prompt's token budget]")
        if self.partial and sections:
            sections.append("[the search for related code stopped early: results are partial]")
        return "\n\n".join(sections)

    def _next_site(
        self, section: _Section, wanted: _Wanted, covered: dict[str, list[tuple[int, int]]]
    ) -> tuple[str, str, tuple[int, int]] | None:
        """The next of ``section``'s sites worth showing: its text, path and lines."""
        while section.next < len(section.places):
            path, line = section.places[section.next]
            section.next += 1
            if line in wanted.shown.get(path, frozenset()):
                continue  # the diff shows it already
            if any(lo <= line <= hi for lo, hi in covered.get(path, [])):
                continue
            last = section.ends.get((path, line), line + section.after)
            span = (line - section.before, max(line, min(line + section.after, last)))
            text = self._snippet(path, max(1, span[0]), span[1])
            if text is not None:
                return text, path, span
        return None

    def _snippet(self, path: str, start: int, end: int) -> str | None:
        try:
            return self._tools.read_file(path, start, end)
        except (GitNeuralError, OSError):  # ToolError included: a vanished or odd path
            return None

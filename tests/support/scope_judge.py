"""Enclosing units judged against Universal Ctags, on the shared real repositories.

A probe is the middle line of a ctags definition (a function, method, class …, with its
end line); ctags' answer is the innermost of its definitions holding that line.
GitNeural's answer is :func:`bot.review.context.enclosing.enclosing_units` for that line,
uncut. They agree when GitNeural's unit is ctags' one or nested inside it (a closure in
the function): its name line within ctags' definition and its end no later. A unit
around ctags' one (the class for a method) or none at all is a miss.
"""

from __future__ import annotations

import random
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from bot.review.context.enclosing import enclosing_units
from bot.text import decode_text, printable
from tests.support.real_repos import Tag, checkout, ctags_scopes

#: Language → (repository, ctags' language name, ctags' kinds of scope).
JUDGED: dict[str, tuple[str, str, frozenset[str]]] = {
    "go": ("gin", "Go", frozenset({"func", "struct", "interface"})),
    "java": ("jsoup", "Java", frozenset({"method", "class", "interface", "enum", "annotation"})),
    "ruby": ("sinatra", "Ruby", frozenset({"method", "singletonMethod", "class", "module"})),
    "c": ("cJSON", "C", frozenset({"function", "struct", "union", "enum"})),
}


@dataclass
class Agreement:
    probes: int = 0
    agreed: int = 0
    misses: list[str] = field(default_factory=list)

    @property
    def share(self) -> float:
        return self.agreed / self.probes if self.probes else 0.0


def _innermost(tags: list[Tag], line: int) -> Tag:
    holding = [t for t in tags if t.line <= line <= t.end]
    return min(holding, key=lambda t: (t.end - t.line, -t.line))


def judge(language: str, sample: int | None = None, seed: int = 22) -> Agreement:
    """Agreement on ``sample`` probes drawn at random (all probes when ``None``)."""
    repository, ctags_language, kinds = JUDGED[language]
    root = checkout(repository)
    tags = ctags_scopes(root, ctags_language, kinds)
    by_path: dict[str, list[Tag]] = defaultdict(list)
    for tag in tags:
        by_path[tag.path].append(tag)
    probes = sorted({(t.path, (t.line + t.end) // 2) for t in tags})
    if sample is not None and sample < len(probes):
        probes = sorted(random.Random(seed).sample(probes, sample))
    result = Agreement()
    lines_by_path: dict[str, list[int]] = defaultdict(list)
    for path, line in probes:
        lines_by_path[path].append(line)
    for path, lines in lines_by_path.items():
        text = printable(decode_text((Path(root) / path).read_bytes()))
        src_lines = [ln.removesuffix("\r") for ln in text.split("\n")]
        # One call per file, as a review makes: each line's unit is the smallest of the
        # innermost units found that holds it.
        units = enclosing_units(path, src_lines, lines, max_lines=1 << 30)
        for line in lines:
            _count(result, path, line, _innermost(by_path[path], line), units)
    return result


def _count(
    result: Agreement, path: str, line: int, expected: Tag, units: list[tuple[int, int, int]]
) -> None:
    holding = [u for u in units if u[0] <= line <= u[1]]
    unit = min(holding, key=lambda u: u[1] - u[0]) if holding else None
    result.probes += 1
    if unit and expected.line <= unit[2] <= expected.end and unit[1] <= expected.end:
        result.agreed += 1
    else:
        got = f"{unit[0]}-{unit[1]} (name line {unit[2]})" if unit else "none"
        result.misses.append(
            f"{path}:{line}: ctags {expected.kind} {expected.name} "
            f"{expected.line}-{expected.end}, GitNeural {got}"
        )

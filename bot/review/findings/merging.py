"""Findings in order, and duplicates merged: the last steps of the findings check.

Two findings are duplicates when they share a fingerprint (same file, same code at the
anchor, same title) or overlap on one side with similar titles. The most severe of a group
survives, its note naming the others; the secret scan's findings are never merged into
another finding.
"""

from __future__ import annotations

from collections import defaultdict

from bot.domain.results import Finding, Placement
from bot.review.findings.fingerprint import (
    SECRET_SOURCE,
    normalise_title,
    secret_fingerprint,
    similar_titles,
)


def add_note(finding: Finding, note: str) -> None:
    finding.note = f"{finding.note}; {note}" if finding.note else note


def order_key(finding: Finding) -> tuple[int, bool, str, int, int]:
    """Most severe first; then inline before summary, then path and line."""
    return (
        -finding.severity.rank,
        finding.placement != Placement.INLINE,
        finding.path,
        finding.start_line,
        finding.end_line,
    )


def fingerprint_secrets(findings: list[Finding]) -> None:
    groups: defaultdict[tuple[str, str], list[Finding]] = defaultdict(list)
    for finding in findings:
        # The secret scan may name its findings itself (it knows which secret it saw).
        if finding.source == SECRET_SOURCE and not finding.fingerprint:
            groups[(finding.path, normalise_title(finding.title))].append(finding)
    for (path, title), group in groups.items():
        group.sort(key=lambda f: (f.start_line, f.end_line))
        for rank, finding in enumerate(group):
            finding.fingerprint = secret_fingerprint(path, title, rank)


def _duplicates(a: Finding, b: Finding) -> bool:
    if a.fingerprint and a.fingerprint == b.fingerprint:
        return True
    return (
        a.path == b.path
        and a.side == b.side
        and a.start_line <= b.end_line
        and b.start_line <= a.end_line
        and similar_titles(a.title, b.title)
    )


def merge_duplicates(findings: list[Finding]) -> list[Finding]:
    """One finding per duplicate group; the most severe survives (a secret always)."""
    secrets = [f for f in findings if f.source == SECRET_SOURCE]
    others = sorted(
        (f for f in findings if f.source != SECRET_SOURCE),
        key=lambda f: (*order_key(f)[:2], f.suggestion is None),
    )
    survivors: list[Finding] = list(secrets)
    merged: dict[int, list[Finding]] = defaultdict(list)
    for finding in others:
        into = next((s for s in survivors if _duplicates(s, finding)), None)
        if into is None:
            survivors.append(finding)
            continue
        merged[id(into)].append(finding)
        if finding.severity.rank > into.severity.rank:
            into.severity = finding.severity
    for survivor in survivors:
        group = merged.get(id(survivor))
        if group:
            what = ", ".join(f"{f.title!r} ({f.severity}, line {f.start_line})" for f in group)
            plural = "s" if len(group) > 1 else ""
            add_note(survivor, f"merged {len(group)} duplicate{plural}: {what}")
    return survivors

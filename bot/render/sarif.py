"""SARIF 2.1.0 output, read by GitHub code scanning and by editors.

One run, tool driver "GitNeural", one rule per finding category (``ruleId`` is the
category as a slug). Levels: critical and major -> ``error``, minor -> ``warning``,
nit -> ``note``. Each result has a physical location, our fingerprint under
``partialFingerprints["gitneural/v1"]``, and, for a suggestion, a ``fix`` whose
replacement deletes the whole lines ``start..end`` (a region without columns covers
whole lines, their line breaks excluded) and inserts the new lines joined by ``\\n``.

A finding on the old side of the diff (``side: LEFT``) is located in the old file (its
old path, when a ``Change`` is given to map renames) and flagged with
``properties.oldFile = true``: its line numbers are not those of the new file.

The run's properties say what the review did not show: ``dropped`` (how many findings the
findings check could not keep), ``droppedFindings`` (each with its reason) and
``evidenceNotFound`` (how many of them quoted code that is not there).
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import quote

from bot.domain.change import Change
from bot.domain.results import Finding, ReviewResult, Severity
from bot.review import find_file, replacement_lines
from bot.text import printable

SARIF_SCHEMA = (
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
)
FINGERPRINT_KEY = "gitneural/v1"
LEVELS = {
    Severity.CRITICAL: "error",
    Severity.MAJOR: "error",
    Severity.MINOR: "warning",
    Severity.NIT: "note",
}


def rule_id(category: str) -> str:
    """``"Error handling"`` -> ``"error-handling"``; ``"general"`` when empty."""
    slug = re.sub(r"[^a-z0-9]+", "-", printable(category).lower()).strip("-")
    return slug or "general"


def _uri(path: str) -> str:
    return quote(printable(path), safe="/")


def _location(finding: Finding, change: Change | None) -> dict[str, Any]:
    path = finding.path
    if finding.side == "LEFT" and change is not None:
        file = find_file(change.diff, finding.path)
        path = file.old_path if file is not None else path
    return {
        "physicalLocation": {
            "artifactLocation": {"uri": _uri(path)},
            "region": {"startLine": finding.start_line, "endLine": finding.end_line},
        }
    }


def _fix(finding: Finding) -> dict[str, Any]:
    assert finding.suggestion is not None
    return {
        "description": {"text": "Apply GitNeural's suggestion"},
        "artifactChanges": [
            {
                "artifactLocation": {"uri": _uri(finding.path)},
                "replacements": [
                    {
                        "deletedRegion": {
                            "startLine": finding.start_line,
                            "endLine": finding.end_line,
                        },
                        "insertedContent": {
                            "text": printable("\n".join(replacement_lines(finding.suggestion)))
                        },
                    }
                ],
            }
        ],
    }


def _result(finding: Finding, index: dict[str, int], change: Change | None) -> dict[str, Any]:
    rule = rule_id(finding.category)
    message = finding.title if not finding.body.strip() else f"{finding.title}\n\n{finding.body}"
    properties: dict[str, Any] = {
        "severity": str(finding.severity),
        "category": printable(finding.category),
        "side": finding.side,
        "placement": str(finding.placement),
        "source": finding.source,
    }
    if finding.side == "LEFT":
        properties["oldFile"] = True
    if finding.note:
        properties["note"] = printable(finding.note)
    result: dict[str, Any] = {
        "ruleId": rule,
        "ruleIndex": index[rule],
        "level": LEVELS[finding.severity],
        "message": {"text": printable(message)},
        "locations": [_location(finding, change)],
        "properties": properties,
    }
    if finding.fingerprint:
        result["partialFingerprints"] = {FINGERPRINT_KEY: finding.fingerprint}
    if finding.suggestion is not None and finding.side == "RIGHT":
        result["fixes"] = [_fix(finding)]
    return result


def _dropped(finding: Finding, reason: str) -> dict[str, Any]:
    return {
        "path": printable(finding.path),
        "startLine": finding.start_line,
        "side": finding.side,
        "title": printable(finding.title),
        "reason": printable(reason),
    }


def render_sarif(
    result: ReviewResult, *, tool_version: str, change: Change | None = None
) -> dict[str, Any]:
    """The review as a SARIF 2.1.0 log (serialise with ``json.dumps``)."""
    rules: list[dict[str, Any]] = []
    index: dict[str, int] = {}
    for finding in result.findings:
        rule = rule_id(finding.category)
        if rule not in index:
            index[rule] = len(rules)
            name = printable(finding.category) or "general"
            rules.append(
                {
                    "id": rule,
                    "name": name,
                    "shortDescription": {"text": f"GitNeural review: {name}"},
                }
            )
    run_properties = {
        "summary": printable(result.summary),
        "model": printable(result.model),
        "effort": printable(result.effort),
        "durationSeconds": round(result.duration_s, 3),
        "usage": result.usage.as_dict(),
        "reviewed": [printable(p) for p in result.coverage.reviewed],
        "skipped": [
            {"path": printable(s.path), "reason": printable(s.reason)}
            for s in result.coverage.skipped
        ],
        "dropped": len(result.dropped),
        "droppedFindings": [_dropped(f, reason) for f, reason in result.dropped],
        "evidenceNotFound": result.unquoted(),
    }
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "GitNeural",
                        "version": tool_version,
                        "rules": rules,
                    }
                },
                "results": [_result(f, index, change) for f in result.findings],
                "columnKind": "unicodeCodePoints",
                "properties": run_properties,
            }
        ],
    }

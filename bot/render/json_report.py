"""The JSON report (``gitneural review --format json``), a stable schema for scripts.

Schema, version 1 (new keys may be added within a version; none is removed or renamed)::

    {
      "version": 1,
      "summary": str,                 # the model's summary of the change
      "model": str,                   # e.g. "kimi-k3"
      "effort": str,                  # "low" | "high" | "max" ("" if unknown)
      "duration_s": float,            # wall time of the review, seconds
      "usage": {"prompt_tokens": int, "completion_tokens": int,
                "cached_tokens": int, "requests": int},
      "coverage": {"reviewed": [str],                    # paths
                   "skipped": [{"path": str, "reason": str}]},
      "findings": [Finding],          # kept findings, most severe first
      "dropped": [{"finding": Finding, "reason": str}],
      "evidence_not_found": int,      # how many were dropped: quoted code not found
      "refuted": int,                 # how many were dropped: refuted ([review] verify)
      "no_majority": int,             # how many too few passes reported ([review] passes)
      "walkthrough": Walkthrough | null,    # what the change is ([walkthrough] enabled)
      "route": Route | null           # the route the change took, decided before the model
    }

    Route = {
      "name": "formatting" | "docs" | "sensitive" | "team" | "configured",
      "effort": "low" | "high" | "max" | "skip",   # skip: no model request at all
      "endpoint": "main" | "routine", # KIMI_* or KIMI_ROUTINE_*
      "reason": str                   # why, as the summary and the check run say it
    }

    Walkthrough = {
      "summary": str,                 # what the change does and why (or since `since`)
      "files": [{"path": str, "note": str}],   # one line per file or group of files
      "focus": [str],                 # where a reviewer should look hardest
      "diagram": str | null,          # a checked Mermaid sequenceDiagram, without fences
      "issues": [{"number": int, "verdict": "yes" | "partly" | "no", "why": str}],
      "since": str | null,            # the last reviewed head, for a later review's delta
      "diagram_dropped": str,         # why a diagram was left out ("" if none was)
      "images": [{"what": str,        # an image the review had: where it came from
                  "not_sent": str}]   # why K3 did not see it ("" if it did)
    }

    Finding = {
      "path": str,                    # path in the new tree (old path only if deleted)
      "start_line": int, "end_line": int,   # 1-based, inclusive
      "side": "RIGHT" | "LEFT",       # new file / old file line numbers
      "severity": "critical" | "major" | "minor" | "nit",
      "category": str, "title": str, "body": str,
      "suggestion": str | null,       # replacement for lines start..end of the new file
      "placement": "inline" | "summary",    # on the diff, or outside it
      "note": str,                    # what the findings check changed ("" if nothing)
      "fingerprint": str,             # stable id across reviews
      "source": str,                  # "model" | "secret-scan"
      "evidence": str | null          # the code the model quoted (null: none)
    }

Text is UTF-8; bytes that were not UTF-8 in the repository appear as U+FFFD.
"""

from __future__ import annotations

import json
from typing import Any

from bot.domain.results import Coverage, Finding, Placement, ReviewResult, Severity, SkippedFile
from bot.domain.route import Route
from bot.domain.walkthrough import FileNote, ImageNote, IssueVerdict, Walkthrough
from bot.errors import UsageError
from bot.text import printable
from bot.usage import Usage

VERSION = 1


def _clean(value: Any) -> Any:
    """Undecodable bytes (kept as surrogates) are not valid in JSON text: use U+FFFD."""
    if isinstance(value, str):
        return printable(value)
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_clean(v) for v in value]
    return value


def report_dict(result: ReviewResult) -> dict[str, Any]:
    """The report as plain data (see the module docstring for the schema)."""
    return {
        "version": VERSION,
        "summary": printable(result.summary),
        "model": printable(result.model),
        "effort": printable(result.effort),
        "duration_s": round(result.duration_s, 3),
        "usage": result.usage.as_dict(),
        "coverage": _clean(result.coverage.as_dict()),
        "findings": [_clean(f.as_dict()) for f in result.findings],
        "dropped": [
            {"finding": _clean(f.as_dict()), "reason": printable(reason)}
            for f, reason in result.dropped
        ],
        "evidence_not_found": result.unquoted(),
        "refuted": result.refuted(),
        "no_majority": result.unmajorities(),
        "walkthrough": _clean(result.walkthrough.as_dict()) if result.walkthrough else None,
        "route": _clean(result.route.as_dict()) if result.route else None,
    }


def render_json(result: ReviewResult) -> str:
    """The report as indented JSON text, ending with a newline."""
    return json.dumps(report_dict(result), indent=2, ensure_ascii=False) + "\n"


def _finding(data: dict[str, Any]) -> Finding:
    return Finding(
        path=data["path"],
        start_line=int(data["start_line"]),
        end_line=int(data["end_line"]),
        side="LEFT" if data["side"] == "LEFT" else "RIGHT",
        severity=Severity(data["severity"]),
        category=data["category"],
        title=data["title"],
        body=data["body"],
        suggestion=data.get("suggestion"),
        placement=Placement(data.get("placement", "inline")),
        note=data.get("note", ""),
        fingerprint=data.get("fingerprint", ""),
        source=data.get("source", "model"),
        evidence=data.get("evidence"),
    )


def _walkthrough(data: dict[str, Any] | None) -> Walkthrough | None:
    if data is None:
        return None
    return Walkthrough(
        summary=data["summary"],
        files=[FileNote(f["path"], f["note"]) for f in data["files"]],
        focus=list(data["focus"]),
        diagram=data.get("diagram"),
        issues=[IssueVerdict(i["number"], i["verdict"], i["why"]) for i in data["issues"]],
        since=data.get("since"),
        diagram_dropped=data.get("diagram_dropped", ""),
        images=[ImageNote(i["what"], i["not_sent"]) for i in data.get("images", [])],
    )


def _route(data: dict[str, Any] | None) -> Route | None:
    if data is None:
        return None
    effort = data["effort"]
    return Route(
        name=data["name"],
        effort=None if effort == "skip" else effort,
        endpoint=data["endpoint"],
        reason=data["reason"],
    )


def load_json(text: str) -> ReviewResult:
    """Read a report written by :func:`render_json` (for caches and tools)."""
    try:
        data = json.loads(text)
        if data.get("version") != VERSION:
            raise UsageError(
                f"JSON report version {data.get('version')!r} is not {VERSION}: "
                "write it again with this GitNeural"
            )
        coverage = Coverage(
            list(data["coverage"]["reviewed"]),
            [SkippedFile(s["path"], s["reason"]) for s in data["coverage"]["skipped"]],
        )
        return ReviewResult(
            summary=data["summary"],
            findings=[_finding(f) for f in data["findings"]],
            coverage=coverage,
            usage=Usage(**{k: int(v) for k, v in data["usage"].items()}),
            model=data["model"],
            effort=data["effort"],
            duration_s=float(data["duration_s"]),
            dropped=[(_finding(d["finding"]), d["reason"]) for d in data["dropped"]],
            walkthrough=_walkthrough(data.get("walkthrough")),
            route=_route(data.get("route")),
        )
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise UsageError(
            f"not a GitNeural JSON report ({type(exc).__name__}: {exc}): "
            "pass the output of `gitneural review --format json`"
        ) from None

"""A replay's report: per change (head, title, findings and the golden item each matches,
golden items and whether found, tokens, seconds) and totals, as one JSON-ready dict, and
that dict as a terminal table and as Markdown."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from bot.replay.items import GoldenItem
from bot.replay.run import Outcome


def _golden_dict(item: GoldenItem, found: bool) -> dict[str, Any]:
    return {
        "path": item.path,
        "lines": list(item.lines) if item.lines else None,
        "text": item.text,
        "severity": item.severity,
        "source": item.source,
        "fix_sha": item.fix_sha,
        "fix_subject": item.fix_subject,
        "found": found,
    }


def change_dict(o: Outcome) -> dict[str, Any]:
    findings = []
    for n, f in enumerate(o.findings):
        matches = [m.golden for m in o.judged.matches if m.finding == n]
        findings.append(
            {
                "path": f.path,
                "start_line": f.start_line,
                "end_line": f.end_line,
                "severity": str(f.severity),
                "title": f.title,
                "matches": matches,
                "reasons": [m.reason for m in o.judged.matches if m.finding == n and m.reason],
            }
        )
    return {
        "change": o.past.key,
        "commit": o.past.commit,
        "head": o.past.head,
        "title": o.past.title,
        "findings": findings,
        "golden": [_golden_dict(g, o.judged.found(n)) for n, g in enumerate(o.golden)],
        "estimated_prompt_tokens": o.estimated_tokens,
        "prompt_tokens": o.usage.prompt_tokens,
        "cached_tokens": o.usage.cached_tokens,
        "completion_tokens": o.usage.completion_tokens,
        "seconds": round(o.seconds, 3),
        "kept_from_earlier_run": o.from_cache,
        # The model judge's answer as it came (None with the location judge).
        "judge_answer": o.judged.answer or None,
    }


def _ratio(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


def totals(changes: Sequence[dict[str, Any]]) -> dict[str, Any]:
    findings = sum(len(c["findings"]) for c in changes)
    golden = sum(len(c["golden"]) for c in changes)
    found = sum(1 for c in changes for g in c["golden"] if g["found"])
    matched = sum(1 for c in changes for f in c["findings"] if f["matches"])
    return {
        "changes": len(changes),
        "findings": findings,
        "golden": golden,
        "golden_found": found,
        "recall": _ratio(found, golden),
        "findings_matched": matched,
        "precision": _ratio(matched, findings),
        "prompt_tokens": sum(c["prompt_tokens"] for c in changes),
        "cached_tokens": sum(c["cached_tokens"] for c in changes),
        "completion_tokens": sum(c["completion_tokens"] for c in changes),
        "seconds": round(sum(c["seconds"] for c in changes), 3),
    }


def build_report(
    outcomes: Sequence[Outcome], *, settings: str, dry_run: bool = False, judge: str = "location"
) -> dict[str, Any]:
    changes = [change_dict(o) for o in outcomes]
    return {
        "settings": settings,
        "dry_run": dry_run,
        "judge": judge,
        "changes": changes,
        "totals": totals(changes),
    }


def figure(part: int, whole: int) -> str:
    """``1/2 (50%)``, or ``-`` when there is nothing to count."""
    return f"{part}/{whole} ({100 * part / whole:.0f}%)" if whole else "-"


def recall_text(t: dict[str, Any]) -> str:
    return figure(t["golden_found"], t["golden"])


def precision_text(t: dict[str, Any]) -> str:
    return figure(t["findings_matched"], t["findings"])


def _rows(report: dict[str, Any]) -> list[list[str]]:
    rows = []
    for c in report["changes"]:
        found = sum(1 for g in c["golden"] if g["found"])
        matched = sum(1 for f in c["findings"] if f["matches"])
        rows.append(
            [
                c["head"][:10],
                c["title"][:48],
                f"{matched}/{len(c['findings'])}",
                f"{found}/{len(c['golden'])}",
                f"{c['prompt_tokens'] or c['estimated_prompt_tokens']:,}",
                f"{c['seconds']:.1f}",
            ]
        )
    return rows


HEADERS = ["head", "title", "matched/findings", "found/golden", "tokens", "seconds"]


def _table(headers: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in [headers, *rows]) for i in range(len(headers))]
    return [
        "  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True))
        for r in [headers, *rows]
    ]


def render_text(report: dict[str, Any]) -> str:
    t = report["totals"]
    lines = _table(HEADERS, _rows(report))
    lines.append("")
    lines.append(
        f"{t['changes']} changes, {t['findings']} findings, {t['golden']} golden items. "
        f"Recall {recall_text(t)}; precision {precision_text(t)}."
    )
    lines.append(
        f"Tokens: {t['prompt_tokens']:,} prompt ({t['cached_tokens']:,} cached), "
        f"{t['completion_tokens']:,} completion; {t['seconds']:.1f}s with the model."
    )
    if report["dry_run"]:
        lines.append("Dry run: no model was asked, so there are no findings.")
    elif report.get("judge") == "model":
        lines.append("Judged by the model, once per change: its reasons are in the JSON report.")
    return "\n".join(lines)


def _md_escape(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render_markdown(report: dict[str, Any]) -> str:
    t = report["totals"]
    out = [
        "# GitNeural replay",
        "",
        f"Settings: {_md_escape(report['settings'])}.",
        "",
        f"- Recall: {recall_text(t)} of the golden items were found.",
        f"- Precision: {precision_text(t)} of the findings match a golden item.",
        f"- Tokens: {t['prompt_tokens']:,} prompt ({t['cached_tokens']:,} cached), "
        f"{t['completion_tokens']:,} completion; {t['seconds']:.1f} s.",
        "",
        "| " + " | ".join(HEADERS) + " |",
        "|" + "---|" * len(HEADERS),
    ]
    out += ["| " + " | ".join(_md_escape(c) for c in row) + " |" for row in _rows(report)]
    for c in report["changes"]:
        out += ["", f"## `{c['head'][:10]}` {_md_escape(c['title'])}", ""]
        for f in c["findings"]:
            match = ", ".join(f"golden {m + 1}" for m in f["matches"]) or "no golden item"
            why = "".join(f"; {_md_escape(r)}" for r in f.get("reasons", []))
            out.append(
                f"- {f['severity']} `{f['path']}:{f['start_line']}` "
                f"{_md_escape(f['title'])} ({match}{why})"
            )
        for n, g in enumerate(c["golden"], 1):
            where = f"`{g['path']}:{g['lines'][0]}`" if g["lines"] else "(no line)"
            state = "found" if g["found"] else "missed"
            out.append(f"- golden {n}: {where} {_md_escape(g['text'] or '')} — {state}")
        if not c["findings"] and not c["golden"]:
            out.append("- no findings, no golden items")
    return "\n".join(out) + "\n"


def render_compare(named: Sequence[tuple[str, dict[str, Any]]]) -> str:
    """The same changes under several settings files, side by side in one table: findings
    per change, then recall, precision and tokens."""
    headers = ["change", *[name for name, _ in named]]
    first = named[0][1]["changes"]
    rows = [
        [c["head"][:10] + " " + c["title"][:30]]
        + [f"{len(r['changes'][i]['findings'])} findings" for _, r in named]
        for i, c in enumerate(first)
    ]
    rows.append(["recall", *[recall_text(r["totals"]) for _, r in named]])
    rows.append(["precision", *[precision_text(r["totals"]) for _, r in named]])
    rows.append(["prompt tokens", *[f"{r['totals']['prompt_tokens']:,}" for _, r in named]])
    rows.append(["completion tokens", *[f"{r['totals']['completion_tokens']:,}" for _, r in named]])
    return "\n".join(_table(headers, rows))

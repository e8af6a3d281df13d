"""``gitneural usage``: a month's model tokens by installation and repository, with the
share of each budget (``GITNEURAL_BUDGETS_FILE``), as text, JSON or CSV."""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import sys
from dataclasses import dataclass
from typing import Any

from bot.errors import ConfigError
from bot.settings.budgets import (
    Budgets,
    Limit,
    load_budgets,
    month_of,
    month_start,
    next_month,
    parse_month,
)

_COLUMNS = ("prompt_tokens", "cached_tokens", "completion_tokens", "tokens", "requests")


def add_parser(commands: Any) -> None:
    usage: argparse.ArgumentParser = commands.add_parser(
        "usage",
        help="model tokens used by installation and repository, against the budgets",
        description="Tokens recorded in the store (GITNEURAL_DATABASE_URL, or SQLite under "
        "GITNEURAL_DATA_DIR) for one month, with the share of each budget in "
        "GITNEURAL_BUDGETS_FILE. A budget counts prompt + completion tokens.",
    )
    usage.add_argument("--month", help="YYYY-MM (default: this month, UTC)")
    usage.add_argument(
        "--format",
        choices=("text", "json", "csv"),
        default="text",
        help="text: a table; json or csv: one record per installation and repository "
        "(default text)",
    )
    usage.set_defaults(run=run_usage)


@dataclass
class Line:
    """One repository, or (``repo`` is ``None``) an installation's total."""

    installation_id: int
    repo: str | None
    counts: dict[str, int]
    limit: Limit | None

    @property
    def share(self) -> float | None:
        if self.limit is None:
            return None
        cap, used = self.limit.monthly_tokens, self.counts["tokens"]
        return used / cap if cap else (1.0 if used else 0.0)


def usage_lines(month: str, budgets: Budgets) -> list[Line]:
    from bot.store import current_revision, database_url, open_store, redacted_url
    from bot.store.usage import month_usage

    url = database_url(os.environ)
    store = open_store(url)
    try:
        if current_revision(store) is None:
            raise ConfigError(
                f"the store at {redacted_url(url)} is empty: run `gitneural db upgrade`, "
                "or set GITNEURAL_DATABASE_URL to the App's store"
            )
        rows = month_usage(store, month)
    finally:
        store.close()
    lines: list[Line] = []
    installations = sorted({r.installation_id for r in rows} | set(budgets.installations))
    for installation in installations:
        mine = [r for r in rows if r.installation_id == installation]
        total = dict.fromkeys(_COLUMNS, 0)
        repo_lines = []
        for row in mine:
            counts = {
                "prompt_tokens": row.prompt_tokens,
                "cached_tokens": row.cached_tokens,
                "completion_tokens": row.completion_tokens,
                "tokens": row.tokens,
                "requests": row.requests,
            }
            for key, value in counts.items():
                total[key] += value
            limit = budgets.repository_limit(row.repo)
            repo_lines.append(Line(installation, row.repo, counts, limit))
        lines.append(Line(installation, None, total, budgets.installation_limit(installation)))
        lines += repo_lines
    return lines


def _budget(line: Line) -> str:
    if line.limit is None:
        return "-"
    return f"{line.limit.monthly_tokens:,} ({line.limit.label})"


def _share(line: Line) -> str:
    return "-" if line.share is None else f"{100 * line.share:.1f}%"


def render_text(month: str, lines: list[Line]) -> str:
    resets = month_start(next_month(month)).strftime("%Y-%m-%d %H:%M UTC")
    out = [f"Model usage in {month} (budgets reset on {resets})"]
    if not lines:
        return out[0] + "\nNo usage recorded.\n"
    table: list[tuple[str, ...]] = [
        (
            "installation",
            "repository",
            "prompt",
            "cached",
            "completion",
            "tokens",
            "requests",
            "budget",
            "share",
        )
    ]
    for line in lines:
        c = line.counts
        table.append(
            (
                str(line.installation_id),
                line.repo or "(all repositories)",
                *(f"{c[k]:,}" for k in _COLUMNS),
                _budget(line),
                _share(line),
            )
        )
    widths = [max(len(row[i]) for row in table) for i in range(len(table[0]))]
    for row in table:
        cells = [
            cell.ljust(w) if i in (0, 1, 7) else cell.rjust(w)
            for i, (cell, w) in enumerate(zip(row, widths, strict=True))
        ]
        out.append("  ".join(cells).rstrip())
    return "\n".join(out) + "\n"


def render_json(month: str, lines: list[Line]) -> str:
    def limit(line: Line) -> dict[str, Any] | None:
        if line.limit is None:
            return None
        scope, key, cap = line.limit.scope, line.limit.key, line.limit.monthly_tokens
        return {"scope": scope, "key": key, "monthly_tokens": cap}

    installations: list[dict[str, Any]] = []
    for line in lines:
        entry = {**line.counts, "budget": limit(line), "share": line.share}
        if line.repo is None:
            installations.append(
                {"installation_id": line.installation_id, **entry, "repositories": []}
            )
        else:
            installations[-1]["repositories"].append({"repository": line.repo, **entry})
    resets = month_start(next_month(month)).isoformat()
    document = {"month": month, "resets_at": resets, "installations": installations}
    return json.dumps(document, indent=2) + "\n"


def render_csv(month: str, lines: list[Line]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(
        [
            "month",
            "installation_id",
            "repository",
            *_COLUMNS,
            "budget_tokens",
            "budget_scope",
            "share",
        ]
    )
    for line in lines:
        share = "" if line.share is None else f"{line.share:.6f}"
        writer.writerow(
            [
                month,
                line.installation_id,
                line.repo or "*",
                *(line.counts[k] for k in _COLUMNS),
                line.limit.monthly_tokens if line.limit else "",
                line.limit.label if line.limit else "",
                share,
            ]
        )
    return buffer.getvalue()


def run_usage(args: argparse.Namespace) -> int:
    month = parse_month(args.month) if args.month else month_of()
    lines = usage_lines(month, load_budgets())
    render = {"text": render_text, "json": render_json, "csv": render_csv}[args.format]
    sys.stdout.write(render(month, lines))
    return 0

"""What ``gitneural action`` leaves in the job: workflow commands (``::notice::``), the
step's outputs (``GITHUB_OUTPUT``), the Markdown step summary (``GITHUB_STEP_SUMMARY``)
and the SARIF file for ``github/codeql-action/upload-sarif``.

Model text reaches the job's log and summary, so it is kept from acting there: the log
shows the review between ``::stop-commands::`` markers (a finding cannot issue a
workflow command), and the summary holds model text only as sanitised inline Markdown.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from bot import __version__
from bot.domain.change import Change
from bot.domain.results import Finding, ReviewResult
from bot.errors import EXIT_MODEL, GitNeuralError
from bot.render.github import ICONS, code_span, coverage_text, severity_counts, usage_line
from bot.render.sanitize import sanitize_inline, sanitize_markdown
from bot.render.sarif import render_sarif
from bot.render.text import render_text
from bot.render.walkthrough import walkthrough_markdown
from bot.text import printable

_MAX_LISTED = 100
_SUMMARY_LIMIT = 4_000
_RETRIED_LATER = "; it is retried later"


class RunFailedError(GitNeuralError):
    """GitHub or the model failed a review made outside the App (exit code 3)."""

    exit_code = EXIT_MODEL


def for_a_single_run(message: str) -> str:
    """A job runner's message for a run that nothing retries (the Action, the CLI)."""
    return message.replace(_RETRIED_LATER, "")


def workflow_command(kind: str, message: str, title: str = "GitNeural") -> str:
    """``::kind title=…::message``, escaped as the runner reads it: one line."""
    data = printable(message).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    prop = title.replace("%", "%25").replace(",", "%2C").replace(":", "%3A")
    return f"::{kind} title={prop}::{data}"


def log_untrusted(out: TextIO, text: str) -> None:
    """Print ``text`` (model output) with workflow commands switched off around it."""
    token = secrets.token_hex(16)
    out.write(f"::stop-commands::{token}\n{text.rstrip()}\n::{token}::\n")
    out.flush()


def write_outputs(path: Path | None, values: Mapping[str, str]) -> None:
    """Append ``name=value`` outputs in the runner's delimited form (any value is safe)."""
    if path is None:
        return
    lines = []
    for name, value in values.items():
        delimiter = f"gitneural_{secrets.token_hex(8)}"
        lines.append(f"{name}<<{delimiter}\n{value}\n{delimiter}\n")
    with path.open("a", encoding="utf-8") as handle:
        handle.write("".join(lines))


def append_summary(path: Path | None, markdown: str) -> None:
    if path is None:
        return
    with path.open("a", encoding="utf-8") as handle:
        handle.write(markdown.rstrip() + "\n\n")


def write_sarif(result: ReviewResult, change: Change, directory: Path) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "gitneural.sarif"
    document = render_sarif(result, tool_version=__version__, change=change)
    path.write_text(json.dumps(document, indent=2), encoding="utf-8")
    return path


def print_review(out: TextIO, result: ReviewResult, change: Change) -> None:
    log_untrusted(out, render_text(result, change))


@dataclass(frozen=True)
class Posted:
    """What the summary says about the posted (or found) review."""

    headline: str
    url: str


def _finding_line(finding: Finding) -> str:
    where = f"line {finding.start_line}" + (" (old file)" if finding.side == "LEFT" else "")
    title = sanitize_inline(finding.title, limit=200)
    severity = f"{ICONS[finding.severity]} **{finding.severity}**"
    return f"- {severity} {code_span(finding.path)} {where}: {title}"


def review_summary(posted: Posted, result: ReviewResult, scope: str) -> str:
    """The step summary of a review this run made."""
    findings: Sequence[Finding] = result.findings
    link = f"[{posted.headline}]({posted.url})" if posted.url else posted.headline
    counts = severity_counts(findings)
    lines = ["## GitNeural review", "", f"{link}: {counts}.", ""]
    if result.summary.strip():
        lines += [sanitize_markdown(result.summary, limit=_SUMMARY_LIMIT), ""]
    if result.walkthrough is not None:
        lines += [walkthrough_markdown(result.walkthrough, collapsible=False), ""]
    lines += [_finding_line(f) for f in findings[:_MAX_LISTED]]
    if len(findings) > _MAX_LISTED:
        lines.append(f"- … and {len(findings) - _MAX_LISTED} more")
    lines += [
        "",
        coverage_text(result.coverage, scope),
        "",
        usage_line(result.usage, result.model, result.effort, result.duration_s),
    ]
    return "\n".join(lines)


def plain_summary(text: str, url: str = "") -> str:
    """A one-paragraph step summary (already reviewed, skipped, failed)."""
    link = f" [The review]({url})." if url else ""
    return f"## GitNeural review\n\n{text}{link}"

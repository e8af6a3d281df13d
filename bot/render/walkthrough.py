"""The walkthrough as GitHub shows it (a collapsible block in the review body, and the
Action's step summary) and as a terminal shows it.

Everything K3 wrote goes through the sanitiser, and table cells have their pipes escaped,
so no text of the model can break out of its cell, ping anyone or hide markup. The
diagram was checked by the core before it got here (a strict subset of Mermaid, no
backticks), so its fence cannot be closed from inside. Issue titles are the author's
words: only the numbers are shown, with K3's verdict. The images are named by where
they came from (a link's host and path, a file's path and side), in code spans.
"""

from __future__ import annotations

from bot.domain.walkthrough import Walkthrough
from bot.render.github import code_span
from bot.render.sanitize import sanitize_inline, sanitize_markdown, terminal_text

#: Characters of the walkthrough's summary kept, and of each line.
_SUMMARY_LIMIT = 3_000
_LINE_LIMIT = 300
#: Files listed in the table, at most (the rest counted).
MAX_FILES = 40
#: Images listed, at most (the rest counted); a name is cut past ``_NAME_LIMIT``.
MAX_IMAGES = 40
_NAME_LIMIT = 160
#: The whole block, at most: the review body (65,536) must keep room for the findings.
MAX_MARKDOWN = 16_000

VERDICT_WORDS = {"yes": "addressed", "partly": "partly addressed", "no": "not addressed"}


def _cell(text: str) -> str:
    return text.replace("\n", " ").replace("|", "\\|")


def _name(what: str) -> str:
    text = " ".join(what.split())
    return text if len(text) <= _NAME_LIMIT else text[: _NAME_LIMIT - 1] + "…"


def _title(walkthrough: Walkthrough) -> str:
    if walkthrough.since:
        return f"Walkthrough of the changes since {walkthrough.since[:7]}"
    return "Walkthrough"


def walkthrough_markdown(walkthrough: Walkthrough | None, *, collapsible: bool = True) -> str:
    """The walkthrough in GitHub Markdown: in a ``<details>`` block when ``collapsible``."""
    if walkthrough is None:
        return ""
    parts = [sanitize_markdown(walkthrough.summary, limit=_SUMMARY_LIMIT)]
    if walkthrough.files:
        rows = ["| File | Change |", "| --- | --- |"]
        for note in walkthrough.files[:MAX_FILES]:
            text = sanitize_inline(note.note, limit=_LINE_LIMIT)
            rows.append(f"| {_cell(code_span(note.path))} | {_cell(text)} |")
        if len(walkthrough.files) > MAX_FILES:
            rows.append(f"| … | and {len(walkthrough.files) - MAX_FILES} more |")
        parts.append("\n".join(rows))
    if walkthrough.focus:
        lines = [f"- {sanitize_inline(line, limit=_LINE_LIMIT)}" for line in walkthrough.focus]
        parts.append("**Where to look hardest**\n\n" + "\n".join(lines))
    if walkthrough.issues:
        lines = [
            f"- #{v.number}: **{v.verdict}** ({VERDICT_WORDS[v.verdict]}): "
            f"{sanitize_inline(v.why, limit=_LINE_LIMIT)}"
            for v in walkthrough.issues
        ]
        parts.append("**Linked issues**\n\n" + "\n".join(lines))
    if walkthrough.images:
        lines = [
            f"- {'not sent' if i.not_sent else 'looked at'}: {code_span(_name(i.what))}"
            + (f" ({sanitize_inline(i.not_sent, limit=_LINE_LIMIT)})" if i.not_sent else "")
            for i in walkthrough.images[:MAX_IMAGES]
        ]
        if len(walkthrough.images) > MAX_IMAGES:
            lines.append(f"- and {len(walkthrough.images) - MAX_IMAGES} more")
        parts.append("**Images**\n\n" + "\n".join(lines))
    if walkthrough.diagram:
        parts.append(f"```mermaid\n{walkthrough.diagram}\n```")
    body = "\n\n".join(parts)
    if len(body) > MAX_MARKDOWN:
        # Cut before the diagram and the table, never inside them.
        body = "\n\n".join(parts[:1]) + "\n\n(The rest of the walkthrough is too long to show.)"
    if not collapsible:
        return f"#### {_title(walkthrough)}\n\n{body}"
    return f"<details open>\n<summary>{_title(walkthrough)}</summary>\n\n{body}\n\n</details>"


def walkthrough_text(walkthrough: Walkthrough | None, indent: str = "  ") -> list[str]:
    """The walkthrough as terminal lines (a heading, then indented lines)."""
    if walkthrough is None:
        return []
    lines = [f"{_title(walkthrough)}:"]
    lines += [indent + line for line in terminal_text(walkthrough.summary).strip().split("\n")]
    if walkthrough.files:
        lines.append("")
        width = min(40, max(len(n.path) for n in walkthrough.files))
        lines += [
            f"{indent}{terminal_text(n.path):<{width}}  {terminal_text(n.note)}"
            for n in walkthrough.files
        ]
    if walkthrough.focus:
        lines += ["", f"{indent}Where to look hardest:"]
        lines += [f"{indent}- {terminal_text(line)}" for line in walkthrough.focus]
    if walkthrough.issues:
        lines += ["", f"{indent}Linked issues:"]
        lines += [
            f"{indent}- #{v.number}: {v.verdict} ({VERDICT_WORDS[v.verdict]}): "
            f"{terminal_text(v.why)}"
            for v in walkthrough.issues
        ]
    if walkthrough.images:
        lines += ["", f"{indent}Images:"]
        lines += [
            f"{indent}- {'not sent' if i.not_sent else 'looked at'}: {terminal_text(i.what)}"
            + (f" ({terminal_text(i.not_sent)})" if i.not_sent else "")
            for i in walkthrough.images
        ]
    if walkthrough.diagram:
        lines += ["", f"{indent}Sequence diagram (Mermaid):"]
        lines += [indent + line for line in walkthrough.diagram.split("\n")]
    return lines

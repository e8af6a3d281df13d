"""What ``/help`` and ``/describe`` post: one comment each, ending with the answer's
marker (:func:`bot.render.conversation.answer_marker`) so a job that runs again finds it.

``/help`` is GitNeural's own text (the registry's commands and the repository's
settings); ``/describe`` carries K3's text, sanitised field by field, under GitNeural's
headings, so the author can copy the title and the description as they are.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from bot.domain.conversation import Description
from bot.render.conversation import answer_marker
from bot.render.github import code_span
from bot.render.sanitize import sanitize_inline, sanitize_markdown
from bot.settings.repository import Config

#: Characters of one field of a description, at most (the schema's limits, and room).
_FIELD_LIMIT = 2_200


@dataclass(frozen=True)
class CommandLine:
    """One command as ``/help`` lists it."""

    usage: str
    summary: str
    who: str
    needs_model: bool


def help_body(commands: Sequence[CommandLine], config: Config, *, to: int) -> str:
    """The commands, who may use them and the settings that decide what GitNeural does
    on its own (read from the default branch's ``.gitneural.toml``)."""
    rows = [
        "| "
        + " | ".join(_cell(cell) for cell in (code_span(c.usage), c.summary, c.who))
        + f" | {'yes' if c.needs_model else 'no'} |"
        for c in commands
    ]
    g, r = config.github, config.review
    who = ", ".join(g.allowed_associations) or "nobody"
    branches = ", ".join(code_span(b) for b in g.base_branches) or "any"
    policy = {
        "always": "every pull request when it is opened or pushed to",
        "label": f"only pull requests labelled {code_span(g.review_label)}",
        "off": "none: only `/review`",
    }[g.auto_review]
    settings = [
        f'- Automatic reviews (`github.auto_review = "{g.auto_review}"`): {policy}; '
        f"drafts {'too' if g.review_drafts else 'not'} (`github.review_drafts`); "
        f"base branches: {branches} (`github.base_branches`).",
        f"- The label {code_span(g.skip_label)} stops automatic reviews (`github.skip_label`).",
        f"- Larger than {_limit(g.max_review_lines, 'changed lines')} or "
        f"{_limit(g.max_review_files, 'files')}: no automatic review, the check run says "
        "`skipped` (`github.max_review_lines`, `github.max_review_files`).",
        f"- Review effort: `{r.effort}` (`review.effort`; `/review effort=…` for one "
        f"review); at most {r.max_comments} findings posted (`review.max_comments`).",
        f"- Answers to replies and `/ask`: {'on' if config.conversation.enabled else 'off'}, "
        f"effort `{config.conversation.effort}` (`conversation`).",
        f"- Commands are taken from {who} (`github.allowed_associations`) who can write "
        "to the repository.",
    ]
    text = "\n".join(
        [
            "**GitNeural's commands** (a comment on the pull request that starts with one):",
            "",
            "| Command | What it does | Who | Uses the model |",
            "| --- | --- | --- | --- |",
            *rows,
            "",
            "**This repository's settings** (`.gitneural.toml` on the default branch):",
            "",
            *settings,
        ]
    )
    return f"{text}\n\n{answer_marker('answer', to)}"


def _cell(text: str) -> str:
    # A pipe ends a table cell even inside a code span, unless escaped.
    return text.replace("|", "\\|")


def _limit(value: int, unit: str) -> str:
    return f"{value:,} {unit}" if value else f"any number of {unit} (no limit)"


def description_body(described: Description, *, to: int) -> str:
    """A suggested title and description, for the author to copy; nothing is edited."""
    title = sanitize_inline(described.title, limit=200)
    parts = [
        "**Suggested title and description** (copy what you want: GitNeural edits nothing)",
        f"**Title:** {title}",
        *(
            f"### {heading}\n\n{sanitize_markdown(text, limit=_FIELD_LIMIT)}"
            for heading, text in (
                ("What", described.what),
                ("Why", described.why),
                ("How to test", described.how_to_test),
                ("Risk", described.risk),
            )
        ),
    ]
    return "\n\n".join(parts) + "\n\n" + answer_marker("answer", to)

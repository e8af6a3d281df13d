"""The chat messages of a review, rendered from ``prompts/*.j2``, and the tool K3 answers with.

Order is chosen for K3's prefix cache: the system message is the same for every review
(it depends only on whether tools are offered), the trusted repository instructions
come next (the repository's learnings at their end, oldest first), then the files sorted
by path, each rendered from its own content only, and the per-change text (skipped
files, title, description, counts) last. A re-review after
a push therefore repeats everything up to the first file that changed; passing that
push's paths as ``changed_last`` moves them to the end so the cached prefix covers every
other file.

Untrusted text is fenced by ``<untrusted-ID>`` … ``</untrusted-ID>``. The ID is derived
from the fenced text's hash (so an unchanged file renders identically across reviews) and
is re-derived whenever any untrusted text of the prompt contains it: no content can close
or imitate a fence of this prompt, even if its author computes the hash. Paths are shown
as JSON strings, so a file name cannot start a line of its own.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from typing import Any

import jinja2

import prompts
from bot.domain.change import Change
from bot.domain.diff import FileStatus
from bot.domain.results import SkippedFile
from bot.review.context.file_context import FileContext
from bot.review.context.learnings import NONE, ShownLearnings
from bot.review.secrets.redaction import redact_path
from bot.review.token_estimate import estimate_tokens
from bot.text import encode_text, printable

SUBMIT_REVIEW = "submit_review"
SYSTEM_TEMPLATE = "system.md.j2"
REVIEW_TEMPLATE = "review.md.j2"
#: The change as the model reads it, included by the review and ``/ask`` templates, and
#: the fence macro every template imports.
CHANGE_TEMPLATE = "change.md.j2"
FENCE_TEMPLATE = "fence.md.j2"
#: The repository's learnings, at the end of the trusted instructions.
LEARNINGS_TEMPLATE = "learnings.md.j2"
#: Bump when the code that shapes the prompt changes (labels, headers); template and
#: schema changes are picked up by the digest in PROMPT_VERSION by themselves.
_FORMAT_VERSION = "1"

_FENCE_ID = re.compile(r"untrusted-([0-9a-f]{12})", re.IGNORECASE)


def _digest() -> str:
    sha = hashlib.sha256()
    names = (SYSTEM_TEMPLATE, REVIEW_TEMPLATE, CHANGE_TEMPLATE, FENCE_TEMPLATE, LEARNINGS_TEMPLATE)
    for name in (*names, prompts.SUBMIT_REVIEW_SCHEMA):
        sha.update(prompts.read_text(name).encode("utf-8"))
    return sha.hexdigest()[:12]


#: Identifies the prompt's wording and format (the hook's result cache keys on it).
PROMPT_VERSION: str = f"{_FORMAT_VERSION}.{_digest()}"


@functools.cache
def _environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FunctionLoader(prompts.read_text),
        undefined=jinja2.StrictUndefined,
        # The output is Markdown for a model, not HTML: escaping would corrupt code.
        autoescape=False,  # noqa: S701
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=False,
    )


def render_template(name: str, **variables: Any) -> str:
    """Render one template; a variable it uses but is not given raises UndefinedError."""
    return _environment().get_template(name).render(**variables)


class Fences:
    """Fence ids for one prompt, none of which occurs in any of its untrusted text."""

    def __init__(self, texts: Iterable[str]) -> None:
        self._taken = {m.group(1).lower() for t in texts for m in _FENCE_ID.finditer(t)}

    def __call__(self, text: str) -> dict[str, str]:
        salt = 0
        while True:
            data = encode_text(f"{salt}\0{text}") if salt else encode_text(text)
            fence_id = hashlib.sha256(data).hexdigest()[:12]
            if fence_id not in self._taken:
                return {"id": fence_id, "text": text}
            salt += 1


def _quoted(path: str) -> str:
    # A secret in a file name is redacted like one in the file (findings name the file
    # back by its redacted path: bot.review.findings.anchor.find_file).
    return json.dumps(printable(redact_path(path)), ensure_ascii=False)


def _status(item: FileContext) -> str:
    file = item.file
    if file.status is FileStatus.ADDED:
        return "new file"
    if file.status is FileStatus.RENAMED:
        return f"renamed from {_quoted(file.old_path)}"
    return str(file.status)


def order_files(
    files: Iterable[FileContext], changed_last: Collection[str] = ()
) -> list[FileContext]:
    """Files by path, those in ``changed_last`` after all others (each group by path)."""
    return sorted(files, key=lambda f: (f.file.path in changed_last, f.file.path))


def change_variables(
    *,
    change: Change,
    files: list[FileContext],
    skipped: list[SkippedFile],
    extra_context: str = "",
    changed_last: Collection[str] = (),
    other_untrusted: Iterable[str] = (),
) -> tuple[dict[str, Any], Fences]:
    """What ``change.md.j2`` renders (the files, related code, skipped files, title and
    description, fenced), and the prompt's fences: ``other_untrusted`` is the rest of the
    prompt's untrusted text, which the fences must not occur in either."""
    ordered = order_files(files, changed_last)
    title = printable(change.title).strip()
    description = printable(change.description).strip()
    extra = printable(extra_context).strip()
    issues = [
        (issue.number, printable(issue.title).strip(), printable(issue.body).strip())
        for issue in change.linked_issues
    ]
    untrusted = [title, description, extra, *other_untrusted]
    untrusted += [text for _, issue_title, body in issues for text in (issue_title, body)]
    for item in ordered:
        untrusted += [item.file.path, item.file.old_path, item.diff_text, item.context_text]
    untrusted += [s.path for s in skipped]
    fence = Fences(untrusted)
    views = [
        {
            "path": _quoted(item.file.path),
            "status": _status(item),
            "language": item.language,
            "diff": fence(item.diff_text),
            "context": fence(item.context_text) if item.context_text else None,
        }
        for item in ordered
    ]
    variables = {
        "files": views,
        "extra": fence(extra) if extra else None,
        "skipped": [{"path": _quoted(s.path), "reason": s.reason} for s in skipped],
        "title": fence(title) if title else None,
        "description": fence(description) if description else None,
        "issues": [
            {"number": number, "title": fence(issue_title), "body": fence(body) if body else None}
            for number, issue_title, body in issues
        ],
    }
    return variables, fence


def render_messages(
    *,
    change: Change,
    files: list[FileContext],
    skipped: list[SkippedFile],
    instructions: str,
    extra_context: str = "",
    agentic: bool = False,
    changed_last: Collection[str] = (),
    learnings: ShownLearnings = NONE,
    walkthrough: WalkthroughAsk | None = None,
) -> list[dict[str, Any]]:
    """``[system, user]`` messages for reviewing ``files`` of ``change``.

    ``instructions`` must come from the trusted snapshot (``load_instructions``), and
    ``learnings`` from the repository's store (trusted too, shown after them);
    ``extra_context`` (definitions and callers found in the repository) is untrusted and
    fenced like the diff. ``walkthrough``: what the task asks of the walkthrough (said at
    the prompt's end, so the cached prefix holds), or None for none.
    """
    variables, _fence = change_variables(
        change=change,
        files=files,
        skipped=skipped,
        extra_context=extra_context,
        changed_last=changed_last,
    )
    system = render_template(SYSTEM_TEMPLATE, agentic=agentic)
    user = render_template(
        REVIEW_TEMPLATE,
        instructions=printable(instructions).strip(),
        agentic=agentic,
        walkthrough=walkthrough,
        **learnings.variables(),
        **variables,
    )
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


@dataclass(frozen=True)
class WalkthroughAsk:
    """The walkthrough a review's task asks for."""

    #: With a sequence diagram where the change alters how components call each other.
    diagram: bool = False
    #: A later review: the diff is what changed since this head (12 characters shown).
    since: str | None = None


def submit_review_tool() -> dict[str, Any]:
    """The OpenAI ``function`` tool the model answers with."""
    return {
        "type": "function",
        "function": {
            "name": SUBMIT_REVIEW,
            "description": (
                "Submit the review: a summary, the findings, each on lines of one file "
                "of the diff (R labels: side RIGHT; L labels: side LEFT), and the walkthrough "
                "when the task asks for it. Call it exactly once."
            ),
            "parameters": prompts.submit_review_schema(),
        },
    }


def overhead_tokens(
    *,
    change: Change,
    skipped: list[SkippedFile],
    instructions: str,
    extra_context: str = "",
    agentic: bool = False,
    learnings: ShownLearnings = NONE,
    walkthrough: WalkthroughAsk | None = None,
) -> int:
    """Estimated tokens of the prompt without its files, tool schema included.

    ``max_prompt_tokens - overhead_tokens(...)`` is the budget to ``pack`` files into;
    each packed file adds ``budget.file_cost(file)``. Files that ``pack`` skips add a
    line each to the skipped list (about 20 tokens): keep a margin.
    """
    messages = render_messages(
        change=change,
        files=[],
        skipped=skipped,
        instructions=instructions,
        extra_context=extra_context,
        agentic=agentic,
        learnings=learnings,
        walkthrough=walkthrough,
    )
    text = "".join(str(m["content"]) for m in messages)
    return estimate_tokens(text) + estimate_tokens(json.dumps(submit_review_tool()))

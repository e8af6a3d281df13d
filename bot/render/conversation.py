"""GitNeural's answers as GitHub shows them, and the hidden markers that make them its own.

Three markers, each added after the text is sanitised (which removes every HTML comment
from model and user text, so none can be forged by what is quoted):

- ``<!-- gitneural:finding v1 fp=FP sev=S -->`` ends every inline comment of a review:
  its finding's fingerprint and severity, read back when someone replies in its thread;
- ``<!-- gitneural:reply v1 to=ID -->`` ends a reply in a thread, ``ID`` the comment it
  answers; ``<!-- gitneural:answer v1 to=ID -->`` ends an answer to ``/ask``. A job that
  runs again (a redelivery, a retry, a worker that died after posting) finds its answer
  by the marker and never answers twice.

A marker counts only on a comment by GitNeural's own bot account (the caller checks the
author): anyone can paste one into a comment.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from bot.render.sanitize import sanitize_inline, sanitize_markdown

#: An answer, marker included, is at most this long: a reply is read in a thread.
MAX_ANSWER = 4_000
_QUOTE_LIMIT = 300
_SAFE = re.compile(r"[^A-Za-z0-9._-]")
_FINDING = re.compile(r"<!-- gitneural:finding v1 fp=([A-Za-z0-9._-]*) sev=([a-z]*) -->")
_ANSWER = re.compile(r"<!-- gitneural:(reply|answer) v1 to=([0-9]{1,20}) -->")
_ANY_MARKER = re.compile(r"\s*<!-- gitneural:[^>]{0,400}-->")
WITHDRAWN = "**Finding withdrawn** (recorded as dismissed)."
USAGE = (
    "Usage: `/ask QUESTION` on the first line of a comment, for example "
    "`/ask what happens to open connections when the pool is closed?`"
)
Kind = Literal["reply", "answer"]


@dataclass(frozen=True)
class FindingMarker:
    fingerprint: str
    severity: str

    def render(self) -> str:
        fp = _SAFE.sub("", self.fingerprint)[:64]
        sev = re.sub(r"[^a-z]", "", self.severity)[:16]
        return f"<!-- gitneural:finding v1 fp={fp} sev={sev} -->"


def parse_finding_marker(body: str | None) -> FindingMarker | None:
    """The finding marker of an inline comment, or None."""
    found = _FINDING.findall(body or "")
    if not found:
        return None
    fingerprint, severity = found[-1]
    return FindingMarker(fingerprint, severity)


def answer_marker(kind: Kind, to: int) -> str:
    return f"<!-- gitneural:{kind} v1 to={int(to)} -->"


def answered_comment(body: str | None, kind: Kind) -> int | None:
    """The comment id an answer of ``kind`` names, or None."""
    for found_kind, to in reversed(_ANSWER.findall(body or "")):
        if found_kind == kind:
            return int(to)
    return None


def visible_text(body: str) -> str:
    """A comment's text without GitNeural's hidden markers (for the prompt)."""
    return _ANY_MARKER.sub("", body).strip()


def _with_marker(head: list[str], kind: Kind, to: int, model_text: str) -> str:
    """``head`` (GitNeural's own lines), then the model's text sanitised to fit, then the
    marker: at most :data:`MAX_ANSWER` characters in all."""
    tail = "\n\n" + answer_marker(kind, to)
    room = MAX_ANSWER - len(tail) - sum(len(p) + 2 for p in head)
    text = sanitize_markdown(model_text, limit=max(0, room)) if model_text.strip() else ""
    return "\n\n".join(p for p in [*head, text] if p) + tail


def reply_body(text: str, *, withdraw: bool, to: int) -> str:
    """A reply in a thread: the withdrawal line, K3's answer (sanitised), the marker."""
    return _with_marker([WITHDRAWN] if withdraw else [], "reply", to, text)


def answer_body(question: str, text: str, *, to: int) -> str:
    """An answer to ``/ask``: the question's first line quoted, the answer, the marker."""
    first = question.strip().split("\n", 1)[0]
    quote = f"> {sanitize_inline(first, limit=_QUOTE_LIMIT)}" if first.strip() else ""
    return _with_marker([quote], "answer", to, text)


def notice_body(text: str, *, kind: Kind, to: int) -> str:
    """GitNeural's own one-line notice in place of an answer (usage, a failure)."""
    return f"{text}\n\n{answer_marker(kind, to)}"

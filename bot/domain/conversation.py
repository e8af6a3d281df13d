"""What a conversation with GitNeural is about, and what it answers.

A developer talks back in two places: in the thread of one of GitNeural's inline
comments (:class:`ThreadQuestion`: the finding as it was posted, and the thread's
comments so far), or with ``/ask`` on the pull request (:class:`PullQuestion`). The
entrance reads them from GitHub; the core answers with an :class:`Answer`. Every text
here was written on GitHub and is untrusted, GitNeural's own comments included (they
quote model output).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from bot.domain.diff import Side
from bot.usage import Usage


@dataclass(frozen=True)
class ThreadEntry:
    #: The commenter's login, as GitHub shows it.
    author: str
    #: Written by GitNeural (its own earlier answers in the thread).
    by_gitneural: bool
    body: str


@dataclass(frozen=True)
class PostedFinding:
    """A finding as GitNeural posted it: the first comment of its thread."""

    path: str
    side: Side
    start_line: int
    end_line: int
    #: The comment's visible text: headline (severity, title), explanation, suggestion.
    text: str
    severity: str = "unknown"
    fingerprint: str = ""


@dataclass(frozen=True)
class ThreadQuestion:
    finding: PostedFinding
    #: The thread's replies after the finding, oldest first, up to the one answered.
    entries: tuple[ThreadEntry, ...]
    #: Who wrote the last entry, the one to answer.
    asker: str
    #: Earlier replies were left out (a very long thread).
    truncated: bool = False
    #: The finding's lines changed since it was posted (GitHub's "outdated" thread): its
    #: line numbers are where it was, the code shown is the head's.
    outdated: bool = False


@dataclass(frozen=True)
class PullQuestion:
    question: str
    asker: str


@dataclass
class Answer:
    """What K3 answered (its text is model output: sanitise it before posting)."""

    body: str
    #: A thread reply only: K3 agrees that its finding was wrong or does not apply.
    withdraw: bool = False
    usage: Usage = field(default_factory=Usage)
    model: str = ""
    effort: str = ""
    duration_s: float = 0.0
    tool_calls: int = 0


@dataclass
class Description:
    """A title and description K3 suggests for a pull request (``/describe``): model
    output, sanitised before posting, and never written into the pull request."""

    title: str
    what: str
    why: str
    how_to_test: str
    risk: str
    usage: Usage = field(default_factory=Usage)
    model: str = ""
    effort: str = ""

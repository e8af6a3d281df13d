"""What a review says the change is: the walkthrough, and the issues the change closes.

The walkthrough is written by K3 in the same ``submit_review`` call as the findings: a
few sentences on what the change does and why, one line per changed file (or group of
files), the places a reviewer should look hardest, a Mermaid sequence diagram when the
change alters how components call each other (only one that passed the strict check
of :mod:`bot.review.walkthrough.mermaid` is ever kept), and, for every issue the pull
request says it closes, whether the change addresses it. The review adds the images
it sent K3 and those it only named.

A :class:`LinkedIssue`'s title and body are untrusted text, fenced in the prompt like
the change's own description.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

Verdict = Literal["yes", "partly", "no"]
VERDICTS: tuple[Verdict, ...] = ("yes", "partly", "no")


@dataclass(frozen=True)
class LinkedIssue:
    """An issue of the same repository the pull request says it closes."""

    number: int
    title: str
    body: str


@dataclass(frozen=True)
class FileNote:
    #: A changed file's path, or a group's (``tests/*``, ``a.py, b.py``).
    path: str
    note: str


@dataclass(frozen=True)
class IssueVerdict:
    number: int
    verdict: Verdict
    #: One line: why.
    why: str


@dataclass(frozen=True)
class ImageNote:
    """An image the review had: where it came from (the link's host and path, or the
    file's path and side; never a signature), and why K3 did not see it ("" if it did)."""

    what: str
    not_sent: str = ""


@dataclass
class Walkthrough:
    summary: str
    files: list[FileNote] = field(default_factory=list)
    #: Where a reviewer should look hardest, one line each.
    focus: list[str] = field(default_factory=list)
    #: A checked Mermaid ``sequenceDiagram`` (without fences), or None.
    diagram: str | None = None
    issues: list[IssueVerdict] = field(default_factory=list)
    #: The last reviewed head when this walkthrough covers only what changed since it.
    since: str | None = None
    #: Why a diagram K3 wrote was left out ("" when none was, or it was kept).
    diagram_dropped: str = ""
    #: The images sent with the change, then those only named (set by the review, not
    #: by K3: what it was shown, whatever it says it looked at).
    images: list[ImageNote] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

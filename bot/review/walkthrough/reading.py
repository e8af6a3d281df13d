"""The ``walkthrough`` of a ``submit_review`` call, read leniently.

A walkthrough that does not match its schema is left out rather than worth a repair turn
(which resends the whole review, minutes at K3's pace): the findings matter more. Within
a valid one, a diagram that fails the strict check is left out with the reason, and a
verdict on an issue the prompt did not show is dropped (the model cannot have read it).
"""

from __future__ import annotations

import functools
from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING, Any, cast

import prompts
from bot.domain.images import NamedImage, PreparedImage
from bot.domain.walkthrough import FileNote, ImageNote, IssueVerdict, Verdict, Walkthrough
from bot.review.walkthrough.mermaid import DiagramError, check_sequence_diagram

if TYPE_CHECKING:
    import jsonschema


@functools.cache
def _validator() -> jsonschema.protocols.Validator:
    import jsonschema

    schema = prompts.submit_review_schema()["properties"]["walkthrough"]
    return jsonschema.Draft202012Validator(schema)


def read_walkthrough(data: Any) -> Walkthrough | None:
    """The walkthrough in ``data`` (the argument's value), or None if absent or invalid."""
    if not isinstance(data, dict) or not _validator().is_valid(data):
        return None
    found = Walkthrough(
        summary=data["summary"].strip(),
        files=[FileNote(f["path"], f["note"]) for f in data["files"]],
        focus=[line for line in data.get("focus", []) if line.strip()],
        issues=[
            IssueVerdict(i["number"], cast(Verdict, i["verdict"]), i["why"])
            for i in data.get("issues", [])
        ],
    )
    diagram = data.get("diagram")
    if isinstance(diagram, str) and diagram.strip():
        try:
            found.diagram = check_sequence_diagram(diagram)
        except DiagramError as exc:
            found.diagram_dropped = str(exc)
    return found if found.summary else None


def settle_walkthrough(
    found: Walkthrough | None,
    *,
    diagram: bool,
    issues: Collection[int],
    since: str | None,
    images: Sequence[PreparedImage] = (),
    named: Sequence[NamedImage] = (),
    refused: bool = False,
) -> Walkthrough | None:
    """What the review keeps: no diagram unless asked for, verdicts only on the issues
    shown (one each), the walkthrough marked as a delta after an earlier review, and
    the images it sent (``refused``: the server took none) and only ``named``."""
    if found is None:
        return None
    refusal = "the model server does not accept images" if refused else ""
    found.images = [ImageNote(i.name, refusal) for i in images] + [
        # A missing extra's reason carries its install command: the summary says it once.
        ImageNote(n.what, f"the {n.extra} extra is not installed" if n.extra else n.reason)
        for n in named
    ]
    if not diagram:
        found.diagram, found.diagram_dropped = None, ""
    seen: set[int] = set()
    verdicts = []
    for verdict in found.issues:
        if verdict.number in issues and verdict.number not in seen:
            seen.add(verdict.number)
            verdicts.append(verdict)
    found.issues = verdicts
    found.since = since
    return found

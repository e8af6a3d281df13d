"""The notes a review's summary ends with: the route a rule chose, what was cut from the
instructions, and the files whose context no parser read."""

from __future__ import annotations

from collections.abc import Sequence

from bot.domain.route import Route
from bot.review.context.instructions import Instructions


def route_note(route: Route | None) -> str:
    """The route's line, when a rule chose it (the configured effort goes without saying;
    a change not sent says so in place of the model's summary)."""
    if route is None or route.skip or route.name == "configured":
        return ""
    return route.line()


def cut_note(cut: Sequence[str]) -> str:
    return Instructions(cut=list(cut)).summary_note()


#: Files the heuristic note names, at most; the rest are counted.
_HEURISTIC_NAMED = 10


def heuristic_note(paths: Sequence[str]) -> str:
    """The files whose enclosing code was guessed by the heuristic, since its units may
    be wrong: a reader weighs what the review says of them knowing that."""
    if not paths:
        return ""
    named = ", ".join(paths[:_HEURISTIC_NAMED])
    more = len(paths) - _HEURISTIC_NAMED
    return f"Heuristic context (no parser): {named}" + (f" and {more} more." if more > 0 else ".")


def unparsed_note(files: Sequence[tuple[str, str]]) -> str:
    """The files reviewed without context because their parser refused or failed (too
    large, nested too deeply, too slow): what the review says of them rests on the diff."""
    if not files:
        return ""
    named = "; ".join(f"{path} ({why})" for path, why in files[:_HEURISTIC_NAMED])
    more = len(files) - _HEURISTIC_NAMED
    tail = f"; and {more} more." if more > 0 else "."
    return f"Reviewed without context (the parser would not read them): {named}{tail}"

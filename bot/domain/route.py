"""A change's route: the effort (or none) and the endpoint its review gets, decided from
the change alone before the model is asked, with the reason every output shows; and the
team's own routes (``[[review.route]]`` of ``.gitneural.toml``).

The decision itself is the review core's (``bot.review.route``); these are the words it
and every entrance share.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, get_args

from bot.domain.setting_tables import glob_list, tables
from bot.effort import EFFORTS, Effort
from bot.errors import ConfigError

#: Which rule chose the route: the built-in ones, a team's ``[[review.route]]``, or none
#: (the configured effort).
RouteName = Literal["formatting", "docs", "sensitive", "team", "configured"]
#: Where the request goes: ``KIMI_*`` (main) or ``KIMI_ROUTINE_*`` (routine).
Endpoint = Literal["main", "routine"]
ENDPOINTS: tuple[Endpoint, ...] = get_args(Endpoint)
#: A team route's effort: one of K3's, or ``skip`` (no model request at all).
RouteEffort = Literal["low", "high", "max", "skip"]
ROUTE_EFFORTS: tuple[RouteEffort, ...] = get_args(RouteEffort)


@dataclass(frozen=True)
class Route:
    """The effort and endpoint of one review, and why."""

    name: RouteName
    #: ``None``: no model request at all (a formatting-only change, a ``skip`` route).
    effort: Effort | None
    endpoint: Endpoint = "main"
    #: Short and human: "docs only (README.md)"; shown in the summary, check run, JSON.
    reason: str = ""

    @property
    def skip(self) -> bool:
        return self.effort is None

    def line(self) -> str:
        """The one line every output gives the route."""
        if self.effort is None:
            return f"Not sent to the model: {self.reason}."
        where = " on the routine endpoint" if self.endpoint == "routine" else ""
        return f"Route: {self.reason}: effort {self.effort}{where}."

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "effort": self.effort or "skip",
            "endpoint": self.endpoint,
            "reason": self.reason,
        }


@dataclass(frozen=True)
class RouteRule:
    """One ``[[review.route]]`` table: a change whose files match ``paths`` (globs, ``**``
    spans directories) is reviewed at ``effort`` on the ``model`` endpoint."""

    paths: tuple[str, ...]
    effort: RouteEffort
    model: Endpoint = "main"


def route_rules(key: str, value: Any) -> list[RouteRule]:
    """``[[review.route]]`` tables checked into rules; a bad one is named by its index."""
    shape = f"{key} must be a list of tables with paths, effort and optionally model"
    found = []
    for where, table in tables(key, value, shape, ("paths", "effort", "model")):
        paths = glob_list(where, table.get("paths"))
        effort, model = table.get("effort"), table.get("model", "main")
        if effort not in ROUTE_EFFORTS:
            raise ConfigError(
                f"{where}.effort must be one of {', '.join(ROUTE_EFFORTS)}, not {effort!r}"
            )
        if model not in ENDPOINTS:
            raise ConfigError(f"{where}.model must be one of {', '.join(ENDPOINTS)}, not {model!r}")
        found.append(RouteRule(paths, effort, model))
    return found


def rule_effort(rule: RouteRule) -> Effort | None:
    """A rule's effort as a route carries it (``skip``: none)."""
    return next((e for e in EFFORTS if e == rule.effort), None)

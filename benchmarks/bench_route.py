"""The router on real history (issue 35): routes and tokens over the last commits of the
six shared repositories.

The last :data:`LAST` first-parent commits of each, each as a change (``c^..c``) routed
as the review core routes it with the default settings (effort ``max``, so only
*formatting only* and *docs only* lower it; *sensitive* keeps ``max``):

- **Share of changes per route**: formatting only (no request), docs only (``low``),
  sensitive (``max``), the configured effort (``max``).
- **Prompt tokens** of the routed reviews against every change at ``max`` (routing off),
  as the plan estimates them (``bot.review.token_estimate``, the K3 stub's 4 characters
  per token; related code left out of both, the same for each).
- **Thinking tokens**: the stub cannot think, so they are counted per request at
  :data:`THINKING` for each effort, a stated assumption (not K3's measured behaviour):
  the row shows what routing saves *if* thinking scales so; ``replay --compare`` with
  the real model is where it is measured, and whether routing costs findings.

Needs the bundles (``GITNEURAL_REPO_BUNDLES`` or ``shared/fixtures/repos`` above the
checkout).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import pygit2

from benchmarks.common import Row, row
from benchmarks.standalone import main
from bot.domain.change import Change
from bot.effort import Effort
from bot.git.repo import range_change
from bot.review import PlanOptions, ReviewPlan, plan_review
from bot.settings.repository import Config
from tests.support.real_repos import REPOSITORIES, checkout

LAST = 100
QUICK_LAST = 10
QUICK_REPOSITORIES = ("cJSON",)
ROUTES = ("formatting", "docs", "sensitive", "configured")
#: Thinking tokens per request, by effort: an assumption (see the module docstring).
THINKING: dict[Effort, int] = {"low": 1_000, "high": 4_000, "max": 8_000}


@dataclass
class Tally:
    changes: int = 0
    routes: Counter[str] = field(default_factory=Counter)
    prompt_routed: int = 0
    prompt_max: int = 0
    thinking_routed: int = 0
    thinking_max: int = 0

    def add(self, other: Tally) -> None:
        self.changes += other.changes
        self.routes.update(other.routes)
        self.prompt_routed += other.prompt_routed
        self.prompt_max += other.prompt_max
        self.thinking_routed += other.thinking_routed
        self.thinking_max += other.thinking_max


def last_commits(path: str, count: int) -> list[tuple[str, str]]:
    """``(parent, commit)`` of the newest ``count`` first-parent commits with a parent."""
    repo = pygit2.Repository(path)
    walker = repo.walk(repo.head.target, pygit2.enums.SortMode.TOPOLOGICAL)
    walker.simplify_first_parent()
    found: list[tuple[str, str]] = []
    for c in walker:
        if c.parents:
            found.append((str(c.parents[0].id), str(c.id)))
        if len(found) == count:
            break
    return found


def _requests(plan: ReviewPlan) -> int:
    return len(plan.groups)


def _plan(change: Change, config: Config, routed: bool) -> ReviewPlan:
    return plan_review(change, config, PlanOptions(effort="max", related=False, routed=routed))


def tally(name: str, count: int) -> Tally:
    path = str(checkout(name))
    repo = pygit2.Repository(path)
    config = Config()
    out = Tally()
    for base, head in last_commits(path, count):
        change = range_change(repo, base, head)
        at_max = _plan(change, config, routed=False)
        routed = _plan(change, config, routed=True)
        route = routed.route
        assert route is not None
        out.changes += 1
        out.routes[route.name] += 1
        out.prompt_max += at_max.estimated_tokens
        out.thinking_max += _requests(at_max) * THINKING["max"]
        if not route.skip:
            out.prompt_routed += routed.estimated_tokens
            out.thinking_routed += _requests(routed) * THINKING[routed.effort]
    return out


def _rows(label: str, t: Tally) -> list[Row]:
    rows = [
        row(f"route, {label}: {name} share", round(100 * t.routes[name] / t.changes, 1), "%")
        for name in ROUTES
    ]
    prompt = t.prompt_routed / t.prompt_max if t.prompt_max else 1.0
    both_max = t.prompt_max + t.thinking_max
    both = (t.prompt_routed + t.thinking_routed) / both_max if both_max else 1.0
    rows += [
        row(f"route, {label}: prompt tokens routed vs all at max", round(100 * prompt, 1), "%"),
        row(
            f"route, {label}: prompt + thinking tokens routed vs all at max (thinking assumed)",
            round(100 * both, 1),
            "%",
        ),
    ]
    return rows


def run(quick: bool = False) -> list[Row]:
    count = QUICK_LAST if quick else LAST
    total = Tally()
    rows: list[Row] = []
    for name in QUICK_REPOSITORIES if quick else REPOSITORIES:
        found = tally(name, count)
        total.add(found)
        rows += _rows(f"{name} ({found.changes} changes)", found)
    rows.insert(0, row("route: changes routed", total.changes, "changes"))
    rows += _rows(f"all ({total.changes} changes)", total)
    return rows


if __name__ == "__main__":
    raise SystemExit(main(run))

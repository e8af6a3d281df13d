"""Related code ranked by the reference graph: the definitions and callers tied to the
change come first, so they are the ones that fit the token budget."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.code.grammars import available
from bot.code.index import SymbolIndex
from bot.domain.change import Change
from bot.git.repo import TreeSnapshot, range_change
from bot.review.plan import PlanOptions, plan_review
from bot.review.related.finder import RelatedLimits
from bot.review.related.ranking import Ties, file_ranks, personalised_pagerank, used_by_added
from tests.fakes.k3.brain import config
from tests.support.repos import commit, make_repo

pytestmark = pytest.mark.skipif(not available("go"), reason="needs the parsers extra")

# A Go service: the handler (changed) leans on store/orders.go; pkg/legacy.go sits in the
# handler's own folder and defines a Parse of its own, but nothing ties it to the handler.
HANDLER = """package pkg

import "example.com/svc/store"

func Handle(id string) error {
	order := store.Load(id)
	return store.Save(order)
}
"""
HANDLER_NEW = """package pkg

import "example.com/svc/store"

func Handle(id string) error {
	order := store.Load(id)
	order.Total = Parse(order.Raw)
	return store.Save(order)
}
"""
LEGACY = """package pkg

// Parse reads the old format.
func Parse(raw string) int {
	return len(raw)
}
"""
ORDERS = """package store

type Order struct {
	Raw   string
	Total int
}

// Load reads one order.
func Load(id string) Order {
	return Order{Raw: id}
}

// Save writes one order.
func Save(o Order) error {
	return nil
}

// Parse reads an order's amount.
func Parse(raw string) int {
	return 0
}
"""
REPORT = """package report

import "example.com/svc/store"

func Monthly() int {
	return store.Load("m").Total
}
"""
UNRELATED = """package tools

func Lint() int {
	return 1
}
"""


@pytest.fixture
def change(tmp_path: Path) -> Change:
    repo = make_repo(tmp_path / "svc")
    files = {
        "pkg/handler.go": HANDLER,
        "pkg/legacy.go": LEGACY,
        "store/orders.go": ORDERS,
        "report/monthly.go": REPORT,
        "tools/lint.go": UNRELATED,
    }
    base = commit(repo, files, "base")
    head = commit(repo, {"pkg/handler.go": HANDLER_NEW}, "handler: parse the total")
    return range_change(repo, str(base.id), str(head.id))


def _index(change: Change) -> SymbolIndex:
    assert isinstance(change.head, TreeSnapshot)
    return SymbolIndex.build(change.head)


def test_the_pagerank_favours_what_the_seeds_are_tied_to() -> None:
    graph = {
        "a": {"b": 3.0, "c": 1.0},
        "b": {"a": 3.0, "d": 1.0},
        "c": {"a": 1.0},
        "d": {"b": 1.0},
        "lone": {},
    }
    ranks = personalised_pagerank(lambda p: graph.get(p, {}), ["a"])
    assert ranks["a"] > ranks["b"] > ranks["c"] > 0
    assert ranks["b"] > ranks["d"] > 0  # two steps away is less than one
    assert "lone" not in ranks
    assert sum(ranks.values()) == pytest.approx(1.0, abs=0.01)
    assert personalised_pagerank(lambda p: graph.get(p, {}), []) == {}


def test_files_are_tied_by_the_names_they_use_and_define(change: Change) -> None:
    index = _index(change)
    ties = Ties(index)
    handler = ties("pkg/handler.go")
    # Load and Save are defined only in store/orders.go; Parse in two files, shared.
    assert handler["store/orders.go"] > handler["pkg/legacy.go"] > 0
    assert "tools/lint.go" not in handler
    # Symmetric: what the handler uses is tied back to it.
    assert ties("store/orders.go")["pkg/handler.go"] == pytest.approx(handler["store/orders.go"])
    ranks = file_ranks(index, ["pkg/handler.go"])
    assert ranks["store/orders.go"] > ranks["pkg/legacy.go"]
    assert ranks["report/monthly.go"] > 0  # through store/orders.go
    assert "tools/lint.go" not in ranks


def test_used_names_come_ranked_and_only_when_defined_in_the_repository(
    change: Change,
) -> None:
    index = _index(change)
    ranks = file_ranks(index, ["pkg/handler.go"])
    names = used_by_added(index, change.diff.files, ranks)
    # The one added line uses Parse (defined in two files): nothing else it names is
    # defined here, and the unchanged lines' Load and Save are not "used by added lines".
    assert names == ["Parse"]


def _one_site_each(change: Change) -> str:
    """The related code of a review that may show one site of every name."""
    limits = RelatedLimits(max_sites=1)
    plan = plan_review(
        change,
        config(),
        PlanOptions(effort="low", related_limits=limits, symbol_index=_index(change)),
    )
    return plan.groups[0].extra_context


def test_the_definition_shown_is_the_one_the_change_is_tied_to(change: Change) -> None:
    # One site per name: folder distance alone would pick pkg/legacy.go (the changed
    # file's own folder); the reference graph ties the handler to store/orders.go.
    extra = _one_site_each(change)
    assert "Definition of Parse (used by this change):" in extra
    assert "store/orders.go: lines" in extra
    assert "pkg/legacy.go" not in extra


def test_a_tight_budget_keeps_the_most_relevant_and_says_what_was_left_out(
    tmp_path: Path,
) -> None:
    repo = make_repo(tmp_path / "svc")
    files = {
        "pkg/handler.go": HANDLER,
        "store/orders.go": ORDERS,
        # Long, and defined in three files: the least telling of the names used.
        **{
            f"fmt{i}/pretty.go": f"package fmt{i}\n\nfunc Pretty(s string) string {{\n"
            + "\t// formatting\n" * 11
            + "\treturn s\n}\n"
            for i in range(3)
        },
    }
    base = commit(repo, files, "base")
    new = HANDLER.replace(
        "return store.Save(order)", "_ = Pretty(order.Raw)\n\treturn Parse2(order)"
    )
    new += "\nfunc Parse2(o store.Order) error {\n\treturn store.Save(o)\n}\n"
    head = commit(repo, {"pkg/handler.go": new}, "pretty")
    change = range_change(repo, str(base.id), str(head.id))
    index = _index(change)
    ranks = file_ranks(index, ["pkg/handler.go"])
    ranked = used_by_added(index, change.diff.files, ranks)
    assert set(ranked) == {"Save", "Order", "Pretty"}
    assert ranked[-1] == "Pretty"
    whole = plan_review(change, config(), PlanOptions(effort="low", symbol_index=index))
    assert "Definition of Pretty" in whole.groups[0].extra_context
    room = RelatedLimits(max_tokens=140, min_tokens=10)
    tight = plan_review(
        change, config(), PlanOptions(effort="low", related_limits=room, symbol_index=index)
    )
    extra = tight.groups[0].extra_context
    # The two definitions tied to the change fit, each shown to its unit's last line
    # (not definition_lines); the ambiguous, far one is what is left out.
    assert extra.startswith("Definition of Order (used by this change):")
    assert "store/orders.go: lines 3-6 of 21" in extra
    assert "Definition of Save (used by this change):" in extra
    assert "store/orders.go: lines 14-16 of 21" in extra
    assert "Pretty" not in extra
    assert extra.endswith("[more related code left out: the prompt's token budget]")


def test_the_caller_in_another_file_is_shown_before_the_changed_files_own(
    tmp_path: Path,
) -> None:
    repo = make_repo(tmp_path / "svc")
    own = ORDERS + "\nfunc Reload(id string) Order {\n\treturn Load(id)\n}\n"
    base = commit(repo, {"store/orders.go": own, "report/monthly.go": REPORT}, "base")
    changed = own.replace("return Order{Raw: id}", "return Order{Raw: id, Total: 1}")
    head = commit(repo, {"store/orders.go": changed}, "load: a total")
    change = range_change(repo, str(base.id), str(head.id))
    extra = _one_site_each(change)
    assert "Callers of Load (changed by this change):" in extra
    assert "report/monthly.go: lines" in extra


def test_without_the_index_the_walk_is_unchanged(change: Change) -> None:
    plan = plan_review(change, config(), PlanOptions(effort="low"))
    # The regex probes look Parse up nearest first: the handler's own folder.
    assert "pkg/legacy.go: lines" in plan.groups[0].extra_context


def test_the_pagerank_stops_at_its_deadline() -> None:
    """Issue 31, row 11: past its deadline no mass is pushed; the seeds keep what they
    have (nothing), and what was ranked is all there is."""
    graph = {"a": {"b": 1.0}, "b": {"a": 1.0}}
    assert personalised_pagerank(lambda p: graph[p], ["a"], deadline=0.0) == {}
    assert personalised_pagerank(lambda p: graph[p], ["a"], deadline=None)["a"] > 0


def test_related_code_stops_at_its_deadline(change: Change) -> None:
    """Issue 31, row 11: the related-code stage with the index has a deadline of its own;
    past it the stage stops with what it found (here: nothing, in no time at all)."""
    index = _index(change)
    config_ = config()
    on_time = plan_review(change, config_, PlanOptions(effort="low", symbol_index=index))
    assert "Definition of Parse" in on_time.groups[0].extra_context
    assert "stopped early" not in on_time.groups[0].extra_context
    late = PlanOptions(
        effort="low", symbol_index=index, related_limits=RelatedLimits(deadline_s=0.0)
    )
    assert plan_review(change, config_, late).groups[0].extra_context == ""


def test_references_are_served_from_one_table(change: Change) -> None:
    """``references`` answers from a table made once, with what the old scan gave: every
    use of the name, by path and line, in path order."""
    index = _index(change)
    found = [(r.path, r.kind, r.line) for r in index.references("Load")]
    expected = [
        (path, kind, line)
        for path in sorted(index.files)
        for name, kind, line in index.files[path].references
        if name == "Load"
    ]
    assert found == expected and len(found) >= 2
    assert index.is_called("Load") and not index.is_called("Order")
    assert index.reference_rows("Load")[0] == [p for p, _, _ in expected]

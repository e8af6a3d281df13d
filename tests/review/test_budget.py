"""The token estimator and packing files into the prompt budget."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.git.repo import range_change
from bot.review.context.file_context import FileContext, build_file_context
from bot.review.packing.fit import CONTEXT_STEP, file_cost, pack
from bot.review.token_estimate import estimate_tokens
from tests.support.repos import commit, make_repo


def test_estimate_counts_started_groups_of_three_utf8_bytes() -> None:
    assert estimate_tokens("") == 0
    assert estimate_tokens("a") == 1
    assert estimate_tokens("abc") == 1
    assert estimate_tokens("abcd") == 2
    assert estimate_tokens("é") == 1  # 2 bytes
    assert estimate_tokens("日本語") == 3  # 9 bytes: one token per CJK character
    # Undecodable bytes kept by surrogateescape count as the one byte they were.
    assert estimate_tokens(b"ab\xff".decode("utf-8", "surrogateescape")) == 1


def test_estimate_over_counts_ordinary_source_code() -> None:
    # BPE tokenizers spend 3.5-4.5 bytes per token on code; the estimate assumes 3.
    source = Path(__file__).read_text(encoding="utf-8")
    assert estimate_tokens(source) >= len(source.encode()) / 3.5


@given(st.text(), st.text())
def test_estimate_is_monotone(a: str, b: str) -> None:
    whole = estimate_tokens(a + b)
    assert whole >= max(estimate_tokens(a), estimate_tokens(b))
    assert whole <= estimate_tokens(a) + estimate_tokens(b)


def _module(tag: str, functions: int) -> str:
    return "".join(
        f"def {tag}_{i}(x):\n"
        + "".join(f"    v{k} = x + {k}\n" for k in range(12))
        + f"    return v0  # {tag}\n\n\n"
        for i in range(functions)
    )


@pytest.fixture(scope="module")
def contexts(tmp_path_factory: pytest.TempPathFactory) -> list[FileContext]:
    """Six real files of growing size, each with its enclosing functions as context."""
    repo = make_repo(tmp_path_factory.mktemp("repo"))
    sizes = {f"pkg/m{n}.py": n for n in (1, 2, 3, 5, 8, 13)}
    first = commit(repo, {p: _module("old", n) for p, n in sizes.items()})
    commit(
        repo, {p: _module("old", n).replace("v6 = x + 6", "v6 = x - 6") for p, n in sizes.items()}
    )
    change = range_change(repo, str(first.id))
    items = [build_file_context(f, change.head, expand=True) for f in change.diff]
    assert all(item.context_text for item in items)
    return sorted(items, key=lambda item: item.tokens)


def test_everything_fits_with_context(contexts: list[FileContext]) -> None:
    packed, skipped = pack(contexts, sum(map(file_cost, contexts)))
    assert packed == contexts
    assert skipped == []


def test_coverage_first_then_context_in_order(contexts: list[FileContext]) -> None:
    bare = [c.bare() for c in contexts]
    # Room for every bare diff and the context of the first two files only.
    budget = sum(map(file_cost, bare)) + sum(
        c.tokens - b.tokens for c, b in zip(contexts, bare, strict=True)
    )
    budget -= sum(c.tokens - b.tokens for c, b in list(zip(contexts, bare, strict=True))[2:])
    # The room for context is granted in steps: one step more holds the first two whole.
    budget += max(1, int(budget * CONTEXT_STEP))
    packed, skipped = pack(contexts, budget)
    assert skipped == []
    assert [p.file.path for p in packed] == [c.file.path for c in contexts]
    assert packed[:2] == contexts[:2]
    assert all(p.context_text == "" for p in packed[2:])
    assert packed[2:] == bare[2:]


def test_what_does_not_fit_bare_is_skipped_with_its_size(contexts: list[FileContext]) -> None:
    bare = [c.bare() for c in contexts]
    # Everything but the largest file fits bare.
    budget = sum(map(file_cost, bare[:-1]))
    packed, skipped = pack(contexts, budget)
    assert [p.file.path for p in packed] == [c.file.path for c in contexts[:-1]]
    assert [(s.path, s.reason) for s in skipped] == [
        (contexts[-1].file.path, f"over the token budget ({file_cost(bare[-1])} tokens)")
    ]


def test_a_later_small_file_still_fits_after_a_big_one_is_skipped(
    contexts: list[FileContext],
) -> None:
    items = [contexts[-1], contexts[0]]
    packed, skipped = pack(items, file_cost(contexts[0].bare()))
    assert [p.file.path for p in packed] == [contexts[0].file.path]
    assert [s.path for s in skipped] == [contexts[-1].file.path]


def test_zero_budget_skips_everything_and_says_so(contexts: list[FileContext]) -> None:
    packed, skipped = pack(contexts, 0)
    assert packed == []
    assert [s.path for s in skipped] == [c.file.path for c in contexts]
    assert all(s.reason.startswith("over the token budget (") for s in skipped)


@given(st.integers(min_value=0, max_value=12_000))
def test_packing_invariants_at_any_budget(contexts: list[FileContext], budget: int) -> None:
    contexts = contexts[::2] + contexts[1::2]  # not sorted by size
    packed, skipped = pack(contexts, budget)
    paths = [c.file.path for c in contexts]
    # Never dropped silently: each file is packed or skipped, and the order is kept.
    assert sorted([p.file.path for p in packed] + [s.path for s in skipped]) == sorted(paths)
    assert [p.file.path for p in packed] == [p for p in paths if p in {q.file.path for q in packed}]
    assert sum(map(file_cost, packed)) <= budget
    # Each packed file is the full context or its bare diff, nothing else.
    by_path = {c.file.path: c for c in contexts}
    for p in packed:
        assert p in (by_path[p.file.path], by_path[p.file.path].bare())
    # More budget never reviews fewer files.
    more, _ = pack(contexts, budget + 500)
    assert len(more) >= len(packed)


def test_a_few_tokens_less_do_not_take_context_away_within_a_step(
    contexts: list[FileContext],
) -> None:
    """A re-review's prompt grows by a few tokens elsewhere (a commit added to the
    description): on a full budget, the files that show context stay the same unless the
    room crosses a step, so K3's prefix cache keeps serving the files after them."""
    bare = sum(file_cost(c.bare()) for c in contexts)

    def step(budget: int) -> int:
        return max(1, int(budget * CONTEXT_STEP))

    # A file whose context does not end on a step: the room around it, within that step.
    for first in contexts:
        extra = first.tokens - first.bare().tokens
        size = step(bare + extra)
        low = extra - extra % size
        if extra % size and step(bare + low) == size == step(bare + low + size - 1):
            break
    else:
        raise AssertionError("every file's context ends on a step: pick other files")
    items = [first, *(c for c in contexts if c is not first)]
    just_short = pack(items, bare + extra - 1)  # one token short of the first file's context
    enough = pack(items, bare + low + size - 1)  # room for it, in the same step
    assert just_short == enough
    assert just_short[0][0].context_text == ""
    assert pack(items, bare + low + size)[0][0].context_text  # the next step holds it

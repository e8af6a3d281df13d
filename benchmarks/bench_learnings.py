"""Prompt tokens the repository's learnings add to a review.

On one change of real code (:mod:`benchmarks.corpus`), the one-shot review prompt is
planned with 0, 10 and 50 learnings of a typical length (about 120 characters: "Do not
report …; we …"), and with 60 that fill the cap (50 rules, 8,000 characters: 10 left
out), and each is sent once to the K3 stub. Rows: the tokens each adds over none, by the
core's estimator (one token per 3 bytes, an over-count) and as the stub counted the
request; the most the cap lets learnings add is held to a budget. The system message's
paragraph on learnings (sent in every prompt, learnings or not) is counted apart. Quick mode uses a
smaller change; the learnings are the same.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from benchmarks.common import Row, k3_stub, row
from benchmarks.corpus import BASE_BRANCH, add_change, build_repo, source_files
from benchmarks.standalone import main
from bot.domain.change import Change
from bot.domain.learnings import Learning
from bot.git.repo import range_change
from bot.llm.client import K3Client
from bot.llm.settings import LLMSettings
from bot.review import PlanOptions, plan_review, review
from bot.review.prompt import SYSTEM_TEMPLATE, render_template
from bot.review.token_estimate import estimate_tokens
from bot.settings.repository import Config
from tests.fakes.k3 import Reply

FILES = 10
QUICK_FILES = 3
COUNTS = (0, 10, 50)
#: The most the cap (50 rules, 8,000 characters) may add, as the core estimates it.
CAP_BUDGET_TOKENS = 3_200

_TOPICS = ("migrations", "the retry helper", "logging calls", "test fixtures", "the CLI")


def typical(n: int) -> list[Learning]:
    """``n`` rules of about 120 characters, as teams write them."""
    return [
        Learning(
            i,
            f"Do not report missing type hints in {_TOPICS[i % len(_TOPICS)]}; we check them "
            f"with mypy in CI (rule {i}), so a finding there is noise.",
        )
        for i in range(1, n + 1)
    ]


def at_the_cap() -> list[Learning]:
    """60 rules of 160 characters: 50 fill 8,000 characters, 10 are left out."""
    return [
        Learning(i, (f"Rule {i:02}: " + "keep this convention; " * 8)[:160]) for i in range(1, 61)
    ]


def _submit_at_once(body: dict[str, object]) -> Reply:
    return Reply(
        reasoning="Reviewed.",
        tool_calls=[("submit_review", {"summary": "Reviewed.", "findings": []})],
    )


def _stub_tokens(change: Change, config: Config, learnings: list[Learning]) -> int:
    """Prompt tokens of the review's one request, as the K3 stub counted them."""
    with k3_stub(brain=_submit_at_once) as stub:
        client = K3Client(LLMSettings(api_key=stub.api_key, base_url=stub.base_url, effort="low"))
        review(change, config, client, learnings=learnings)
        [request] = stub.chat_requests
    return int((request.usage or {}).get("prompt_tokens", 0))


def run(quick: bool = False) -> list[Row]:
    files = QUICK_FILES if quick else FILES
    with tempfile.TemporaryDirectory(prefix="gitneural-bench-learnings-") as tmp:
        repo = build_repo(Path(tmp) / "repo.git", source_files(files))
        change = range_change(
            repo, BASE_BRANCH, add_change(repo, "learn", source_files(files), hunks=3, inserted=2)
        )
        config = Config()
        cases = [(f"{n} learnings", typical(n)) for n in COUNTS]
        cases.append(("60 learnings at the cap (50 shown, 8,000 characters)", at_the_cap()))
        estimated: dict[str, int] = {}
        counted: dict[str, int] = {}
        left_out: dict[str, int] = {}
        for name, learnings in cases:
            plan = plan_review(change, config, PlanOptions(effort="low", learnings=learnings))
            estimated[name] = plan.estimated_tokens
            left_out[name] = len(plan.learnings.left_out)
            counted[name] = _stub_tokens(change, config, learnings)
    label = f"{len(change.diff)}-file change"
    base = cases[0][0]
    rows = [row(f"review prompt tokens, {label}, no learnings", estimated[base])]
    for name, _ in cases[1:]:
        added = estimated[name] - estimated[base]
        stub_added = counted[name] - counted[base]
        capped = name.startswith("60")
        rows.append(
            row(
                f"tokens {name} add",
                added,
                "",
                f"<= {CAP_BUDGET_TOKENS:,}" if capped else "",
                added <= CAP_BUDGET_TOKENS if capped else None,
            )
        )
        rows.append(row(f"  as the K3 stub counted: {name}", stub_added))
    cap = cases[-1][0]
    rows.append(row("learnings left out at the cap (named in the summary)", left_out[cap]))
    rows.append(row("tokens of the system message's rule on learnings (every prompt)", _rule()))
    return rows


def _rule() -> int:
    """The system message's paragraph on learnings: sent with or without any."""
    system = render_template(SYSTEM_TEMPLATE, agentic=False)
    [paragraph] = [p for p in system.split("\n\n") if p.startswith("Learnings, when")]
    return estimate_tokens(paragraph)


if __name__ == "__main__":
    raise SystemExit(main(run))

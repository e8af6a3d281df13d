"""Large changes: groups of related files, reviewed in parallel with bounded concurrency,
merged, with coverage stated; a 3,000-file change finishes."""

from __future__ import annotations

import json
import re
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from bot.domain.change import Change
from bot.errors import ModelConfigError
from bot.git.repo import range_change
from bot.llm.client import K3Client
from bot.llm.settings import LLMSettings
from bot.review.packing.fit import file_cost
from bot.review.packing.groups import GROUP_LIMIT, module_stem, split_files
from bot.review.pipeline import review
from bot.review.plan import PlanOptions, ReviewPlan, plan_review
from bot.review.prompt import overhead_tokens, submit_review_tool
from bot.review.selection import SUBMODULE
from bot.review.token_estimate import estimate_tokens
from tests.fakes.k3 import K3Stub, Reply
from tests.fakes.k3.brain import (
    call,
    client_for,
    config,
    results_by_call,
    submit,
    tools_reply,
    user_text,
)
from tests.support.repos import Gitlink, commit, make_repo


@pytest.mark.parametrize(
    ("path", "stem", "is_test"),
    [
        ("tests/test_url.py", "url", True),
        ("src/url.py", "url", False),
        ("pkg/url_test.go", "url", True),
        ("web/url.spec.ts", "url", True),
        ("web/url.test.tsx", "url", True),
        ("src/main/java/UrlTest.java", "Url", True),
        ("src/latest.py", "latest", False),
        ("tests/helpers.py", "helpers", True),
        ("tests/__init__.py", "__init__", False),
    ],
)
def test_module_stem(path: str, stem: str, is_test: bool) -> None:
    assert module_stem(path) == (stem, is_test)


def _module(name: str, body: str = "", lines: int = 30) -> str:
    filler = "".join(f"    value_{i} = {i}\n" for i in range(lines))
    return f"def {name}(x):\n{filler}    return x\n{body}"


def _changed(source: str) -> str:
    return source.replace("    return x\n", "    return x + 1\n", 1)


@pytest.fixture
def mixed(tmp_path: Path) -> Change:
    files = {
        "pkg/url.py": _module("parse"),
        "pkg/http.py": _module("fetch"),
        "tests/test_url.py": _module("test_parse"),
        "aaa/one.py": _module("one"),
        "aaa/two.py": _module("two"),
        "mmm/m1.py": _module("m1"),
        "mmm/m2.py": _module("m2"),
        "zzz/z1.py": _module("z1"),
        "zzz/z2.py": _module("z2"),
    }
    repo = make_repo(tmp_path / "repo")
    commit(repo, files, "base")
    head = {p: _changed(s) for p, s in files.items()}
    # http.py now uses the url module: the two belong together.
    head["pkg/http.py"] = head["pkg/http.py"].replace("return x + 1", "return url.parse(x)")
    commit(repo, head, "change them all")
    return range_change(repo, "HEAD~1", "HEAD")


def _group_of(groups: list[Any], path: str) -> int:
    return next(i for i, g in enumerate(groups) if path in {f.file.path for f in g.files})


def test_groups_keep_related_files_together(mixed: Change) -> None:
    whole = plan_review(mixed, config(), PlanOptions(effort="low", related=False))
    files = whole.files
    per_file = max(file_cost(f) for f in files)
    groups, skipped = split_files(files, per_file * 3, max_groups=40)
    assert skipped == []
    assert all(sum(file_cost(f) for f in g.files) <= per_file * 3 for g in groups)
    assert _group_of(groups, "tests/test_url.py") == _group_of(groups, "pkg/url.py")
    assert _group_of(groups, "pkg/http.py") == _group_of(groups, "pkg/url.py")
    for a, b in [
        ("aaa/one.py", "aaa/two.py"),
        ("mmm/m1.py", "mmm/m2.py"),
        ("zzz/z1.py", "zzz/z2.py"),
    ]:
        assert _group_of(groups, a) == _group_of(groups, b)
    again, _ = split_files(list(reversed(files)), per_file * 3, max_groups=40)
    assert [[f.file.path for f in g.files] for g in again] == [
        [f.file.path for f in g.files] for g in groups
    ]


def test_a_file_too_large_for_any_prompt_is_skipped(mixed: Change) -> None:
    files = plan_review(mixed, config(), PlanOptions(effort="low", related=False)).files
    groups, skipped = split_files(files, 60, max_groups=40)
    assert groups == [] and len(skipped) == len(files)
    assert all(s.reason.startswith("over the token budget (") for s in skipped)


def _half_the_files(whole: ReviewPlan) -> int:
    """A prompt budget about half of the change's files fit in, whatever the prompt's
    fixed part (the system message, the tools) costs."""
    fixed = overhead_tokens(change=whole.change, skipped=[], instructions=whole.instructions)
    # Files shed their context before they are left out: count them bare.
    return fixed + sum(file_cost(f.bare()) for f in whole.files) // 2


def test_a_split_plan_renders_one_prompt_per_group(mixed: Change) -> None:
    whole = plan_review(mixed, config(), PlanOptions(effort="low"))
    assert not whole.split
    budget = _half_the_files(whole)
    plan = plan_review(mixed, config(review__max_prompt_tokens=budget), PlanOptions(effort="low"))
    assert plan.split and plan.skipped == []
    assert sorted(f.file.path for f in plan.files) == sorted(f.path for f in mixed.diff.files)
    for group in plan.groups:
        # The budget holds for the prompt's text and tools, as the packing counts them
        # (``estimated_tokens`` also counts the JSON escaping of the request body).
        text = "".join(str(m["content"]) for m in group.messages)
        tools = json.dumps([submit_review_tool()])
        assert estimate_tokens(text) + estimate_tokens(tools) <= budget
        assert group.estimated_tokens <= budget * 1.05
        shown = re.findall(r'^## File "([^"]+)"', group.messages[1]["content"], re.MULTILINE)
        assert shown == sorted(f.file.path for f in group.files)


# -- the 3,000-file change ---------------------------------------------------------------


@pytest.fixture(scope="module")
def huge(tmp_path_factory: pytest.TempPathFactory) -> Change:
    files: dict[str, Any] = {
        f"pkg{d:02}/mod{i:02}.py": _module(f"f{d}_{i}", lines=6)
        for d in range(60)
        for i in range(50)
    }
    repo = make_repo(tmp_path_factory.mktemp("huge") / "repo")
    # On a branch that is not checked out: no 3,000 files written to a work tree.
    commit(repo, {**files, "vendored": Gitlink("1" * 40)}, "base", branch="big")
    head: dict[str, Any] = {p: _changed(s) for p, s in files.items()}
    head["vendored"] = Gitlink("2" * 40)
    head["poetry.lock"] = "lock\n"
    commit(repo, head, "touch every module", branch="big")
    return range_change(repo, "big~1", "big")


class Tracker:
    """A brain that thinks a little, counts parts in flight, and flags each part's first file."""

    def __init__(self, agentic: bool = False) -> None:
        self.lock = threading.Lock()
        self.active = 0
        self.peak = 0
        self.agentic = agentic

    def __call__(self, body: dict[str, Any]) -> Reply:
        with self.lock:
            self.active += 1
            self.peak = max(self.peak, self.active)
        try:
            time.sleep(0.05)  # the model thinking: parts overlap only if run in parallel
            text = user_text(body)
            path = re.search(r'^## File "([^"]+)"', text, re.MULTILINE)
            line = re.search(r"^R(\d+)\s+\+(.*)$", text, re.MULTILINE)
            assert path and line
            if self.agentic and not results_by_call(body):
                return tools_reply(call("read_file", path=path[1], start_line=1, end_line=3))
            finding = {
                "path": path[1],
                "start_line": int(line[1]),
                "end_line": int(line[1]),
                "side": "RIGHT",
                "severity": "minor",
                "category": "bug",
                "title": f"Off by one in {path[1]}",
                "body": "x + 1 is returned where x was.",
                "evidence": line[2],
            }
            return submit(f"Reviewed the part starting at {path[1]}.", [finding])
        finally:
            with self.lock:
                self.active -= 1


def test_a_3000_file_change_finishes_with_coverage_stated(huge: Change) -> None:
    tracker = Tracker()
    cfg = config(review__max_prompt_tokens=80_000, agent__concurrency=3, review__max_comments=100)
    started = time.monotonic()
    with K3Stub(brain=tracker) as stub:
        result = review(huge, cfg, client_for(stub, "low"))
        requests = stub.chat_requests
    elapsed = time.monotonic() - started
    print(f"3,000-file change: {elapsed:.1f} s, {len(requests)} parts")
    parts = int(re.search(r"reviewed in (\d+) parts", result.summary)[1])  # type: ignore[index]
    assert 4 <= parts <= 40 and len(requests) == parts
    assert all(r.status == 200 for r in requests) and stub.brain_errors == []
    assert 2 <= tracker.peak <= 3
    assert len(result.coverage.reviewed) == 3000
    skipped = {s.path: s.reason for s in result.coverage.skipped}
    assert skipped == {"vendored": SUBMODULE, "poetry.lock": "ignored by '*.lock'"}
    every = set(result.coverage.reviewed) | set(skipped)
    assert every == {f.path for f in huge.diff.files}
    assert result.summary.endswith(
        "Coverage: 3,000 of 3,002 changed files reviewed; not reviewed: "
        "1 ignored by a glob, 1 submodule pointer change."
    )
    assert len(result.findings) == parts and result.usage.requests == parts
    assert all(f.placement == "inline" for f in result.findings)


def test_agentic_parts_and_the_group_limit(huge: Change) -> None:
    tracker = Tracker(agentic=True)
    cfg = config(review__max_prompt_tokens=150_000, agent__concurrency=2)
    with K3Stub(brain=tracker) as stub:
        result = review(huge, cfg, client_for(stub, "high"), max_groups=2, related=False)
        requests = stub.chat_requests
    assert len(requests) == 4 and tracker.peak <= 2
    assert [r.assistant_checked for r in requests].count(1) == 2
    limited = [s for s in result.coverage.skipped if s.reason == GROUP_LIMIT.format(n=2)]
    assert limited and len(result.coverage.reviewed) + len(limited) == 3000
    assert f"{len(limited):,} over the limit of 2 review parts for one change" in result.summary


def test_a_failed_part_is_listed_and_the_others_kept(mixed: Change) -> None:
    whole = plan_review(mixed, config(), PlanOptions(effort="low"))
    cfg = config(review__max_prompt_tokens=_half_the_files(whole))

    def brain(body: dict[str, Any]) -> Reply:
        if '## File "aaa/one.py"' in user_text(body):
            return Reply(content="I refuse to use the tool.")
        return submit("Fine.")

    with K3Stub(brain=brain) as stub:
        result = review(mixed, cfg, client_for(stub, "low"))
    failed = [s for s in result.coverage.skipped if "failed" in s.reason]
    assert "aaa/one.py" in {s.path for s in failed}
    assert "aaa/one.py" not in result.coverage.reviewed and result.coverage.reviewed
    assert "not reviewed: the review of its part failed" in failed[0].reason
    assert len(result.coverage.reviewed) + len(failed) == len(mixed.diff.files)


def test_a_rejected_key_stops_every_part(huge: Change) -> None:
    cfg = config(review__max_prompt_tokens=80_000, agent__concurrency=2)
    with K3Stub() as stub:
        client = K3Client(LLMSettings(api_key="sk-wrong", base_url=stub.base_url, effort="low"))
        with pytest.raises(ModelConfigError):
            review(huge, cfg, client, related=False)
        sent = len(stub.chat_requests)
    parts = len(plan_review(huge, cfg, PlanOptions(effort="low", related=False)).groups)
    # Parts not started yet were cancelled: at most the two running ones asked.
    assert parts >= 4 and 1 <= sent <= 2

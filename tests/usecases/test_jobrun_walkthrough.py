"""A review job's walkthrough, linked issues and instructions, in process: the fake
GitHub (REST, GraphQL run against GitHub's schema, git), the K3 stub, real git.

What each costs in GitHub requests is asserted exactly: a first review without a linked
issue makes today's six; one that names an issue GitHub links asks GraphQL once (which
carries it); one into another branch reads each named issue by REST; after an earlier
review the threads query carries GitHub's links at no extra request.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bot.render.github import parse_marker
from bot.usecases.review.run import run_review_job
from tests.support.job_world import CONFIG, REPO, World, job_world, submit
from tests.support.planted import PLANTED, PLANTED_BUG
from tests.support.walkthrough import DIAGRAM

TODAY = [
    ("GET", f"/repos/{REPO}/pulls/1"),
    ("GET", f"/repos/{REPO}/pulls/1/reviews"),
    ("POST", f"/repos/{REPO}/check-runs"),
    ("GET", f"/repos/{REPO}/pulls/1"),
    ("POST", f"/repos/{REPO}/pulls/1/reviews"),
    ("PATCH", f"/repos/{REPO}/check-runs/N"),
]


def walkthrough(**more: Any) -> dict[str, Any]:
    return {
        "summary": "Makes 18 a minor.",
        "files": [{"path": "people.py", "note": "The age check."}],
        "focus": ["people.py: the boundary"],
        **more,
    }


def _prompt(w: World) -> str:
    [chat] = w.stub.chat_requests
    return str(chat.body["messages"][1]["content"])


def _run(w: World, trigger: str = "opened", **job: Any) -> tuple[str, list[tuple[str, str]]]:
    w.reset_calls()
    outcome = run_review_job(w.job(trigger, **job), w.ctx)
    assert outcome.status == "posted", outcome.detail
    calls = [(m, _check_run(p)) for m, p in w.api_calls()]
    [review] = [r for r in w.gh.reviews(REPO, w.number) if r["id"] == outcome.review_id]
    return str(review["body"]), calls


def _check_run(path: str) -> str:
    return path.rsplit("/", 1)[0] + "/N" if "/check-runs/" in path else path


def test_a_named_issue_github_links_costs_one_graphql_query(tmp_path: Path) -> None:
    settings = CONFIG + "\n[walkthrough]\ndiagram = true\n"
    with job_world(tmp_path, base_files={".gitneural.toml": settings}) as w:
        issue = w.gh.create_issue(REPO, title="Adults at 18", body="18 is an adult.")
        w.gh.edit_pull(REPO, w.number, body=f"Resolves: #{issue}")
        verdicts = [
            {"number": issue, "verdict": "partly", "why": "only is_adult changed"},
            {"number": 99, "verdict": "yes", "why": "an issue the prompt never showed"},
        ]
        w.stub.push(submit(PLANTED_BUG, walkthrough=walkthrough(issues=verdicts, diagram=DIAGRAM)))
        body, calls = _run(w)
        prompt = _prompt(w)
    assert calls == [*TODAY[:3], ("POST", "/graphql"), *TODAY[3:]]
    assert f"### Issue #{issue}" in prompt and "18 is an adult." in prompt
    assert "Add `diagram` only if the change alters how components call each other." in prompt
    assert f"- #{issue}: **partly** (partly addressed): only is_adult changed" in body
    assert "#99" not in body
    assert "```mermaid\nsequenceDiagram\n" in body
    assert parse_marker(body) is not None  # the marker still ends the body


def test_issues_named_for_another_branch_are_read_in_one_query_and_never_another_repo_s(
    tmp_path: Path,
) -> None:
    with job_world(tmp_path) as w:
        w.gh.push(REPO, "release", {"README.md": "# app, release\n"})
        w.gh.push(REPO, "fix", {"people.py": PLANTED})
        issue = w.gh.create_issue(REPO, title="Adults at 18", body="18 is an adult.")
        body = f"Fixes #{issue}, fixes other/repo#{issue} and closes #404."
        number = w.gh.create_pull(REPO, head="fix", base="release", title="Fix", body=body)
        w.stub.push(submit(PLANTED_BUG, walkthrough=walkthrough()))
        w.reset_calls()
        head = w.gh.head_sha(REPO, number)
        outcome = run_review_job(w.job("opened", pr_number=number, head_sha=head), w.ctx)
        calls = w.api_calls()
        prompt = _prompt(w)
    assert outcome.status == "posted", outcome.detail
    reads = [c for c in calls if "/issues/" in c[1] or c[1] == "/graphql"]
    # Both numbers of this repository in one query (#404 named, but gone: skipped).
    assert reads == [("POST", "/graphql")]
    assert len(calls) == 6 + 1
    assert prompt.count("### Issue #") == 1 and "18 is an adult." in prompt


def test_after_a_review_the_threads_query_carries_the_sidebar_links(tmp_path: Path) -> None:
    with job_world(tmp_path) as w:
        w.stub.push(submit(PLANTED_BUG))
        _, calls = _run(w)
        assert calls == TODAY  # no issue named: no request more than before
        issue = w.gh.create_issue(REPO, title="Adults at 18", body="Linked by hand.")
        w.gh.link_issue(REPO, w.number, issue)
        w.gh.push(REPO, "feature", {"README.md": "# app\n\nMore.\n"})
        w.stub.push(submit())
        _, later = _run(w, "synchronize")
        [_, chat] = w.stub.chat_requests
    assert later.count(("POST", "/graphql")) == 1  # the threads, and the issue with them
    assert not any("/issues/" in path for _, path in later)
    prompt = str(chat.body["messages"][1]["content"])
    assert "Linked by hand." in prompt and "this is a later review" in prompt


def test_walkthrough_off_asks_for_none_and_shows_none(tmp_path: Path) -> None:
    settings = CONFIG + "\n[walkthrough]\nenabled = false\n"
    with job_world(tmp_path, base_files={".gitneural.toml": settings}) as w:
        w.gh.edit_pull(REPO, w.number, body="Fixes #1")
        w.stub.push(submit(PLANTED_BUG, walkthrough=walkthrough()))
        body, calls = _run(w)
        prompt = _prompt(w)
    assert calls == TODAY  # issues are not read either
    assert "walkthrough" not in prompt.lower().split("# task")[1]
    assert "<details" not in body and "Makes 18 a minor." not in body


def test_a_broken_diagram_is_left_out_and_the_rest_posted(tmp_path: Path) -> None:
    settings = CONFIG + "\n[walkthrough]\ndiagram = true\n"
    broken = DIAGRAM.replace("P-->>-Web: bool", "P-->>Web: bool; click P call alert()")
    with job_world(tmp_path, base_files={".gitneural.toml": settings}) as w:
        w.stub.push(submit(PLANTED_BUG, walkthrough=walkthrough(diagram=broken)))
        body, _ = _run(w)
    assert "Makes 18 a minor." in body and "| `people.py` | The age check. |" in body
    assert "mermaid" not in body and "alert" not in body


@pytest.mark.parametrize("separator", ["\r", "\u2028", "\u2029", "\x85", "\x0b", "\x9b"])
def test_a_diagram_with_a_control_character_is_left_out(tmp_path: Path, separator: str) -> None:
    # GitHub's renderer splits on a lone \r (and other separators): what follows it would
    # be a statement the checker never read (a link, a title, an unclosed rect).
    settings = CONFIG + "\n[walkthrough]\ndiagram = true\n"
    hostile = DIAGRAM.replace(
        "P-->>-Web: bool", f"P-->>-Web: bool{separator}link P: Docs @ https://example.org"
    )
    with job_world(tmp_path, base_files={".gitneural.toml": settings}) as w:
        w.stub.push(submit(PLANTED_BUG, walkthrough=walkthrough(diagram=hostile)))
        body, _ = _run(w)
    assert "Makes 18 a minor." in body and "| `people.py` | The age check. |" in body
    assert "mermaid" not in body and "example.org" not in body


def test_scoped_instruction_files_show_for_matching_changes_only(tmp_path: Path) -> None:
    rules = {
        ".cursor/rules/people.mdc": "---\ndescription: ages\nglobs: people.py\n---\nAges: 18.\n",
        ".cursor/rules/calc.mdc": "---\nglobs: [calc.py]\nalwaysApply: false\n---\nHalves.\n",
        ".cursor/rules/style.mdc": "---\nalwaysApply: true\n---\nBe brief.\n",
        ".cursor/rules/agent.mdc": "---\ndescription: pick me\n---\nAgent only.\n",
        ".github/instructions/calc.instructions.md": '---\napplyTo: "**/calc.py"\n---\nInts.\n',
        "CLAUDE.md": "Claude: tabs.\n",
        ".github/copilot-instructions.md": "Copilot: tests first.\n",
    }
    with job_world(tmp_path, base_files=rules) as w:
        w.stub.push(submit(PLANTED_BUG))
        _run(w)
        prompt = _prompt(w)
    trusted = prompt[: prompt.index("# The change under review")]
    for shown in ("Ages: 18.", "Be brief.", "Claude: tabs.", "Copilot: tests first."):
        assert shown in trusted, shown
    for hidden in ("Halves.", "Ints.", "Agent only."):
        assert hidden not in prompt, hidden
    assert "## .cursor/rules/people.mdc (applies to people.py)" in trusted


def test_instructions_over_the_limit_are_said_in_the_summary(tmp_path: Path) -> None:
    settings = CONFIG + "instructions_max_chars = 40\n"
    files = {".gitneural.toml": settings, "AGENTS.md": "A" * 30 + "\n", "CLAUDE.md": "C" * 50}
    with job_world(tmp_path, base_files=files) as w:
        w.stub.push(submit(PLANTED_BUG))
        body, _ = _run(w)
    assert "Instructions over the limit (instructions_max_chars): CLAUDE.md cut" in body


def test_the_json_report_round_trips_the_walkthrough() -> None:
    from bot.domain.results import Coverage, ReviewResult
    from bot.domain.walkthrough import FileNote, ImageNote, IssueVerdict, Walkthrough
    from bot.render.json_report import load_json, render_json

    wt = Walkthrough(
        "Sum.", [FileNote("a.py", "A")], ["a.py"], DIAGRAM, [IssueVerdict(3, "no", "x")]
    )
    wt.images = [ImageNote("ui.png (after)"), ImageNote("ui.png (before)", "larger than 5 MB")]
    text = render_json(ReviewResult("s", [], Coverage(), walkthrough=wt))
    assert json.loads(text)["walkthrough"]["issues"] == [{"number": 3, "verdict": "no", "why": "x"}]
    assert load_json(text).walkthrough == wt

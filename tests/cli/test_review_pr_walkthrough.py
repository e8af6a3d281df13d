"""``gitneural review --pr`` with the walkthrough, a linked issue and path-scoped
instructions: printed (text and JSON) with nothing written to GitHub, and ``--post``'s
review body opening with the walkthrough."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from graphql import OperationType, parse

from tests.cli.test_cli_review import run_cli
from tests.cli.test_review_pr import pr_env
from tests.support.job_world import CONFIG, REPO, World, job_world, submit
from tests.support.planted import PLANTED_BUG

RULES = {
    ".gitneural.toml": CONFIG,
    ".cursor/rules/people.mdc": "---\nglobs: people.py\n---\nPeople rule.\n",
    ".cursor/rules/calc.mdc": "---\nglobs: calc.py\n---\nCalc rule.\n",
}


def _walkthrough(issue: int) -> dict[str, Any]:
    return {
        "summary": "Makes 18 a minor.",
        "files": [{"path": "people.py", "note": "The age check."}],
        "focus": ["people.py: the boundary"],
        "issues": [{"number": issue, "verdict": "yes", "why": "18 is handled"}],
    }


def _linked_pull(w: World) -> int:
    issue = w.gh.create_issue(REPO, title="Adults at 18", body="Eighteen is adult.")
    w.gh.edit_pull(REPO, w.number, body=f"Fixes #{issue}")
    return issue


def _reads_only(w: World) -> None:
    """Every API request a read: GETs, and GraphQL queries (never a mutation)."""
    for r in w.gh.requests(kind="api"):
        if r.method == "POST" and r.path == "/graphql":
            document = parse(r.json["query"])
            assert all(
                d.operation is OperationType.QUERY  # type: ignore[attr-defined]
                for d in document.definitions
            )
        else:
            assert r.method == "GET", (r.method, r.path)
    assert w.reviews() == [] and w.check_runs() == [] and w.gh.forbidden_requests() == []


def test_review_pr_prints_the_walkthrough_and_reads_the_issue(tmp_path: Path) -> None:
    with job_world(tmp_path, base_files=RULES) as w:
        issue = _linked_pull(w)
        w.stub.push(submit(PLANTED_BUG, walkthrough=_walkthrough(issue)))
        w.stub.push(submit(PLANTED_BUG, walkthrough=_walkthrough(issue)))
        env = pr_env(w, tmp_path)
        text = run_cli(["review", "--pr", f"{REPO}#{w.number}", "--quiet"], tmp_path, env)
        args = ["review", "--pr", f"{REPO}#{w.number}", "--quiet", "--format", "json"]
        as_json = run_cli(args, tmp_path, env)
        _reads_only(w)
        graphql = w.gh.requests("POST", "/graphql", kind="api")
        [first, _] = w.stub.chat_requests
    assert len(graphql) == 2  # one query per run, carrying the issue
    prompt = str(first.body["messages"][1]["content"])
    assert f"### Issue #{issue}" in prompt and "Eighteen is adult." in prompt
    assert "People rule." in prompt and "Calc rule." not in prompt
    assert text.returncode == 1, text.stderr
    assert "Walkthrough:\n    Makes 18 a minor." in text.stdout
    assert f"    - #{issue}: yes (addressed): 18 is handled" in text.stdout
    report = json.loads(as_json.stdout)
    assert report["walkthrough"]["summary"] == "Makes 18 a minor."
    assert report["walkthrough"]["issues"] == [
        {"number": issue, "verdict": "yes", "why": "18 is handled"}
    ]


def test_review_pr_post_opens_the_review_with_the_walkthrough(tmp_path: Path) -> None:
    with job_world(tmp_path, base_files=RULES) as w:
        issue = _linked_pull(w)
        w.stub.push(submit(PLANTED_BUG, walkthrough=_walkthrough(issue)))
        args = ["review", "--pr", f"{REPO}#{w.number}", "--post", "--quiet"]
        done = run_cli(args, tmp_path, pr_env(w, tmp_path))
        [review] = w.reviews()
    assert done.returncode == 1, done.stderr
    body = review["body"]
    assert body.index("<summary>Walkthrough</summary>") < body.index("Reviewed the change.")
    assert f"- #{issue}: **yes** (addressed): 18 is handled" in body
    assert "Walkthrough:" in done.stdout

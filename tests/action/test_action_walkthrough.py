"""The walkthrough, a linked issue and path-scoped instructions in ``gitneural action``,
run as GitHub's runner runs action.yml's step (a workspace cloned by git, an
Actions-style token, the fake GitHub and the K3 stub): the review body and the step
summary show the walkthrough; the prompt has the issue fenced and the matching
instructions only."""

from __future__ import annotations

import re
from pathlib import Path

from tests.action.test_action_run import inputs
from tests.support.actions import ActionsRun, checkout, pull_request_event
from tests.support.job_world import CONFIG, REPO, job_world, submit
from tests.support.planted import PLANTED_BUG
from tests.support.walkthrough import DIAGRAM

RULES = {
    ".gitneural.toml": CONFIG + "\n[walkthrough]\ndiagram = true\n",
    ".github/instructions/people.instructions.md": "---\napplyTo: people.py\n---\nPeople rule.\n",
    ".github/instructions/calc.instructions.md": "---\napplyTo: calc.py\n---\nCalc rule.\n",
}
FENCE = re.compile(r"<untrusted-([0-9a-f]{12})>\n(.*?)\n</untrusted-\1>", re.DOTALL)


def test_the_action_shows_the_walkthrough_and_reads_the_linked_issue(tmp_path: Path) -> None:
    with job_world(tmp_path, base_files=RULES) as w:
        issue = w.gh.create_issue(REPO, title="Adults at 18", body="Eighteen is adult.")
        w.gh.edit_pull(REPO, w.number, body=f"Closes #{issue}")
        event = pull_request_event(w.gh, REPO, w.number)
        run = ActionsRun(tmp_path / "job", w.gh, REPO, event_name="pull_request", event=event)
        checkout(w.gh, REPO, w.number, run.workspace, token=run.token, shallow=False)
        walkthrough = {
            "summary": "Makes 18 a minor.",
            "files": [{"path": "people.py", "note": "The age check."}],
            "focus": ["people.py: the boundary"],
            "diagram": DIAGRAM,
            "issues": [{"number": issue, "verdict": "no", "why": "the opposite"}],
        }
        w.stub.push(submit(PLANTED_BUG, walkthrough=walkthrough))
        done = run.step("review", inputs(w))
        assert done.returncode == 0, done.stdout + done.stderr
        [review] = w.reviews()
        [chat] = w.stub.chat_requests
        summary = run.summary.read_text()
    prompt = str(chat.body["messages"][1]["content"])
    fenced = [m.group(2) for m in FENCE.finditer(prompt)]
    assert "Adults at 18" in fenced and "Eighteen is adult." in fenced
    assert "People rule." in prompt and "Calc rule." not in prompt
    for text in (review["body"], summary):
        assert "Makes 18 a minor." in text and "| `people.py` | The age check. |" in text
        assert f"- #{issue}: **no** (not addressed): the opposite" in text
        assert "```mermaid\nsequenceDiagram" in text
    assert "<summary>Walkthrough</summary>" in review["body"]
    assert "#### Walkthrough" in summary
    assert "Walkthrough:" in done.stdout  # the job's log: the terminal text


def test_the_action_s_next_review_walks_through_only_what_changed(tmp_path: Path) -> None:
    with job_world(tmp_path) as w:
        first = ActionsRun(
            tmp_path / "job1",
            w.gh,
            REPO,
            event_name="pull_request",
            event=pull_request_event(w.gh, REPO, w.number),
        )
        files = [{"path": "people.py", "note": "The age check."}]
        w.stub.push(
            submit(PLANTED_BUG, walkthrough={"summary": "Makes 18 a minor.", "files": files})
        )
        done = first.step("review", inputs(w))
        assert done.returncode == 0, done.stdout + done.stderr
        first_head = w.gh.head_sha(REPO, w.number)
        # A push to the pull request: the workflow runs again on ``synchronize``.
        w.gh.push(REPO, "feature", {"calc.py": "def half(n):\n    return n // 2\n"}, "Halve")
        event = pull_request_event(w.gh, REPO, w.number, action="synchronize")
        second = ActionsRun(
            tmp_path / "job2", w.gh, REPO, event_name="pull_request", event=event, run_id="7002"
        )
        files = [{"path": "calc.py", "note": "Integer division."}]
        delta = {"summary": "Halves with integer division now.", "files": files}
        w.stub.push(submit(walkthrough=delta))
        again = second.step("review", inputs(w))
        assert again.returncode == 0, again.stdout + again.stderr
        assert len(w.reviews()) == 2, again.stdout
        first_review, next_review = w.reviews()
        prompt = str(w.stub.chat_requests[-1].body["messages"][1]["content"])
        summary = second.summary.read_text()
    assert f"since the last reviewed commit `{first_head[:12]}`" in prompt
    body = next_review["body"]
    assert f"<summary>Walkthrough of the changes since {first_head[:7]}</summary>" in body
    assert "Halves with integer division now." in body and "Makes 18 a minor." not in body
    assert "Halves with integer division now." in summary
    assert "<summary>Walkthrough</summary>" in first_review["body"]

"""``gitneural replay`` with golden items from elsewhere, through the installed command:
the pull requests' human review comments on the fake GitHub (``--golden github``), and
the Code Review Bench's golden file on a bare clone with ``refs/pull/N/head``, judged by
the K3 stub as the model judge (``--judge model``)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.k3 import K3Stub, Reply
from tests.fakes.k3.brain import user_text
from tests.fakes.k3.judge import is_judge_request, judge_reply
from tests.replay.conftest import replay
from tests.support.job_world import REPO, job_world, submit
from tests.support.planted import ORIGINAL, PLANTED, PLANTED_BUG
from tests.support.repos import commit, make_repo


@pytest.mark.parametrize("access", ["token", "app"])
def test_golden_github_is_a_persons_inline_comments_on_the_pull(
    access: str, tmp_path: Path
) -> None:
    with job_world(tmp_path) as w:
        # The clone: the pull request merged the way GitHub merges it.
        repo = make_repo(tmp_path / "clone")
        main = commit(repo, {"people.py": ORIGINAL}, "initial")
        side = commit(
            repo, {"people.py": PLANTED}, "Tighten is_adult", branch="feature", parents=[main]
        )
        commit(
            repo,
            {"people.py": PLANTED},
            f"Merge pull request #{w.number} from octo/feature\n\nTighten is_adult",
            parents=[main, side],
        )
        repo.remotes.create("origin", w.gh.clone_url(REPO))
        w.gh.add_review_comment(REPO, w.number, "people.py", 2, "18 is adult", user="alice")
        w.gh.add_review_comment(REPO, w.number, "people.py", 5, "lint", user="renovate[bot]")
        w.gh.add_review_comment(REPO, w.number, "people.py", 6, "ours", user=w.gh.bot_login)
        w.stub.push(submit(PLANTED_BUG))
        w.gh.clear_requests()
        env = {"GITHUB_API_URL": w.gh.api_url, "GITNEURAL_BOT_LOGIN": w.gh.bot_login}
        if access == "token":
            env["GITHUB_TOKEN"] = w.gh.user_token(REPO, "alice")
        else:  # as the App: its installation on the repository
            env.update(
                GITHUB_TOKEN="",
                GH_TOKEN="",
                GITHUB_APP_ID=str(w.gh.app_id),
                GITHUB_PRIVATE_KEY=w.gh.private_key_pem,
            )
        result = replay(
            ["--golden", "github", "--format", "json", "--quiet"],
            tmp_path / "clone",
            w.stub,
            tmp_path / "data",
            env,
        )
        comments_read = w.gh.requests("GET", f"/repos/{REPO}/pulls/{w.number}/comments")
        # Replay posts nothing: every request it made of GitHub was a read (the App's
        # token minted aside).
        writes = [r for r in w.gh.requests(kind="api") if r.method != "GET"]
        assert all(r.path.endswith("/access_tokens") for r in writes), writes
        assert len(writes) == (1 if access == "app" else 0)
    assert result.returncode == 0, result.stderr
    assert comments_read
    report = json.loads(result.stdout)
    [change] = report["changes"]
    assert change["title"] == "Tighten is_adult"
    assert [(g["path"], g["lines"], g["text"], g["source"]) for g in change["golden"]] == [
        ("people.py", [2, 2], "18 is adult", "github")
    ]
    assert change["golden"][0]["found"] is True
    assert {k: report["totals"][k] for k in ("golden", "golden_found", "findings")} == {
        "golden": 1,
        "golden_found": 1,
        "findings": 1,
    }


def test_golden_github_without_a_token_says_what_to_set(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "clone")
    main = commit(repo, {"a.py": "a = 1\n"}, "initial")
    side = commit(repo, {"a.py": "a = 2\n"}, "work", branch="topic", parents=[main])
    commit(repo, {"a.py": "a = 2\n"}, "Merge pull request #4 from o/topic", parents=[main, side])
    with K3Stub() as stub:
        result = replay(
            ["--golden", "github", "--github-repo", "o/r", "--quiet"],
            tmp_path / "clone",
            stub,
            tmp_path / "data",
            {"GITHUB_TOKEN": "", "GH_TOKEN": "", "GITHUB_APP_ID": ""},
        )
        assert stub.requests == []
    assert result.returncode == 2
    assert "needs a GitHub token (GITHUB_TOKEN" in result.stderr


#: The Code Review Bench's golden_comments shape: text only, the place quoted in the text.
def _martian(url: str) -> list[dict[str, Any]]:
    return [
        {
            "pr_title": "Count the devices",
            "url": url,
            "comments": [
                {
                    "comment": "limit.go:3 divides by the count, which may be zero",
                    "severity": "High",
                },
                {"comment": "The limit is never logged.", "severity": "Low"},
            ],
        }
    ]


START = "package limit\n\nvar limit = 10\n\nfunc Limit() int { return limit }\n"
PULLED = START.replace("var limit = 10", "var limit = 10 / count // DIVIDES").replace(
    "return limit }", "return limit } // DECOY"
)


def _reviewer_and_judge(body: dict[str, Any]) -> Reply:
    """The judge's question answered by the judge brain; a review flags line 3 (the
    golden item's) and line 5 (a decoy)."""
    if is_judge_request(body):
        return judge_reply(body)
    found = []
    if "DIVIDES" in user_text(body):
        for line, quote in ((3, "var limit = 10 / count // DIVIDES"), (5, "// DECOY")):
            found.append(
                {
                    "path": "limit.go",
                    "start_line": line,
                    "end_line": line,
                    "side": "RIGHT",
                    "severity": "major",
                    "category": "bug",
                    "title": f"Line {line} looks wrong",
                    "body": "Because.",
                    "evidence": quote,
                }
            )
    return Reply(
        reasoning="Reading.", tool_calls=[("submit_review", {"summary": "ok", "findings": found})]
    )


def test_a_martian_golden_file_on_a_bare_fork_judged_by_the_model(tmp_path: Path) -> None:
    fork = make_repo(tmp_path / "fork.git", bare=True)
    base = commit(fork, {"limit.go": START}, "start", branch="main")
    commit(fork, {"README.md": "limits\n"}, "later on main", branch="main")
    head = commit(fork, {"limit.go": PULLED}, "Count the devices", branch="pr", parents=[base])
    fork.references.create("refs/pull/12/head", head.id)
    golden = tmp_path / "golden_comments"
    golden.mkdir()
    (golden / "limits.json").write_text(json.dumps(_martian("https://github.com/o/r/pull/12")))
    out = tmp_path / "out"
    args = ["--golden", str(golden), "--judge", "model", "--format", "json", "--quiet"]
    args += ["--out", str(out)]
    data = tmp_path / "data"
    with K3Stub(brain=_reviewer_and_judge) as stub:
        first = replay(args, tmp_path / "fork.git", stub, data)
        judged = [r for r in stub.chat_requests if is_judge_request(r.body)]
        asked = len(stub.chat_requests)
        again = replay(args, tmp_path / "fork.git", stub, data)
        asked_again = len(stub.chat_requests) - asked
    assert first.returncode == 0, first.stderr
    assert len(judged) == 1  # one judge request for the one change
    # The estimate shown before the first request counts the judge's request too.
    judge_part = re.search(r"of which about ([\d,]+) for the model judge", first.stderr)
    assert judge_part and int(judge_part[1].replace(",", "")) > 0, first.stderr
    report = json.loads(first.stdout)
    assert report["judge"] == "model"
    [change] = report["changes"]
    assert change["change"] == f"{base.id}..{head.id}"
    assert [g["found"] for g in change["golden"]] == [True, False]
    by_line = {f["start_line"]: f for f in change["findings"]}
    assert by_line[3]["matches"] == [0] and by_line[3]["reasons"]
    assert by_line[5]["matches"] == []
    assert json.loads(change["judge_answer"])["matches"][0]["golden"] == 0
    totals = report["totals"]
    assert (totals["recall"], totals["precision"]) == (0.5, 0.5)
    markdown = (out / "report.md").read_text()
    assert "(golden 1; Line 3 looks wrong at limit.go)" in markdown
    # A second run asks nothing: the review and the judge's answer are both kept.
    assert again.returncode == 0, again.stderr
    assert asked_again == 0
    assert json.loads(again.stdout)["totals"] == totals


def test_the_location_judge_says_text_only_items_need_the_model(tmp_path: Path) -> None:
    fork = make_repo(tmp_path / "fork.git", bare=True)
    base = commit(fork, {"limit.go": START}, "start", branch="main")
    head = commit(fork, {"limit.go": PULLED}, "Count", branch="pr", parents=[base])
    fork.references.create("refs/pull/12/head", head.id)
    golden = tmp_path / "golden.json"
    golden.write_text(json.dumps(_martian("https://github.com/o/r/pull/12")))
    with K3Stub(brain=_reviewer_and_judge) as stub:
        args = ["--golden", str(golden), "--dry-run", "--quiet"]
        result = replay(args, tmp_path / "fork.git", stub, tmp_path / "data")
        assert stub.requests == []
    assert result.returncode == 0, result.stderr
    assert "2 golden items have no file and line: only --judge model" in result.stderr

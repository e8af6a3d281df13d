"""``gitneural review --pr``: any pull request, with a person's token, against the fake
GitHub (laid out as GitHub Enterprise Server: ``GITHUB_API_URL`` is ``…/api/v3``) and the
K3 stub. Printing writes nothing to GitHub; ``--post`` posts one review."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema

from bot.render.github import parse_marker
from tests.cli.test_cli_review import SARIF_SCHEMA, run_cli
from tests.support.job_world import REPO, World, job_world, submit
from tests.support.planted import PLANTED_BUG


def pr_env(w: World, root: Path, **more: str) -> dict[str, str]:
    return {
        "GITHUB_TOKEN": w.gh.user_token(REPO, "alice"),
        "GITHUB_API_URL": w.gh.api_url,
        "GITNEURAL_DATA_DIR": str(root / "data"),
        "KIMI_API_KEY": w.stub.api_key,
        "KIMI_BASE_URL": w.stub.base_url,
        **more,
    }


def reads_only(w: World) -> None:
    """Every request the fake saw was a read: API GETs and git fetches, nothing else."""
    requests = w.gh.requests()
    assert requests, "the fake saw no request at all"
    for r in requests:
        if r.kind == "git":
            assert r.method == "GET" or r.path.endswith("/git-upload-pack"), (r.method, r.path)
        else:
            assert (r.kind, r.method) == ("api", "GET"), (r.kind, r.method, r.path)
    assert w.reviews() == [] and w.check_runs() == []
    assert w.gh.issue_comments(REPO, w.number) == [] and w.gh.forbidden_requests() == []


def test_review_pr_by_url_prints_the_review_and_writes_nothing(tmp_path: Path) -> None:
    with job_world(tmp_path) as w:
        w.stub.push(submit(PLANTED_BUG))
        url = f"{w.gh.web_url}/{REPO}/pull/{w.number}"
        done = run_cli(["review", "--pr", url, "--quiet"], tmp_path, pr_env(w, tmp_path))
        reads_only(w)
        assert w.gh.requests("POST", "/octo/app.git/git-upload-pack", kind="git")
    assert done.returncode == 1, done.stderr  # a critical finding, at the default --fail-on
    assert "people.py:2: critical: Off-by-one" in done.stdout
    assert "+    return age >= 18" in done.stdout
    assert done.stderr == ""


def test_review_pr_by_reference_prints_sarif_that_validates(tmp_path: Path) -> None:
    with job_world(tmp_path) as w:
        w.stub.push(submit(PLANTED_BUG))
        args = ["review", "--pr", f"{REPO}#{w.number}", "--format", "sarif", "--quiet"]
        done = run_cli([*args, "--fail-on", "nit"], tmp_path, pr_env(w, tmp_path))
        reads_only(w)
        [chat] = w.stub.chat_requests
    assert done.returncode == 1, done.stderr
    sarif = json.loads(done.stdout)
    jsonschema.Draft7Validator(json.loads(SARIF_SCHEMA.read_text())).validate(sarif)
    [result] = sarif["runs"][0]["results"]
    assert result["locations"][0]["physicalLocation"]["region"]["startLine"] == 2
    assert chat.body["reasoning_effort"] == "low"  # .gitneural.toml of the default branch


def test_review_pr_post_posts_one_review_however_often_it_runs(tmp_path: Path) -> None:
    with job_world(tmp_path) as w:
        w.stub.push(submit(PLANTED_BUG))
        env = pr_env(w, tmp_path)
        args = ["review", "--pr", f"{REPO}#{w.number}", "--post", "--fail-on", "nit"]
        first = run_cli(args, tmp_path, env)
        assert first.returncode == 1, first.stderr
        assert "people.py:2: critical" in first.stdout and "review posted: " in first.stderr
        [review] = w.reviews()
        assert (review["event"], review["user"]["login"]) == ("COMMENT", "alice")
        [comment] = review["comments"]
        assert (comment["path"], comment["line"]) == ("people.py", 2)
        assert "```suggestion\n    return age >= 18\n```" in comment["body"]
        marker = parse_marker(review["body"])
        head = w.gh.head_sha(REPO, w.number)
        assert marker is not None and marker.delivery == f"cli-{head[:12]}"
        assert w.check_runs() == []  # a person's token may not create check runs
        again = run_cli(args, tmp_path, env)
        assert len(w.reviews()) == 1 and len(w.stub.chat_requests) == 1
        assert w.gh.forbidden_requests() == []
    assert again.returncode == 1  # the found review keeps its verdict
    assert "no new review: already posted: http" in again.stderr
    output = first.stdout + first.stderr + again.stdout + again.stderr
    assert env["GITHUB_TOKEN"] not in output and env["KIMI_API_KEY"] not in output


def test_review_pr_errors_are_one_clear_line(tmp_path: Path) -> None:
    with job_world(tmp_path) as w:
        env = pr_env(w, tmp_path)
        cases = {
            "octo/app": ("not 'octo/app'", env),
            "https://elsewhere.example/octo/app/pull/1": ("GITHUB_API_URL=https://elsewhere", env),
            f"{REPO}#999": (f"pull request {REPO}#999 not found", env),
            f"{REPO}#1": ("no GitHub token: set GITHUB_TOKEN", {**env, "GITHUB_TOKEN": ""}),
            f"{REPO}#2": ("GitHub refused the token (401)", {**env, "GITHUB_TOKEN": "ghu_nope"}),
        }
        for reference, (expected, case_env) in cases.items():
            done = run_cli(["review", "--pr", reference], tmp_path, case_env)
            assert done.returncode == 2, (reference, done.stderr)
            assert done.stderr.startswith("gitneural: error: ") and expected in done.stderr
            assert done.stderr.count("\n") == 1, done.stderr
        misuse = run_cli(["review", "--post"], tmp_path, env)
        assert misuse.returncode == 2 and "--post needs --pr" in misuse.stderr
        assert w.reviews() == [] and w.stub.requests == []

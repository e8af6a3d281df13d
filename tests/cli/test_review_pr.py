"""``gitneural review --pr``: any pull request, with a person's token, against the fake
GitHub (laid out as GitHub Enterprise Server: ``GITHUB_API_URL`` is ``…/api/v3``) and the
K3 stub. Printing writes nothing to GitHub; ``--post`` posts one review."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from bot.cli.pr_review import PullRef, parse_pull_ref
from bot.errors import UsageError
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


#: Names GitHub would never give an owner or a repository, and addresses of other shapes.
NOT_PULL_REFERENCES = [
    "../r#1",
    "octo/..#1",
    "octo/.#1",
    "../../octo/app#1",
    "octo/app/../x#1",
    "-octo/app#1",
    "octo-/app#1",
    "oc--to/app#1",
    "o_cto/app#1",
    "a" * 40 + "/app#1",
    "octo/" + "r" * 101 + "#1",
    "octo/a%2e%2e#1",
    "octo/app#0",
    "octo/app#1#2",
    "octo/ app#1",
    "https://github.com/../r/pull/1",
    "https://github.com/octo/../pull/1",
    "https://github.com/octo/app/pull/1/../../../x/pull/2",
    "https://github.com/octo/app/pulls/1",
    "https://github.com/octo/app/pull/1?tab=files",
    "https://github.com/octo/app/issues/1",
    "ftp://github.com/octo/app/pull/1",
]
PULL_REFERENCES = {
    "octo/app#7": ("octo/app", 7),
    "a-b9/x.y_z-#12": ("a-b9/x.y_z-", 12),
    "a" * 39 + "/" + "r" * 100 + "#1": ("a" * 39 + "/" + "r" * 100, 1),
    "Octo-Cat/.github#3": ("Octo-Cat/.github", 3),
    " octo/...#4 ": ("octo/...", 4),
    "https://github.com/octo/app/pull/7": ("octo/app", 7),
    "https://github.com/octo/app/pull/7/": ("octo/app", 7),
}


def test_review_pr_takes_only_github_names(tmp_path: Path) -> None:
    # Through the command, against the fake GitHub: refused before any request is made.
    with job_world(tmp_path) as w:
        env = pr_env(w, tmp_path)
        for text in ("../r#1", "octo/..#1", f"{w.gh.web_url}/octo/app/pull/1/../../../r/pull/1"):
            done = run_cli(["review", "--pr", text], tmp_path, env)
            assert done.returncode == 2, (text, done.stderr)
            assert done.stderr.startswith("gitneural: error: --pr takes https://HOST/OWNER/")
            assert done.stderr.count("\n") == 1, done.stderr
        assert w.gh.requests() == [] and w.stub.requests == []
    api = "https://api.github.com"
    for text in NOT_PULL_REFERENCES:
        with pytest.raises(UsageError, match=r"^--pr takes https://HOST/OWNER/REPO/pull/N ") as e:
            parse_pull_ref(text, api, {})
        assert "\n" not in str(e.value), text
    for text, (repo, number) in PULL_REFERENCES.items():
        assert parse_pull_ref(text, api, {}) == PullRef(repo, number), text

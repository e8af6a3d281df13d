"""The router through ``gitneural review``: each change's route decided before the model,
seen by what the K3 stubs receive (or do not) over their sockets."""

from __future__ import annotations

import json
from pathlib import Path

import pygit2
import pytest

from tests.cli.test_cli_review import run_cli, stub_env, submit
from tests.fakes.k3 import K3Stub
from tests.support.planted import ORIGINAL
from tests.support.repos import commit, make_repo, stage

SESSION = "def session_user(token):\n    return lookup(token)\n"
FINE = {"summary": "Nothing to report.", "findings": []}
#: ORIGINAL as a formatter would leave it: other quotes, spaces, a blank line.
REFORMATTED = (
    'def is_adult(age):\n    return age>=18\n\n\n\ndef greet( name ):\n    return "hi " + name\n'
)


def repo_with(tmp_path: Path, settings: str = "") -> pygit2.Repository:
    repo = make_repo(tmp_path / "repo")
    files = {"people.py": ORIGINAL, "README.md": "people\n", "auth/session.py": SESSION}
    if settings:
        files[".gitneural.toml"] = settings
    commit(repo, files, "initial")
    return repo


def review_json(
    repo_dir: Path, env: dict[str, str], *extra: str
) -> tuple[int, dict[str, object], str]:
    result = run_cli(["review", "--staged", "--format", "json", *extra], repo_dir, env)
    report = json.loads(result.stdout) if result.stdout.strip() else {}
    return result.returncode, report, result.stderr


def test_a_formatting_only_change_asks_nothing_and_passes(tmp_path: Path) -> None:
    repo = repo_with(tmp_path)
    stage(repo, {"people.py": REFORMATTED})
    with K3Stub() as stub:
        code, report, err = review_json(tmp_path / "repo", stub_env(stub))
        text = run_cli(["review", "--staged"], tmp_path / "repo", stub_env(stub))
        assert stub.requests == []
    assert code == 0, err
    assert report["route"] == {
        "name": "formatting",
        "effort": "skip",
        "endpoint": "main",
        "reason": "formatting only (no file's tokens changed)",
    }
    assert report["summary"] == "Not sent to the model: formatting only (no file's tokens changed)."
    assert report["usage"] == {
        "prompt_tokens": 0,
        "completion_tokens": 0,
        "cached_tokens": 0,
        "requests": 0,
    }
    assert text.returncode == 0, text.stderr
    assert "Not sent to the model: formatting only" in text.stdout


def test_a_formatting_only_change_needs_no_key(tmp_path: Path) -> None:
    repo = repo_with(tmp_path)
    stage(repo, {"people.py": REFORMATTED})
    result = run_cli(["review", "--staged"], tmp_path / "repo")
    assert result.returncode == 0, result.stderr
    assert "Not sent to the model: formatting only" in result.stdout


def test_a_change_of_meaning_is_no_formatting(tmp_path: Path) -> None:
    """The same reformatting, plus one changed operator: reviewed."""
    repo = repo_with(tmp_path)
    stage(repo, {"people.py": REFORMATTED.replace(">=", ">")})
    with K3Stub([submit(FINE)]) as stub:
        code, report, err = review_json(tmp_path / "repo", stub_env(stub))
        assert len(stub.chat_requests) == 1
    assert code == 0, err
    assert report["route"]["name"] == "configured"  # type: ignore[index]


def test_a_readme_only_change_is_asked_at_low(tmp_path: Path) -> None:
    repo = repo_with(tmp_path)
    stage(repo, {"README.md": "people, and who counts as an adult\n"})
    with K3Stub([submit(FINE)]) as stub:
        code, report, err = review_json(tmp_path / "repo", stub_env(stub))
        efforts = [r.body["reasoning_effort"] for r in stub.chat_requests]
    assert code == 0, err
    assert efforts == ["low"]
    assert report["effort"] == "low"
    assert report["route"]["name"] == "docs"  # type: ignore[index]
    assert "Route: docs only (README.md): effort low." in str(report["summary"])


def test_a_sensitive_path_is_asked_at_max_whatever_the_effort(tmp_path: Path) -> None:
    repo = repo_with(tmp_path, '[review]\neffort = "low"\n')
    stage(repo, {"auth/session.py": SESSION.replace("lookup(token)", "lookup(token or '')")})
    with K3Stub([submit(FINE)]) as stub:
        code, report, err = review_json(tmp_path / "repo", stub_env(stub))
        efforts = [r.body["reasoning_effort"] for r in stub.chat_requests]
    assert code == 0, err
    assert efforts == ["max"]
    assert report["route"] == {
        "name": "sensitive",
        "effort": "max",
        "endpoint": "main",
        "reason": "sensitive: auth/session.py (authentication)",
    }


def test_without_routing_the_configured_effort_holds(tmp_path: Path) -> None:
    repo = repo_with(tmp_path, '[review]\neffort = "low"\nrouting = false\n')
    stage(repo, {"auth/session.py": SESSION.replace("lookup(token)", "lookup(token or '')")})
    with K3Stub([submit(FINE)]) as stub:
        code, _, err = review_json(tmp_path / "repo", stub_env(stub))
        efforts = [r.body["reasoning_effort"] for r in stub.chat_requests]
    assert code == 0, err
    assert efforts == ["low"]


ROUTINE_ROUTE = """\
[[review.route]]
paths = ["people.py"]
effort = "high"
model = "routine"
"""


@pytest.mark.parametrize("own_key", [True, False], ids=["own key", "the main key"])
def test_a_routine_route_asks_the_routine_endpoint_only(tmp_path: Path, own_key: bool) -> None:
    repo = repo_with(tmp_path, ROUTINE_ROUTE)
    stage(repo, {"people.py": ORIGINAL.replace("'hi '", "'hello '")})
    routine_key = "sk-k3stub-routine-key-" + "9" * 8 if own_key else None
    with (
        K3Stub() as main,
        K3Stub(
            [submit(FINE)],
            api_key=routine_key or main.api_key,
            models=("kimi-k3-routine",),
        ) as routine,
    ):
        env = {
            **stub_env(main),
            "KIMI_ROUTINE_BASE_URL": routine.base_url,
            "KIMI_ROUTINE_MODEL": "kimi-k3-routine",
        }
        if routine_key:
            env["KIMI_ROUTINE_API_KEY"] = routine_key
        code, report, err = review_json(tmp_path / "repo", env)
        assert main.requests == []
        sent = [(r.body["model"], r.body["reasoning_effort"]) for r in routine.chat_requests]
    assert code == 0, err
    assert sent == [("kimi-k3-routine", "high")]
    assert report["model"] == "kimi-k3-routine"
    assert report["route"] == {
        "name": "team",
        "effort": "high",
        "endpoint": "routine",
        "reason": "review.route[0] (people.py)",
    }
    assert "effort high on the routine endpoint" in str(report["summary"])


def test_a_team_skip_route_asks_nothing(tmp_path: Path) -> None:
    repo = repo_with(tmp_path, '[[review.route]]\npaths = ["*.md"]\neffort = "skip"\n')
    stage(repo, {"README.md": "people, and who counts\n"})
    with K3Stub() as stub:
        code, report, err = review_json(tmp_path / "repo", stub_env(stub))
        assert stub.requests == []
    assert code == 0, err
    assert report["summary"] == "Not sent to the model: review.route[0] (*.md)."


def test_a_bad_route_is_named(tmp_path: Path) -> None:
    repo = repo_with(tmp_path, '[[review.route]]\npaths = ["*.md"]\neffort = "none"\n')
    stage(repo, {"README.md": "people, and who counts\n"})
    with K3Stub() as stub:
        result = run_cli(["review", "--staged"], tmp_path / "repo", stub_env(stub))
        assert stub.requests == []
    assert result.returncode != 0
    assert "review.route[0].effort must be one of low, high, max, skip" in result.stderr

"""The small stumbles of a first session with ``gitneural``, each fixed: the installed
command in a real repository, against the K3 stub or a server that never answers."""

from __future__ import annotations

import json
from pathlib import Path

import pygit2
import pytest

from tests.cli.test_cli_review import run_cli, stub_env, submit
from tests.fakes.k3 import K3Stub
from tests.support.planted import PLANTED
from tests.support.repos import commit, stage
from tests.support.silent_server import SilentServer

FAKE_KEY = "-".join(["sk", "cli", "test"])


def _one_line(stderr: str) -> str:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    return lines[0]


# -- a model that never answers ---------------------------------------------------------


def test_timeout_ends_a_review_the_server_never_answers(planted: Path) -> None:
    with SilentServer() as server:
        env = {"KIMI_API_KEY": FAKE_KEY, "KIMI_BASE_URL": server.base_url}
        done = run_cli(["review", "--quiet", "--effort", "low", "--timeout", "2"], planted, env)
        assert server.received > 0
    assert done.returncode == 3
    line = _one_line(done.stderr)
    assert "--timeout" in line and "timeout in [review]" in line and "2s" in line
    assert "lower effort" not in line  # it already ran at low


def test_stall_timeout_from_the_settings_ends_a_silent_request(planted: Path) -> None:
    commit_settings(planted, "[review]\nstall_timeout = 1\n")
    with SilentServer() as server:
        env = {"KIMI_API_KEY": FAKE_KEY, "KIMI_BASE_URL": server.base_url}
        done = run_cli(["review", "--quiet", "--effort", "low"], planted, env)
        assert server.connections == 1
    assert done.returncode == 3
    line = _one_line(done.stderr)
    assert f"127.0.0.1:{server.port}" in line and "stall_timeout in [review]" in line


def commit_settings(path: Path, text: str) -> None:
    """``.gitneural.toml`` committed at HEAD, the planted change staged again."""
    repo = pygit2.Repository(str(path))
    commit(repo, {".gitneural.toml": text}, "settings")
    stage(repo, {"people.py": PLANTED})


# -- options and their output -----------------------------------------------------------


def test_fail_on_none_never_fails_the_command(planted: Path) -> None:
    with K3Stub([submit()]) as stub:
        done = run_cli(
            ["review", "--quiet", "--effort", "low", "--fail-on", "none"], planted, stub_env(stub)
        )
    assert done.returncode == 0, done.stderr
    assert "people.py:2: critical" in done.stdout


def test_output_file_is_announced_with_the_summary(planted: Path, tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    with K3Stub([submit()]) as stub:
        args = ["review", "--quiet", "--effort", "low", "--format", "json", "-o", str(report)]
        done = run_cli(args, planted, stub_env(stub))
    assert done.returncode == 1
    assert done.stdout == ""
    line = _one_line(done.stderr)
    assert str(report) in line and "1 finding: 1 critical" in line
    assert json.loads(report.read_text())["findings"][0]["path"] == "people.py"


def test_dry_run_refuses_sarif_in_one_line(planted: Path) -> None:
    done = run_cli(["review", "--dry-run", "--format", "sarif"], planted)
    assert done.returncode == 2
    assert "--format text or json" in _one_line(done.stderr)
    assert done.stdout == ""


def test_dry_run_names_the_settings_file_and_its_revision(planted: Path) -> None:
    bare = run_cli(["review", "--dry-run"], planted)
    assert "Settings: no .gitneural.toml at HEAD (" in bare.stdout
    commit_settings(planted, "[review]\neffort = 'high'\n")
    done = run_cli(["review", "--dry-run"], planted)
    assert done.returncode == 0, done.stderr
    assert "Settings: .gitneural.toml at HEAD (" in done.stdout
    assert "Effort high" in done.stdout
    repo = pygit2.Repository(str(planted))
    commit(repo, {"people.py": PLANTED}, "topic", parents=[repo.head.target], branch="topic")
    args = ["review", "--dry-run", "--base", "main", "--head", "topic", "--format", "json"]
    ranged = run_cli(args, planted)
    assert ranged.returncode == 0, ranged.stderr
    assert json.loads(ranged.stdout)["settings"].startswith(".gitneural.toml at main (")


def test_show_prompt_prints_the_exact_requests(planted: Path) -> None:
    done = run_cli(["review", "--dry-run", "--show-prompt", "--format", "json"], planted)
    assert done.returncode == 0, done.stderr
    [request] = json.loads(done.stdout)["requests"]
    assert set(request) == {
        "model",
        "messages",
        "max_completion_tokens",
        "reasoning_effort",
        "tools",
    }
    assert request["model"] == "kimi-k3" and request["reasoning_effort"] == "max"
    assert "people.py" in json.dumps(request["messages"])
    names = [t["function"]["name"] for t in request["tools"]]
    assert "submit_review" in names and "read_file" in names
    # What a real review sends first is exactly that (the stub records the body).
    with K3Stub([submit()]) as stub:
        run_cli(["review", "--quiet", "--format", "json"], planted, stub_env(stub))
        sent = stub.chat_requests[0].body
    assert sent["messages"] == request["messages"] and sent["tools"] == request["tools"]
    text = run_cli(["review", "--dry-run", "--show-prompt"], planted)
    assert "Request 1 of 1 (JSON, as sent):" in text.stdout
    refused = run_cli(["review", "--show-prompt"], planted)
    assert refused.returncode == 2 and "--dry-run" in _one_line(refused.stderr)


# -- messages ---------------------------------------------------------------------------


def test_argparse_mistakes_are_one_line_naming_the_help(planted: Path) -> None:
    done = run_cli(["review", "--effort", "maximal"], planted)
    assert done.returncode == 2
    line = _one_line(done.stderr)
    assert "invalid choice" in line and line.endswith("(see gitneural review --help)")
    unknown = run_cli(["hook", "run", "--bogus"], planted)
    assert unknown.returncode == 2
    assert _one_line(unknown.stderr).endswith("(see gitneural hook run --help)")


@pytest.mark.parametrize(
    ("command", "words"),
    [
        (["hook", "uninstall"], "put back"),
        (["db", "upgrade"], "newest schema"),
        (["db", "current"], "schema revision"),
        (["usage"], "one record per installation"),
        (["serve"], "GITHUB_WEBHOOK_SECRET"),
        (["serve"], "else 8000"),
        (["review"], "KIMI_API_KEY"),
    ],
)
def test_every_command_explains_itself(tmp_path: Path, command: list[str], words: str) -> None:
    done = run_cli([*command, "--help"], tmp_path)
    assert done.returncode == 0
    assert words in " ".join(done.stdout.split())


def test_a_top_level_key_is_named_with_its_section(planted: Path) -> None:
    commit_settings(planted, 'effort = "low"\n')
    done = run_cli(["review", "--dry-run"], planted)
    assert done.returncode == 2
    line = _one_line(done.stderr)
    assert "effort is outside any section: put it under [review] or [hook]" in line
    assert "unknown section" not in line


def test_settings_errors_name_the_revision_not_its_full_id(planted: Path) -> None:
    commit_settings(planted, "[review]\neffort = 'extreme'\n")
    done = run_cli(["review", "--dry-run"], planted)
    assert done.returncode == 2
    line = _one_line(done.stderr)
    assert ".gitneural.toml at HEAD (" in line
    assert not any(len(word.strip("():,")) == 40 for word in line.split())


def test_a_missing_directory_is_named_as_such(tmp_path: Path) -> None:
    done = run_cli(["review", "-C", str(tmp_path / "nowhere")], tmp_path)
    assert done.returncode == 2
    line = _one_line(done.stderr)
    assert "no such directory" in line and "not a git repository" not in line

"""``gitneural review`` end to end: the installed command, a real repository, the K3 stub."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from tests.fakes.k3 import K3Stub, Reply
from tests.support.paths import FIXTURES
from tests.support.planted import INVENTED_EVIDENCE, ORIGINAL, PLANTED, PLANTED_BUG
from tests.support.repos import commit, make_repo

GITNEURAL = str(Path(sys.executable).parent / "gitneural")
SARIF_SCHEMA = FIXTURES / "sarif" / "sarif-schema-2.1.0.json"

SUBMISSION = {"summary": "One regression in is_adult.", "findings": [PLANTED_BUG]}


def run_cli(
    args: list[str], cwd: Path, env: dict[str, str] | None = None, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("KIMI_", "MOONSHOT_"))}
    base.pop("GITNEURAL_REASONING_EFFORT", None)
    return subprocess.run(
        [GITNEURAL, *args],
        cwd=cwd,
        env={**base, **(env or {})},
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
    )


def stub_env(stub: K3Stub) -> dict[str, str]:
    return {"KIMI_API_KEY": stub.api_key, "KIMI_BASE_URL": stub.base_url}


def submit(arguments: dict[str, Any] | str = SUBMISSION) -> Reply:
    return Reply(
        reasoning="Comparing the old and new bounds.", tool_calls=[("submit_review", arguments)]
    )


def test_help_lists_commands_and_exit_codes(tmp_path: Path) -> None:
    result = run_cli(["--help"], tmp_path)
    assert result.returncode == 0
    assert "review" in result.stdout
    assert "Exit codes" in result.stdout


def test_dry_run_needs_no_key_and_sends_nothing(planted: Path) -> None:
    with K3Stub() as stub:
        result = run_cli(["review", "--dry-run"], planted, {"KIMI_BASE_URL": stub.base_url})
        assert stub.requests == []
    assert result.returncode == 0, result.stderr
    assert "Dry run: nothing was sent" in result.stdout
    assert "people.py" in result.stdout
    assert "prompt tokens" in result.stdout


def test_staged_json_reports_planted_bug_with_applicable_suggestion(planted: Path) -> None:
    with K3Stub([submit()]) as stub:
        result = run_cli(
            ["review", "--staged", "--format", "json", "--effort", "low"], planted, stub_env(stub)
        )
        bodies = [r.body for r in stub.chat_requests]
    assert result.returncode == 1, result.stderr  # a critical finding, --fail-on critical
    report = json.loads(result.stdout)
    (finding,) = report["findings"]
    assert (finding["path"], finding["start_line"], finding["side"]) == ("people.py", 2, "RIGHT")
    assert finding["placement"] == "inline"
    assert finding["suggestion"] == "    return age >= 18"
    applied = PLANTED.replace("    return age > 18", finding["suggestion"])
    assert applied == ORIGINAL
    assert report["usage"]["requests"] == 1
    for body in bodies:
        assert not {"temperature", "top_p", "n", "presence_penalty", "frequency_penalty"} & set(
            body
        )
        assert body["reasoning_effort"] == "low"
        assert body["max_completion_tokens"] > 0


def test_text_output_is_compiler_style_with_suggestion_diff(planted: Path) -> None:
    with K3Stub([submit()]) as stub:
        result = run_cli(["review", "--effort", "low", "--quiet"], planted, stub_env(stub))
    assert result.returncode == 1
    assert "people.py:2: critical: Off-by-one: 18-year-olds are no longer adults" in result.stdout
    assert "-    return age > 18" in result.stdout
    assert "+    return age >= 18" in result.stdout


def test_sarif_output_validates_against_the_2_1_0_schema(planted: Path) -> None:
    with K3Stub([submit()]) as stub:
        result = run_cli(
            ["review", "--format", "sarif", "--effort", "low", "--fail-on", "nit"],
            planted,
            stub_env(stub),
        )
    assert result.returncode == 1
    sarif = json.loads(result.stdout)
    schema = json.loads(SARIF_SCHEMA.read_text())
    jsonschema.Draft7Validator(schema).validate(sarif)
    (res,) = sarif["runs"][0]["results"]
    region = res["locations"][0]["physicalLocation"]["region"]
    assert region["startLine"] == 2
    assert res["level"] == "error"


def test_agentic_review_sends_every_assistant_message_back(planted: Path) -> None:
    """At effort max the model reads a file first; the stub's preserved-thinking check runs."""
    replies = [
        Reply(
            reasoning="Let me look at the callers.",
            tool_calls=[("read_file", {"path": "README.md"})],
        ),
        submit(),
    ]
    with K3Stub(replies) as stub:
        result = run_cli(["review", "--format", "json", "--quiet"], planted, stub_env(stub))
        requests = stub.chat_requests
    assert result.returncode == 1, result.stderr
    assert len(requests) == 2
    second = requests[1].body["messages"]
    assistant = [m for m in second if m["role"] == "assistant"]
    assert assistant and assistant[0]["reasoning_content"] == "Let me look at the callers."
    tool = [m for m in second if m["role"] == "tool"]
    assert tool and "people" in tool[0]["content"]
    assert requests[1].assistant_checked == 1
    assert json.loads(result.stdout)["findings"][0]["start_line"] == 2


def test_bad_submission_gets_one_repair_turn(planted: Path) -> None:
    broken = dict(SUBMISSION, findings=[dict(PLANTED_BUG, side="MIDDLE")])
    with K3Stub([submit(broken), submit()]) as stub:
        result = run_cli(["review", "--format", "json", "--effort", "low"], planted, stub_env(stub))
        assert len(stub.chat_requests) == 2
    assert result.returncode == 1, result.stderr
    assert json.loads(result.stdout)["findings"][0]["path"] == "people.py"


def test_unusable_after_repair_is_a_clear_model_failure(planted: Path) -> None:
    with K3Stub([submit("{not json"), submit("still not json")]) as stub:
        result = run_cli(["review", "--effort", "low"], planted, stub_env(stub))
    assert result.returncode == 3
    assert result.stderr.count("\n") == 1
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize(
    ("reply", "code", "words"),
    [
        (
            Reply.http_error(401, "invalid_authentication_error", "Invalid Authentication"),
            3,
            "rejected",
        ),
        (Reply.http_error(429, "exceeded_current_quota_error", "quota exceeded"), 3, "quota"),
        (
            Reply.http_error(
                400, "invalid_request_error", "Your request exceeded model token limit: 1048576"
            ),
            3,
            "too long",
        ),
    ],
)
def test_api_failures_are_one_line_with_exit_3(
    planted: Path, reply: Reply, code: int, words: str
) -> None:
    with K3Stub([reply]) as stub:
        result = run_cli(["review", "--effort", "low"], planted, stub_env(stub))
    assert result.returncode == code
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert words in lines[0].lower()
    assert stub.api_key not in result.stderr


def test_missing_key_is_a_configuration_error(planted: Path) -> None:
    result = run_cli(["review"], planted)
    assert result.returncode == 2
    assert "KIMI_API_KEY" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_wrong_base_url_is_one_line_with_exit_3(planted: Path) -> None:
    env = {"KIMI_API_KEY": "sk-test-unused", "KIMI_BASE_URL": "http://127.0.0.1:9/v1"}
    result = run_cli(["review", "--effort", "low"], planted, env)
    assert result.returncode == 3
    assert "127.0.0.1:9" in result.stderr
    # The error is one line; the progress line may log "K3 waiting 15s" between retries
    # on a slow machine (when stderr is not a terminal, a line every 15 s of waiting).
    errors = [ln for ln in result.stderr.strip().splitlines() if not ln.startswith("K3 ")]
    assert len(errors) == 1, result.stderr


def test_diff_from_stdin_and_base_head(planted: Path) -> None:
    diff = subprocess.run(
        ["git", "diff", "--cached"], cwd=planted, capture_output=True, text=True, check=True
    ).stdout
    with K3Stub([submit()]) as stub:
        result = run_cli(
            ["review", "--diff", "-", "--format", "json", "--effort", "low"],
            planted,
            stub_env(stub),
            stdin=diff,
        )
    assert result.returncode == 1, result.stderr
    finding = json.loads(result.stdout)["findings"][0]
    assert finding["start_line"] == 2 and finding["suggestion"] == "    return age >= 18"


def test_usage_errors_exit_2(planted: Path, tmp_path: Path) -> None:
    assert run_cli(["review", "--head", "HEAD"], planted).returncode == 2
    assert run_cli(["review", "--base", "no-such-rev", "--dry-run"], planted).returncode == 2
    outside = tmp_path / "empty"
    outside.mkdir()
    result = run_cli(["review", "--dry-run"], outside)
    assert result.returncode == 2 and "not a git repository" in result.stderr


def test_invalid_config_names_the_key(planted: Path) -> None:
    config = planted / "custom.toml"
    config.write_text("[review]\nmax_coments = 3\n")
    result = run_cli(["review", "--dry-run", "--config", str(config)], planted)
    assert result.returncode == 2
    assert "review.max_coments" in result.stderr


@pytest.mark.parametrize(
    "flavour",
    [
        {"reasoning_field": "reasoning"},  # vLLM names the field `reasoning`
        {"usage_in_choice": True},  # usage inside choices[0] of the last chunk
        {"cached_in_details": True},  # cached tokens in prompt_tokens_details
    ],
    ids=["vllm-reasoning", "usage-in-choice", "cached-in-details"],
)
def test_other_k3_compatible_servers(planted: Path, flavour: dict[str, Any]) -> None:
    """Servers that speak the wire format with other field placements work the same."""
    replies = [
        Reply(
            reasoning="Check the caller first.", tool_calls=[("read_file", {"path": "README.md"})]
        ),
        submit(),
    ]
    with K3Stub(replies, **flavour) as stub:
        result = run_cli(["review", "--format", "json", "--quiet"], planted, stub_env(stub))
        requests = stub.chat_requests
    assert result.returncode == 1, result.stderr
    assert [r.status for r in requests] == [200, 200]
    field = flavour.get("reasoning_field", "reasoning_content")
    [assistant] = [m for m in requests[1].body["messages"] if m["role"] == "assistant"]
    assert assistant[field] == "Check the caller first."
    report = json.loads(result.stdout)
    assert report["findings"][0]["start_line"] == 2
    assert report["usage"]["requests"] == 2 and report["usage"]["prompt_tokens"] > 0
    assert report["usage"]["cached_tokens"] > 0  # the second request repeats the first


def test_an_empty_change_is_not_an_error_and_needs_no_key(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "clean")
    commit(repo, {"a.py": "x = 1\n"}, "initial")
    for args in (["review"], ["review", "--dry-run"], ["review", "--base", "HEAD"]):
        result = run_cli(args, tmp_path / "clean")
        assert result.returncode == 0, result.stderr
        assert "nothing to review" in result.stderr and result.stdout == ""


# -- the evidence rule ------------------------------------------------------------------

INVENTED = dict(PLANTED_BUG, evidence=INVENTED_EVIDENCE)


@pytest.mark.parametrize("fmt", ["text", "json", "sarif"])
def test_an_invented_quote_is_not_reported_and_every_format_counts_it(
    planted: Path, fmt: str
) -> None:
    answer = {"summary": "One regression.", "findings": [INVENTED]}
    with K3Stub([submit(answer)]) as stub:
        result = run_cli(
            ["review", "--format", fmt, "--effort", "low", "--quiet"], planted, stub_env(stub)
        )
    # The only finding was critical, but it is not shown: nothing fails the run.
    assert result.returncode == 0, result.stderr
    reason = "quoted code not found in new-file lines 1-5"
    if fmt == "text":
        assert result.stdout.startswith("No findings.\n1 finding dropped: quoted code not found\n")
        assert "Dropped: 1\n    people.py:2: critical: Off-by-one" in result.stdout
        assert f"({reason})" in result.stdout
    elif fmt == "json":
        report = json.loads(result.stdout)
        assert report["findings"] == [] and report["evidence_not_found"] == 1
        [dropped] = report["dropped"]
        assert dropped["reason"] == reason
        assert dropped["finding"]["evidence"] == INVENTED_EVIDENCE
    else:
        sarif = json.loads(result.stdout)
        jsonschema.Draft7Validator(json.loads(SARIF_SCHEMA.read_text())).validate(sarif)
        run = sarif["runs"][0]
        assert run["results"] == []
        assert (run["properties"]["dropped"], run["properties"]["evidenceNotFound"]) == (1, 1)
        [dropped] = run["properties"]["droppedFindings"]
        assert (dropped["path"], dropped["startLine"], dropped["reason"]) == (
            "people.py",
            2,
            reason,
        )


def test_a_real_quote_with_other_indentation_is_reported(planted: Path) -> None:
    quoted = dict(PLANTED_BUG, evidence="\treturn age>18")
    with K3Stub([submit({"summary": "One regression.", "findings": [quoted]})]) as stub:
        result = run_cli(["review", "--format", "json", "--effort", "low"], planted, stub_env(stub))
    assert result.returncode == 1, result.stderr
    report = json.loads(result.stdout)
    assert [f["start_line"] for f in report["findings"]] == [2]
    assert report["dropped"] == [] and report["evidence_not_found"] == 0

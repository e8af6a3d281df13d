"""Committed secrets never reach the model, even when it asks to read them, and each is
reported as a critical finding that does not echo it."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from bot.domain.change import Change
from bot.domain.results import Severity
from bot.git.repo import range_change
from bot.review.pipeline import review
from bot.review.plan import PlanOptions, plan_review
from tests.fakes.k3 import K3Stub
from tests.fakes.k3.brain import call, client_for, config, results_by_call, submit, tools_reply
from tests.fakes.keys import new_rsa_pem
from tests.support.repos import commit, make_repo

# Built at run time so that no secret scanner flags this repository.
TOKEN = "ghp_" + "".join(chr(ord("A") + (i * 7) % 26) for i in range(18)) + "k3Q9x1Lm8Zp2Wv5Rt7"


def _windows(secret: str, size: int = 16) -> set[str]:
    """Every ``size``-character piece of the secret: a partial leak is a leak too."""
    return {secret[i : i + size] for i in range(len(secret) - size + 1)}


def _leaks(text: str, pieces: set[str]) -> list[str]:
    return sorted(p for p in pieces if p in text or json.dumps(p)[1:-1] in text)


@pytest.fixture
def leaked(tmp_path: Path) -> tuple[Change, str]:
    pem = new_rsa_pem()
    repo = make_repo(tmp_path / "repo")
    commit(repo, {"app/settings.py": "DEBUG = False\n", "README.md": "app\n"}, "base")
    commit(
        repo,
        {
            "app/settings.py": f'DEBUG = False\nGITHUB_TOKEN = "{TOKEN}"\n',
            "deploy/id_rsa": pem,
        },
        "deploy settings",
    )
    return range_change(repo, "HEAD~1", "HEAD"), pem


def test_secrets_never_reach_the_model_and_are_reported(leaked: tuple[Change, str]) -> None:
    change, pem = leaked
    body = "".join(line for line in pem.splitlines() if "-----" not in line)
    pieces = _windows(TOKEN[4:]) | _windows(body)
    replies = [
        tools_reply(
            call("read_file", path="app/settings.py"),
            call("read_file", path="deploy/id_rsa"),
            call("read_file", path="deploy/id_rsa", start_line=3, end_line=5),
            call("search", pattern="ghp_"),
            call("search", pattern="ghp_[A-Za-z0-9]{36}", regex=True),
            call("search", pattern=TOKEN[:10]),
            call("search", pattern="PRIVATE KEY"),
            call("find_definition", symbol="GITHUB_TOKEN"),
            reasoning="Let me read the settings and the key.",
        ),
        submit("Settings and a deploy key."),
    ]
    with K3Stub(replies) as stub:
        result = review(change, config(), client_for(stub))
        requests = stub.chat_requests
    assert len(requests) == 2 and all(r.status == 200 for r in requests)
    for request in requests:
        assert _leaks(request.raw, pieces) == []
    results = {
        json.dumps(args, sort_keys=True): out for _, args, out in results_by_call(requests[1].body)
    }
    assert '2 | GITHUB_TOKEN = "[REDACTED:' in results['{"path": "app/settings.py"}']
    assert "[REDACTED:" in results['{"path": "deploy/id_rsa"}']
    assert (
        "BEGIN RSA PRIVATE KEY"
        not in results['{"end_line": 5, "path": "deploy/id_rsa", "start_line": 3}']
    )
    # A search cannot probe the secret either: it searches the redacted text.
    assert results['{"pattern": "ghp_[A-Za-z0-9]{36}", "regex": true}'].startswith("no matches")
    assert results[json.dumps({"pattern": TOKEN[:10]})].startswith("no matches")

    secrets = [f for f in result.findings if f.source == "secret-scan"]
    assert {(f.path, f.start_line) for f in secrets} == {
        ("app/settings.py", 2),
        ("deploy/id_rsa", 1),
    }
    assert all(f.severity is Severity.CRITICAL for f in secrets)
    report = json.dumps([f.as_dict() for f in result.findings] + [result.summary])
    assert _leaks(report, pieces) == []


def test_one_shot_review_redacts_too(leaked: tuple[Change, str]) -> None:
    change, pem = leaked
    body = "".join(line for line in pem.splitlines() if "-----" not in line)
    with K3Stub([submit()]) as stub:
        result = review(change, config(), client_for(stub, "low"))
        (request,) = stub.chat_requests
    assert _leaks(request.raw, _windows(TOKEN[4:]) | _windows(body)) == []
    assert sum(f.severity is Severity.CRITICAL for f in result.findings) == 2


def test_context_around_a_change_is_redacted_where_it_is_shown(tmp_path: Path) -> None:
    # The function around the change is longer than a context unit may be, so only its
    # first lines are shown: they end inside a private key whose END is further down.
    # (Indented: git would take a key line at column 0 for the hunk's function name.)
    pem = textwrap.indent(new_rsa_pem(), "        ")
    steps = "".join(f"    step_{i} = {i}\n" for i in range(260))
    source = (
        "def load_keys():\n"
        '    """Keys for the deploy."""\n'
        f'    token = "{TOKEN}"\n'
        f'    key = """{pem}"""\n'
        f"{steps}"
        "    return token, key\n"
    )
    repo = make_repo(tmp_path / "repo")
    commit(repo, {"deploy/keys.py": source}, "base")
    commit(repo, {"deploy/keys.py": source.replace("step_200 = 200", "step_200 = 201")})
    change = range_change(repo, "HEAD~1", "HEAD")
    plan = plan_review(change, config(), PlanOptions(effort="low", related=False))
    (context,) = [f.context_text for f in plan.files]
    text = json.dumps(plan.messages)
    assert context.startswith("lines 1-15: def load_keys():")  # the unit is shown, cut
    assert "BEGIN RSA PRIVATE KEY" not in context
    # The token's line, and each of the key's lines shown (4-15) says it is redacted.
    numbered = {int(ln.split("|")[0]): ln for ln in context.splitlines()[1:]}
    assert all("[REDACTED:private key]" in numbered[n] for n in range(4, 16))
    assert context.count("[REDACTED:") == 1 + 12
    body = "".join(line for line in pem.splitlines() if "-----" not in line)
    assert _leaks(text, _windows(TOKEN[4:]) | _windows(body)) == []

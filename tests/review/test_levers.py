"""The levers against noise in the review core, against the K3 stub over HTTP:
``review.passes`` keeps what most passes report, ``review.verify`` drops what K3 refutes
in the review's own conversation, its prompt served from the stub's prefix cache."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from bot.domain.change import Change
from bot.errors import ConfigError
from bot.git.repo import range_change
from bot.review.pipeline import review
from bot.settings.repository import parse_config
from tests.fakes.k3 import K3Stub
from tests.fakes.k3.brain import client_for, config
from tests.fakes.k3.levers import REFUTE_MARK, LeverBrain
from tests.support.repos import commit, make_repo

BASE = {
    "calc.py": "def half(n):\n    return n // 2\n",
    "units.py": "def metres(feet):\n    return feet * 0.3048\n",
    "names.py": "def shout(s):\n    return s.upper()\n",
}
HEAD = {
    "calc.py": f"def half(n):\n    return n / 2  # {REFUTE_MARK}: callers want a float\n",
    "units.py": "def metres(feet):\n    return feet * 0.348\n",
    "names.py": "def shout(s):\n    return s.upper() + '!'\n",
}


def finding(path: str, line: int, title: str, evidence: str, **more: Any) -> dict[str, Any]:
    return {
        "path": path,
        "start_line": line,
        "end_line": line,
        "side": "RIGHT",
        "severity": more.pop("severity", "major"),
        "category": "bug",
        "title": title,
        "body": f"{title}.",
        "evidence": evidence,
        **more,
    }


FLOAT = finding("calc.py", 2, "Float division", f"    return n / 2  # {REFUTE_MARK}: callers")
UNITS = finding("units.py", 2, "Wrong conversion factor", "    return feet * 0.348")
SHOUT = finding("names.py", 2, "Shouting adds punctuation", "    return s.upper() + '!'")


@pytest.fixture
def change(tmp_path: Path) -> Change:
    repo = make_repo(tmp_path / "repo")
    commit(repo, BASE, "base")
    commit(repo, HEAD, "change three files")
    return range_change(repo, "HEAD~1", "HEAD")


def test_three_passes_keep_what_most_of_them_report(change: Change) -> None:
    units_reworded = {**UNITS, "title": "0.348 is not feet to metres", "start_line": 1}
    brain = LeverBrain(passes=[[UNITS, SHOUT], [units_reworded], [UNITS, FLOAT]])
    cfg = config(review__passes=3)
    with K3Stub(brain=brain) as stub:
        result = review(change, cfg, client_for(stub, "low"))
        requests = stub.chat_requests
    assert [f.path for f in result.findings] == ["units.py"]  # 3 of 3
    assert result.findings[0].title == "Wrong conversion factor"  # the first pass's words
    assert sorted((f.path, why) for f, why in result.dropped) == [
        ("calc.py", "no majority: reported by 1 of 3 passes"),
        ("names.py", "no majority: reported by 1 of 3 passes"),
    ]
    assert result.unmajorities() == 2 and "3 independent passes" in result.summary
    # Three requests of the same prompt: the second and third from the stub's cache.
    assert len(requests) == 3 and len({r.raw for r in requests}) == 1
    usages = [r.usage or {} for r in requests]
    assert usages[0]["cached_tokens"] == 0
    assert all(u["cached_tokens"] >= 0.9 * u["prompt_tokens"] for u in usages[1:])
    assert result.usage.requests == 3


def test_verify_drops_the_refuted_finding_in_the_same_conversation(change: Change) -> None:
    brain = LeverBrain(passes=[[FLOAT, UNITS, {**SHOUT, "severity": "nit"}]])
    with K3Stub(brain=brain) as stub:
        result = review(change, config(review__verify="all"), client_for(stub))
        first, second = stub.chat_requests
        checked = stub.thinking_checks
    assert sorted(f.path for f in result.findings) == ["names.py", "units.py"]
    [(refuted, why)] = result.dropped
    assert refuted.path == "calc.py" and why.startswith("refuted: The code says this is intended")
    assert result.refuted() == 1
    assert [item["title"] for item in brain.verified[0]] == [
        "Float division",
        "Wrong conversion factor",
        "Shouting adds punctuation",
    ]
    # The same conversation: the review's request is the verify request's prefix, the
    # tool list unchanged, the review's answer sent back as it came (preserved thinking).
    assert second.body["messages"][: len(first.body["messages"])] == first.body["messages"]
    assert second.body["tools"] == first.body["tools"]
    assert "submit_verdicts" in [t["function"]["name"] for t in first.body["tools"]]
    assert checked >= 1
    usage = second.usage or {}
    assert usage["cached_tokens"] >= (first.usage or {})["prompt_tokens"] - 4
    assert result.usage.requests == 2


def test_verify_critical_asks_only_about_the_most_severe(change: Change) -> None:
    minor_float = {**FLOAT, "severity": "minor"}
    brain = LeverBrain(passes=[[minor_float, UNITS]])
    with K3Stub(brain=brain) as stub:
        result = review(change, config(review__verify="critical"), client_for(stub, "low"))
        assert len(stub.chat_requests) == 2
    assert [item["title"] for item in brain.verified[0]] == ["Wrong conversion factor"]
    # The minor one was not asked about, so K3 could not refute it: it stays.
    assert sorted(f.path for f in result.findings) == ["calc.py", "units.py"]


@pytest.mark.parametrize("passes", [0, 6])
def test_passes_outside_one_to_five_is_a_config_error(passes: int) -> None:
    with pytest.raises(ConfigError, match=r"review\.passes must be from 1 to 5"):
        parse_config(f"[review]\npasses = {passes}\n")
    assert parse_config('[review]\npasses = 5\nverify = "critical"\n').review.passes == 5

"""The levers against noise through ``gitneural review`` (the installed command, as a
subprocess) on a repository built here, against the K3 stub: with ``review.verify`` on,
the finding the stub refutes is not reported."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.test_cli_review import run_cli, stub_env
from tests.fakes.k3 import K3Stub
from tests.fakes.k3.levers import REFUTE_MARK, LeverBrain
from tests.support.job_world import CALC, CALC_BUG
from tests.support.planted import ORIGINAL, PLANTED, PLANTED_BUG
from tests.support.repos import commit, make_repo, stage

CALC_INTENDED = CALC.replace("n / 2", f"n / 2.0  # {REFUTE_MARK}: a float on purpose")
CALC_REFUTABLE = {**CALC_BUG, "evidence": f"    return n / 2.0  # {REFUTE_MARK}"}


def _repo(root: Path, settings: str) -> Path:
    repo = make_repo(root / "repo")
    commit(repo, {"people.py": ORIGINAL, "calc.py": CALC, ".gitneural.toml": settings}, "base")
    stage(repo, {"people.py": PLANTED, "calc.py": CALC_INTENDED})
    return root / "repo"


def test_verify_reports_only_the_confirmed_finding(tmp_path: Path) -> None:
    repo = _repo(tmp_path, '[review]\nverify = "all"\n')
    brain = LeverBrain(passes=[[PLANTED_BUG, CALC_REFUTABLE]])
    with K3Stub(brain=brain) as stub:
        result = run_cli(["review", "--format", "json", "--effort", "low"], repo, stub_env(stub))
        text = run_cli(["review", "--effort", "low", "--quiet"], repo, stub_env(stub))
        asked = len(stub.chat_requests)
    assert result.returncode == 1, result.stderr  # the confirmed finding is critical
    report = json.loads(result.stdout)
    assert [f["path"] for f in report["findings"]] == ["people.py"]
    assert report["refuted"] == 1
    [dropped] = report["dropped"]
    assert dropped["finding"]["path"] == "calc.py"
    assert dropped["reason"].startswith("refuted: The code says this is intended")
    assert asked == 4  # each review: its request, then the verification
    assert "people.py:2: critical: Off-by-one" in text.stdout
    # Listed among the dropped findings, with the reason, never as a finding of its own.
    assert not [line for line in text.stdout.splitlines() if line.startswith("calc.py")]
    assert "calc.py:2: major: Integer division changed to float division (refuted: " in text.stdout
    assert "1 finding dropped: refuted" in text.stdout


def test_three_passes_report_what_most_passes_found(tmp_path: Path) -> None:
    repo = _repo(tmp_path, "[review]\npasses = 3\n")
    calc_honest = {**CALC_BUG, "evidence": CALC_REFUTABLE["evidence"]}
    brain = LeverBrain(passes=[[PLANTED_BUG, calc_honest], [PLANTED_BUG], [PLANTED_BUG]])
    with K3Stub(brain=brain) as stub:
        result = run_cli(["review", "--format", "json", "--effort", "low"], repo, stub_env(stub))
        assert len(stub.chat_requests) == 3
    report = json.loads(result.stdout)
    assert [f["path"] for f in report["findings"]] == ["people.py"]
    assert report["no_majority"] == 1 and report["refuted"] == 0
    assert report["usage"]["requests"] == 3

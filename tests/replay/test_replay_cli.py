"""``gitneural replay`` end to end: the installed command on a repository of merged pull
requests built here, the K3 stub flagging a golden line and a decoy."""

from __future__ import annotations

import json
import re
import signal
import subprocess
from pathlib import Path

import pygit2

from tests.fakes.k3 import K3Stub
from tests.fakes.k3.brain import user_text
from tests.replay.conftest import (
    BASE_APP,
    FEATURE_APP,
    GITNEURAL,
    BlockingBrain,
    History,
    cli_env,
    flagging_brain,
    replay,
)
from tests.support.repos import commit, make_repo
from tests.support.signals import interruptible


def test_one_golden_line_and_a_decoy_give_recall_1_of_1_and_precision_1_of_2(
    history: History, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    with K3Stub(brain=flagging_brain) as stub:
        text = replay(
            ["--golden", str(history.golden), "--out", str(out)],
            history.path,
            stub,
            tmp_path / "data",
        )
        asked = len(stub.chat_requests)
    assert text.returncode == 0, text.stderr
    assert asked == 3  # one one-shot request per merged pull request
    assert "Recall 1/1 (100%); precision 1/2 (50%)." in text.stdout
    for title in history.titles:
        assert title in text.stdout
    assert "change 3 of 3" in text.stderr
    report = json.loads((out / "report.json").read_text())
    totals = report["totals"]
    assert {
        k: totals[k] for k in ("changes", "findings", "golden", "golden_found", "findings_matched")
    } == {"changes": 3, "findings": 2, "golden": 1, "golden_found": 1, "findings_matched": 1}
    assert (totals["recall"], totals["precision"]) == (1.0, 0.5)
    assert totals["prompt_tokens"] > 0 and totals["completion_tokens"] > 0
    assert set(totals) >= {"cached_tokens", "seconds"}
    first = report["changes"][0]
    assert first["title"] == "Compute the values"
    by_line = {f["start_line"]: f for f in first["findings"]}
    assert by_line[3]["matches"] == [0] and by_line[3]["severity"] == "critical"
    assert by_line[15]["matches"] == []
    assert first["golden"][0]["found"] is True
    markdown = (out / "report.md").read_text()
    assert "Recall: 1/1 (100%)" in markdown and "Precision: 1/2 (50%)" in markdown
    assert "`app.py:3` Suspicious line 3 (golden 1)" in markdown
    html = (out / "report.html").read_text()
    assert (
        "<svg" in html
        and "<script" not in html
        and "http://" not in html.replace('xmlns="http://www.w3.org/2000/svg"', "")
    )
    assert "Recall: <b>1/1 (100%)</b>" in html and "Precision: <b>1/2 (50%)</b>" in html


def test_json_format_has_changes_and_totals(history: History, tmp_path: Path) -> None:
    with K3Stub(brain=flagging_brain) as stub:
        result = replay(
            ["--golden", str(history.golden), "--format", "json"],
            history.path,
            stub,
            tmp_path / "data",
        )
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert [c["title"] for c in report["changes"]] == history.titles
    assert (report["totals"]["recall"], report["totals"]["precision"]) == (1.0, 0.5)


def test_a_second_run_asks_the_model_nothing_and_fresh_asks_again(
    history: History, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    args = ["--golden", str(history.golden), "--format", "json"]
    with K3Stub(brain=flagging_brain) as stub:
        first = replay(args, history.path, stub, data)
        after_first = len(stub.chat_requests)
        second = replay(args, history.path, stub, data)
        after_second = len(stub.chat_requests)
        fresh = replay([*args, "--fresh"], history.path, stub, data)
        after_fresh = len(stub.chat_requests)
    assert first.returncode == second.returncode == fresh.returncode == 0, second.stderr
    assert (after_first, after_second, after_fresh) == (3, 3, 6)
    assert "0 to ask the model" in second.stderr
    kept = json.loads(second.stdout)
    assert kept["totals"] == {
        **json.loads(first.stdout)["totals"],
        "seconds": kept["totals"]["seconds"],
    }
    assert all(c["kept_from_earlier_run"] for c in kept["changes"])
    assert not any(c["kept_from_earlier_run"] for c in json.loads(first.stdout)["changes"])


def test_sigint_mid_run_keeps_the_finished_changes(history: History, tmp_path: Path) -> None:
    data = tmp_path / "data"
    brain = BlockingBrain(hold="SECOND")
    with K3Stub(brain=brain) as stub:
        proc = subprocess.Popen(
            [GITNEURAL, "replay", "--effort", "low", "--golden", str(history.golden)],
            cwd=history.path,
            env=cli_env(stub, data),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            preexec_fn=interruptible,  # it is sent SIGINT: tests/support/signals.py says why
        )
        try:
            assert brain.held.wait(60), "the second change never reached the stub"
            proc.send_signal(signal.SIGINT)
            _, err = proc.communicate(timeout=60)
        finally:
            brain.release.set()
            if proc.poll() is None:
                proc.kill()
        assert proc.returncode == 130, err
        assert "1 finished changes are kept" in err
        asked_before = len(stub.chat_requests)
        again = replay(
            ["--golden", str(history.golden), "--format", "json"], history.path, stub, data
        )
        asked_again = [r.body for r in stub.chat_requests[asked_before:]]
    assert again.returncode == 0, again.stderr
    assert asked_before == 2
    # Only the two unfinished changes were asked for: the first was kept.
    assert len(asked_again) == 2
    assert not any("BUG_LINE" in json.dumps(b) for b in asked_again)
    assert json.loads(again.stdout)["totals"]["golden_found"] == 1


def test_dry_run_asks_nothing_and_reports_the_same_json_without_findings(
    history: History, tmp_path: Path
) -> None:
    with K3Stub(brain=flagging_brain) as stub:
        result = replay(
            ["--golden", str(history.golden), "--format", "json", "--dry-run"],
            history.path,
            stub,
            tmp_path / "data",
        )
        assert stub.requests == []
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["dry_run"] is True
    assert report["totals"]["findings"] == 0 and report["totals"]["golden"] == 1
    assert all(c["estimated_prompt_tokens"] > 0 for c in report["changes"])
    assert re.search(r"about [\d,]+ prompt tokens \(estimated\)", result.stderr)


def test_max_tokens_stops_before_asking_unless_yes(history: History, tmp_path: Path) -> None:
    data = tmp_path / "data"
    with K3Stub(brain=flagging_brain) as stub:
        refused = replay(["--max-tokens", "100"], history.path, stub, data)
        assert stub.requests == []
        allowed = replay(["--max-tokens", "100", "--yes"], history.path, stub, data)
        asked = len(stub.chat_requests)
    assert refused.returncode == 4
    (error,) = [line for line in refused.stderr.splitlines() if "error" in line]
    assert "above --max-tokens 100" in error and "--yes" in error
    assert refused.stdout == ""
    assert allowed.returncode == 0, allowed.stderr
    assert asked == 3


def test_compare_gives_one_table_of_two_settings(history: History, tmp_path: Path) -> None:
    other = tmp_path / "other.toml"
    other.write_text("[review]\nmax_comments = 1\n")
    with K3Stub(brain=flagging_brain) as stub:
        result = replay(
            ["--golden", str(history.golden), "--compare", str(other)],
            history.path,
            stub,
            tmp_path / "data",
        )
        asked = len(stub.chat_requests)
    assert result.returncode == 0, result.stderr
    assert asked == 6  # each change under each settings file
    lines = result.stdout.splitlines()
    header = lines[0]
    assert "each base's .gitneural.toml" in header and str(other) in header
    feature = next(line for line in lines if "Compute the values" in line)
    assert re.search(r"2 findings\s+1 findings", feature)
    recall = next(line for line in lines if line.startswith("recall"))
    precision = next(line for line in lines if line.startswith("precision"))
    assert re.search(r"1/1 \(100%\)\s+1/1 \(100%\)", recall)
    assert re.search(r"1/2 \(50%\)\s+1/1 \(100%\)", precision)
    assert any(line.startswith("prompt tokens") for line in lines)


def test_each_change_is_reviewed_with_its_bases_settings_and_instructions(
    tmp_path: Path,
) -> None:
    """The first change's base allows one comment and says RULE_AT_BASE; its own branch
    loosens both. The second change's base is the first merge: the branch's rules."""
    repo = make_repo(tmp_path / "repo")
    commit(
        repo,
        {
            "app.py": BASE_APP,
            "AGENTS.md": "RULE_AT_BASE\n",
            ".gitneural.toml": "[review]\nmax_comments = 1\n",
        },
        "initial",
    )
    loosened = {
        "AGENTS.md": "RULE_FROM_BRANCH\n",
        ".gitneural.toml": "[review]\nmax_comments = 9\n",
    }
    main = repo.references["refs/heads/main"].peel(pygit2.Commit)
    side = commit(repo, {"app.py": FEATURE_APP, **loosened}, "work", branch="f", parents=[main])
    commit(repo, {"app.py": FEATURE_APP, **loosened}, "Merge f", parents=[main, side])
    again = FEATURE_APP.replace("value_4 = 4\n", "value_4 = 4  # BUG_LINE again\n")
    main = repo.references["refs/heads/main"].peel(pygit2.Commit)
    side = commit(repo, {"app.py": again}, "work 2", branch="g", parents=[main])
    commit(repo, {"app.py": again}, "Merge g", parents=[main, side])
    with K3Stub(brain=flagging_brain) as stub:
        result = replay(["--format", "json"], tmp_path / "repo", stub, tmp_path / "data")
        prompts = [
            user_text(r.body).split("# The change under review")[0] for r in stub.chat_requests
        ]
    assert result.returncode == 0, result.stderr
    assert "RULE_AT_BASE" in prompts[0] and "RULE_FROM_BRANCH" not in prompts[0]
    assert "RULE_FROM_BRANCH" in prompts[1]
    first, _ = json.loads(result.stdout)["changes"]
    assert len(first["findings"]) == 1  # the base's max_comments, not the branch's


def test_by_default_the_golden_items_are_the_lines_a_later_fix_changed(
    history: History, tmp_path: Path
) -> None:
    repo = pygit2.Repository(str(history.path))
    fixed = FEATURE_APP.replace("value_3 = 3 / 0  # BUG_LINE\n", "value_3 = 3\n")
    commit(repo, {"app.py": fixed}, "Fix the division by zero in value_3")
    commit(repo, {"app.py": fixed.replace("value_15 = 'fifteen'", "value_15 = 'xv'")}, "Tidy")
    with K3Stub(brain=flagging_brain) as stub:
        result = replay(["--format", "json"], history.path, stub, tmp_path / "data")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    [golden] = report["changes"][0]["golden"]
    assert (golden["path"], golden["lines"], golden["found"]) == ("app.py", [3, 3], True)
    assert golden["fix_subject"] == "Fix the division by zero in value_3"
    totals = report["totals"]
    # The decoy's line changed too, but in a commit that says no fix: not golden.
    assert (totals["golden"], totals["recall"], totals["precision"]) == (1, 1.0, 0.5)

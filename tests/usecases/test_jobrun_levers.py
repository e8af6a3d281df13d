"""The levers against noise in the App's review job: the fake GitHub, the K3 stub, real
git. With ``review.verify`` on, the finding the stub refutes is never posted."""

from __future__ import annotations

from pathlib import Path

from bot.usecases.review.run import run_review_job
from tests.fakes.k3.levers import REFUTE_MARK, LeverBrain
from tests.support.job_world import CALC, CALC_BUG, job_world
from tests.support.planted import PLANTED, PLANTED_BUG

SETTINGS = '[review]\neffort = "low"\nverify = "all"\n'
CALC_INTENDED = CALC.replace("n / 2", f"n / 2.0  # {REFUTE_MARK}: a float on purpose")
CALC_REFUTABLE = {**CALC_BUG, "evidence": f"    return n / 2.0  # {REFUTE_MARK}"}


def test_verify_posts_the_confirmed_finding_and_never_the_refuted_one(tmp_path: Path) -> None:
    files = {"people.py": PLANTED, "calc.py": CALC_INTENDED}
    with job_world(tmp_path, base_files={".gitneural.toml": SETTINGS}, pr_files=files) as w:
        brain = LeverBrain(passes=[[PLANTED_BUG, CALC_REFUTABLE]])
        w.stub.brain = brain
        outcome = run_review_job(w.job("opened"), w.ctx)
        [review] = w.reviews()
        [check] = w.check_runs()
        review_request, verify_request = w.stub.chat_requests
    assert outcome.status == "posted"
    [comment] = review["comments"]
    assert (comment["path"], comment["line"]) == ("people.py", 2)
    assert "calc.py" not in review["body"].split("<!--")[0].replace("`calc.py`", "")
    assert "Integer division" not in review["body"] + comment["body"]
    assert "1 finding dropped: refuted" in review["body"]
    assert "1 finding dropped: refuted" in check["output"]["summary"]
    assert "calc.py`: refuted: The code says this is intended" in check["output"]["text"]
    assert [a["path"] for a in check["annotations"]] == ["people.py"]
    # Both findings were asked about, in the review's own conversation.
    assert [item["path"] for item in brain.verified[0]] == ["people.py", "calc.py"]
    prefix = review_request.body["messages"]
    assert verify_request.body["messages"][: len(prefix)] == prefix

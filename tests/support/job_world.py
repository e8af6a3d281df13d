"""Shared set-up of the review-job tests: a fake GitHub with a repository and a PR holding
a planted bug, the K3 stub, and a JobContext pointing at both.

    with job_world(tmp_path) as w:
        w.stub.push(submit(PLANTED_BUG))
        outcome = run_review_job(w.job("opened"), w.ctx)
"""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bot.gh.api.access_tokens import InstallationTokens
from bot.gh.api.credentials import AppCredentials
from bot.gh.mirrors.cache import MirrorCache
from bot.jobs import ReviewJob
from bot.llm.settings import LLMSettings
from bot.usecases.review.run import JobContext
from tests.fakes.github import FakeGitHub
from tests.fakes.k3 import K3Stub, Reply
from tests.support.people import grant_maintainers
from tests.support.planted import ORIGINAL, PLANTED

REPO = "octo/app"
CALC = "def half(n):\n    return n / 2\n"
CONFIG = '[review]\neffort = "low"\n'

CALC_BUG: dict[str, Any] = {
    "path": "calc.py",
    "start_line": 2,
    "end_line": 2,
    "side": "RIGHT",
    "severity": "major",
    "category": "bug",
    "title": "Integer division changed to float division",
    "body": "Callers index lists with the result; `/` returns a float.",
    "suggestion": "    return n // 2",
    "evidence": "    return n / 2.0",
}

_deliveries = itertools.count(1)


def submit(
    *findings: dict[str, Any],
    summary: str = "Reviewed the change.",
    walkthrough: dict[str, Any] | None = None,
) -> Reply:
    arguments: dict[str, Any] = {"summary": summary, "findings": list(findings)}
    if walkthrough is not None:
        arguments["walkthrough"] = walkthrough
    return Reply(reasoning="Comparing old and new code.", tool_calls=[("submit_review", arguments)])


@dataclass
class World:
    gh: FakeGitHub
    stub: K3Stub
    ctx: JobContext
    number: int

    def job(self, trigger: str = "opened", **kwargs: Any) -> ReviewJob:
        head = None if trigger == "command" else self.gh.head_sha(REPO, self.number)
        values: dict[str, Any] = {
            "installation_id": 1,
            "repo": REPO,
            "pr_number": self.number,
            "head_sha": head,
            "trigger": trigger,
            "delivery_id": f"delivery-{next(_deliveries)}",
        }
        values.update(kwargs)
        return ReviewJob(**values)

    def api_calls(self) -> list[tuple[str, str]]:
        """API requests since the last ``reset_calls``, token minting left out."""
        return [
            (r.method, r.path)
            for r in self.gh.requests(kind="api")
            if not r.path.endswith("/access_tokens")
        ]

    def reset_calls(self) -> None:
        self.ctx.tokens.get(1)  # minted once an hour in production: not per review
        self.gh.clear_requests()

    def reviews(self) -> list[dict[str, Any]]:
        return self.gh.reviews(REPO, self.number)

    def check_runs(self) -> list[dict[str, Any]]:
        return self.gh.check_runs(REPO)


def make_context(gh: FakeGitHub, stub: K3Stub, root: Path) -> JobContext:
    creds = AppCredentials(gh.app_id, gh.private_key_pem, gh.api_url)
    return JobContext(
        creds=creds,
        tokens=InstallationTokens(creds),
        mirrors=MirrorCache(root / "mirrors"),
        llm=LLMSettings(
            api_key=stub.api_key, base_url=stub.base_url, max_retries=1, backoff_base=0.01
        ),
        data_dir=root,
        bot_login=gh.bot_login,
        github_pacing=False,
    )


@contextlib.contextmanager
def job_world(
    root: Path,
    *,
    base_files: dict[str, str | None] | None = None,
    pr_files: dict[str, str | None] | None = None,
    draft: bool = False,
) -> Iterator[World]:
    """A repository (people.py, calc.py, .gitneural.toml) and a PR planting the bug."""
    files: dict[str, str | None] = {
        "people.py": ORIGINAL,
        "calc.py": CALC,
        ".gitneural.toml": CONFIG,
        "README.md": "# app\n",
    }
    files.update(base_files or {})
    with FakeGitHub(root / "gh") as gh, K3Stub() as stub:
        gh.create_repo(REPO, installation_id=1, files={k: v for k, v in files.items() if v})
        grant_maintainers(gh, REPO)
        gh.push(REPO, "feature", pr_files or {"people.py": PLANTED}, "Tighten is_adult")
        number = gh.create_pull(
            REPO, head="feature", title="Tighten is_adult", body="Please review", draft=draft
        )
        world = World(gh, stub, make_context(gh, stub, root), number)
        yield world
        # Safety rule 1, checked after every test: nothing wrote to the repository.
        assert gh.forbidden_requests() == []
        assert all(r["event"] == "COMMENT" for r in world.reviews())

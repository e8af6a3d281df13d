"""The "GitNeural" check run: ``in_progress`` while a review runs, then completed with a
conclusion, a summary (coverage and usage) and annotations on the reviewed lines.

GitHub takes at most 50 annotations per request (they accumulate over updates), so the
completion is one PATCH per 50. ``output.summary`` and ``output.text`` are capped at
65,535 characters. Annotations are plain text on GitHub, but they are still cut and
cleaned of control characters: they hold model text.
"""

from __future__ import annotations

import datetime as dt
import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from github.CheckRun import CheckRun
from github.Repository import Repository

from bot.domain.results import Finding, Severity
from bot.gh.api.errors import fresh_read, github_errors
from bot.render.sanitize import sanitize_markdown, terminal_text

CHECK_NAME = "GitNeural"
#: The title of a run a job left for its retry (a transient failure).
PAUSED_TITLE = "GitNeural will try again"
MAX_ANNOTATIONS = 50
MAX_OUTPUT = 65_535
_TITLE_MAX = 255
_MESSAGE_MAX = 4_000
_LEVELS = {
    Severity.CRITICAL: "failure",
    Severity.MAJOR: "warning",
    Severity.MINOR: "notice",
    Severity.NIT: "notice",
}


@dataclass
class CheckOutput:
    conclusion: str
    title: str
    summary: str
    text: str = ""
    annotations: list[dict[str, Any]] = field(default_factory=list)


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def _plain(text: str, limit: int) -> str:
    clean = terminal_text(text).replace("\t", " ").strip()
    return clean if len(clean) <= limit else clean[: limit - 1] + "…"


def finding_annotations(findings: Sequence[Finding]) -> list[dict[str, Any]]:
    """Annotations for findings on the new file (old-file lines have no place there)."""
    out = []
    for finding in findings:
        if finding.side != "RIGHT":
            continue
        annotation: dict[str, Any] = {
            "path": finding.path,
            "start_line": finding.start_line,
            "end_line": finding.end_line,
            "annotation_level": _LEVELS[finding.severity],
            "title": _plain(f"{finding.severity}: {finding.title}", _TITLE_MAX),
            "message": _plain(finding.body or finding.title, _MESSAGE_MAX) or finding.title,
        }
        if finding.suggestion is not None and len(finding.suggestion) <= _MESSAGE_MAX:
            annotation["raw_details"] = "Suggested replacement:\n" + terminal_text(
                finding.suggestion
            )
        out.append(annotation)
    return out


def _output(title: str, summary: str, text: str, batch: list[dict[str, Any]]) -> dict[str, Any]:
    output: dict[str, Any] = {
        "title": _plain(title, _TITLE_MAX),
        "summary": sanitize_markdown(summary, limit=MAX_OUTPUT),
    }
    if text:
        output["text"] = sanitize_markdown(text, limit=MAX_OUTPUT)
    if batch:
        output["annotations"] = batch
    return output


class Check:
    """One check run of GitNeural on a head commit."""

    def __init__(self, run: CheckRun, on_401: Callable[[], None] | None = None) -> None:
        self.run = run
        self._on_401 = on_401

    @property
    def id(self) -> int:
        return int(self.run.id)

    @classmethod
    def start(
        cls,
        repo: Repository,
        head_sha: str,
        *,
        external_id: str,
        summary: str,
        on_401: Callable[[], None] | None = None,
    ) -> Check:
        """Create the run ``in_progress`` on ``head_sha`` (one POST; once more after a
        401, which creates nothing, with a token minted again)."""

        def create() -> CheckRun:
            return repo.create_check_run(
                name=CHECK_NAME,
                head_sha=head_sha,
                status="in_progress",
                external_id=external_id[:100],
                started_at=_now(),
                output=_output("Reviewing…", summary, "", []),
            )

        return cls(fresh_read(create, "creating the GitNeural check run", on_401), on_401)

    @classmethod
    def skipped(
        cls,
        repo: Repository,
        head_sha: str,
        *,
        external_id: str,
        title: str,
        summary: str,
        on_401: Callable[[], None] | None = None,
        conclusion: str = "skipped",
    ) -> Check:
        """A run created completed as ``skipped`` (one POST): GitNeural chose not to review
        this head, and says why, rather than leave nothing or a green check (``failure``
        when the run is a gate that must not pass unread code)."""

        def create() -> CheckRun:
            now = _now()
            return repo.create_check_run(
                name=CHECK_NAME,
                head_sha=head_sha,
                status="completed",
                conclusion=conclusion,
                external_id=external_id[:100],
                started_at=now,
                completed_at=now,
                output=_output(title, summary, "", []),
            )

        return cls(fresh_read(create, "creating the GitNeural check run", on_401), on_401)

    @classmethod
    def resume(
        cls,
        repo: Repository,
        head_sha: str,
        *,
        external_id: str,
        app_id: int,
        on_401: Callable[[], None] | None = None,
    ) -> Check | None:
        """The run a killed worker left ``in_progress`` for this job (same external id),
        to carry on with instead of starting a second one; None if there is none."""
        for check in unfinished_checks(repo, head_sha, app_id):
            if check.run.status != "completed" and check.run.external_id == external_id[:100]:
                check._on_401 = on_401
                return check
        return None

    def complete(self, out: CheckOutput) -> None:
        """Complete the run: one PATCH, plus one per further 50 annotations.

        A PATCH refused with 401 (the token died mid-task) changed nothing: it is sent
        once more with a token minted again, so a posted review's run does not wait for
        the job's retry to be completed. Batches are retried one by one: annotations
        accumulate, so a batch already accepted must not be sent twice.
        """
        batches = [
            out.annotations[i : i + MAX_ANNOTATIONS]
            for i in range(0, len(out.annotations), MAX_ANNOTATIONS)
        ] or [[]]
        for i, batch in enumerate(batches):
            # The first PATCH completes the run, so it shows as done even if adding
            # the later annotations fails; those only add to what is shown.
            kwargs: dict[str, Any] = {}
            if i == 0:
                kwargs = {
                    "status": "completed",
                    "conclusion": out.conclusion,
                    "completed_at": _now(),
                }
            edit = functools.partial(
                self.run.edit, output=_output(out.title, out.summary, out.text, batch), **kwargs
            )
            fresh_read(edit, "completing the GitNeural check run", self._on_401)


def _unfinished(run: CheckRun, paused_by: str | None) -> bool:
    # Attributes, not raw_data: the listing holds them, raw_data would cost a request.
    if run.status != "completed":
        return True
    # Paused for a retry that then found the review posted (its POST's answer was lost).
    if paused_by is None or run.external_id != paused_by[:100]:
        return False
    return run.output is not None and run.output.title == PAUSED_TITLE


def unfinished_checks(
    repo: Repository, head_sha: str, app_id: int, *, paused_by: str | None = None
) -> list[Check]:
    """GitNeural check runs on ``head_sha`` left ``in_progress`` (a worker died), and
    the one the job with external id ``paused_by`` left paused for its retry."""
    with github_errors("listing check runs"):
        runs = repo.get_commit(head_sha).get_check_runs(check_name=CHECK_NAME)
        return [
            Check(run)
            for run in runs
            if run.name == CHECK_NAME
            and _unfinished(run, paused_by)
            and int((run.raw_data.get("app") or {}).get("id") or 0) == app_id
        ]

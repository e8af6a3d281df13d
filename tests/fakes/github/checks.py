"""Check run routes of the fake GitHub, validated like GitHub: at most 50 annotations
per request (they accumulate over updates), ``output.summary``/``text`` up to 65,535
characters, a conclusion whenever the run is completed."""

from __future__ import annotations

import time

import pygit2
from flask import Blueprint, Response, request

from tests.fakes.github.app import (
    ApiError,
    auth_repo,
    body_json,
    json_response,
    owned,
    paginate,
    public,
    request_token,
    require_token,
    store,
    validation_failed,
)
from tests.fakes.github.shapes import Json, iso
from tests.fakes.github.store import Repo
from tests.fakes.github.users import app_of_request

MAX_OUTPUT = 65_535
MAX_ANNOTATIONS = 50
CONCLUSIONS = {
    "action_required",
    "cancelled",
    "failure",
    "neutral",
    "success",
    "skipped",
    "stale",
    "timed_out",
}
STATUSES = {"queued", "in_progress", "completed", "waiting", "requested", "pending"}
LEVELS = {"notice", "warning", "failure"}


def _now() -> str:
    return iso(time.time())


def _check_output(output: object) -> Json:
    if output is None:
        return {}
    if not isinstance(output, dict):
        raise validation_failed("CheckRun", "output", "output must be an object")
    for field in ("title", "summary"):
        if not isinstance(output.get(field), str):
            raise validation_failed("CheckRun", f"output.{field}", f"{field} is required")
    for field in ("summary", "text"):
        value = output.get(field)
        if isinstance(value, str) and len(value) > MAX_OUTPUT:
            raise validation_failed(
                "CheckRun", f"output.{field}", f"{field} is too long (maximum is {MAX_OUTPUT})"
            )
    annotations = output.get("annotations") or []
    if not isinstance(annotations, list) or len(annotations) > MAX_ANNOTATIONS:
        raise ApiError(
            422,
            "Unprocessable Entity",
            errors=[f"Only {MAX_ANNOTATIONS} annotations are allowed per request"],
        )
    for a in annotations:
        ok = (
            isinstance(a, dict)
            and isinstance(a.get("path"), str)
            and isinstance(a.get("start_line"), int)
            and isinstance(a.get("end_line"), int)
            and a.get("annotation_level") in LEVELS
            and isinstance(a.get("message"), str)
        )
        if not ok:
            raise validation_failed(
                "CheckRun",
                "output.annotations",
                "annotations need path, start_line, end_line, annotation_level, message",
            )
    return output


def _apply_check(run: Json, data: Json, repo: Repo) -> None:
    output = _check_output(data.get("output"))
    status = data.get("status", run.get("status") or "queued")
    conclusion = data.get("conclusion", run.get("conclusion"))
    if status not in STATUSES:
        raise validation_failed("CheckRun", "status", f"status {status!r} is not valid")
    if conclusion is not None:
        if conclusion not in CONCLUSIONS:
            raise validation_failed("CheckRun", "conclusion", f"{conclusion!r} is not valid")
        status = "completed"
    elif status == "completed":
        raise validation_failed("CheckRun", "conclusion", "conclusion is required when completed")
    for key in ("name", "details_url", "external_id"):
        if key in data:
            run[key] = data[key]
    run["status"], run["conclusion"] = status, conclusion
    run["started_at"] = data.get("started_at", run.get("started_at") or _now())
    if status == "completed":
        run["completed_at"] = data.get("completed_at", _now())
    if output:
        run["_annotations"] = run["_annotations"] + list(output.get("annotations") or [])
        run["output"] = {
            "title": output["title"],
            "summary": output["summary"],
            "text": output.get("text"),
            "annotations_count": len(run["_annotations"]),
            "annotations_url": f"{run['url']}/annotations",
        }


def blueprint(prefix: str) -> Blueprint:
    bp = Blueprint("checks", __name__, url_prefix=prefix)
    repo_base = "/repos/<owner>/<name>"

    @bp.post(f"{repo_base}/check-runs")
    def create_check_run(owner: str, name: str) -> Response:
        repo = auth_repo(owner, name)
        require_token()
        token = request_token()
        if token is not None and token.kind == "user":
            # Only GitHub Apps (GitNeural's, or Actions' for a workflow) make check runs.
            raise ApiError(403, "You must authenticate via a GitHub App.")
        s = store()
        data = body_json()
        if not isinstance(data.get("name"), str) or not data["name"]:
            raise validation_failed("CheckRun", "name", "name is required")
        head_sha = data.get("head_sha")
        try:
            repo.git()[str(head_sha)].peel(pygit2.Commit)
        except (KeyError, ValueError, pygit2.InvalidSpecError):
            raise ApiError(422, f"No commit found for SHA: {head_sha}") from None
        rid = s.next_id()
        url = f"{s.repo_url(repo)}/check-runs/{rid}"
        run: Json = {
            "id": rid,
            "node_id": f"CR_{rid}",
            "head_sha": head_sha,
            "external_id": "",
            "url": url,
            "html_url": f"{s.web_url}/{repo.full_name}/runs/{rid}",
            "details_url": None,
            "status": None,
            "conclusion": None,
            "started_at": None,
            "completed_at": None,
            "output": {
                "title": None,
                "summary": None,
                "text": None,
                "annotations_count": 0,
                "annotations_url": f"{url}/annotations",
            },
            "name": data["name"],
            "check_suite": {"id": rid + 1},
            "app": app_of_request(),
            "pull_requests": [],
            "_repo": repo.full_name,
            "_annotations": [],
        }
        _apply_check(run, data, repo)
        with s.lock:
            s.check_runs[rid] = run
        return json_response(public(run), status=201)

    @bp.route(f"{repo_base}/check-runs/<int:rid>", methods=["GET", "PATCH"])
    def check_run(owner: str, name: str, rid: int) -> Response:
        repo = auth_repo(owner, name)
        s = store()
        run = owned(repo, s.check_runs, rid)
        if request.method == "PATCH":
            require_token()
            with s.lock:
                _apply_check(run, body_json(), repo)
        return json_response(public(run))

    @bp.get(f"{repo_base}/check-runs/<int:rid>/annotations")
    def check_annotations(owner: str, name: str, rid: int) -> Response:
        repo = auth_repo(owner, name)
        run = owned(repo, store().check_runs, rid)
        return paginate(list(run["_annotations"]))

    @bp.get(f"{repo_base}/commits/<ref>/check-runs")
    def commit_check_runs(owner: str, name: str, ref: str) -> Response:
        repo = auth_repo(owner, name)
        s = store()
        with s.lock:
            runs = [
                r
                for r in s.check_runs.values()
                if r["_repo"] == repo.full_name and r["head_sha"] == ref
            ]
        return paginate(runs, wrap="check_runs")

    return bp

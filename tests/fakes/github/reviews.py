"""Posting reviews on the fake GitHub, validated like GitHub does: one comment off the
three-dot diff (or a body over 65,536 characters) and the whole review is refused with
422, nothing stored. APPROVE and REQUEST_CHANGES are accepted but logged as forbidden."""

from __future__ import annotations

import time
from typing import Any

import pygit2
from flask import Response

from tests.fakes.github.app import (
    ApiError,
    actor_login,
    auth_repo,
    body_json,
    forbid,
    json_response,
    public,
    require_token,
    store,
    validation_failed,
)
from tests.fakes.github.diff import MAX_BODY, FileDiff, PullDiff, comment_error, pull_diff
from tests.fakes.github.shapes import Json, iso
from tests.fakes.github.store import Pull, Repo

REVIEWS_DOCS = "https://docs.github.com/rest/pulls/reviews#create-a-review-for-a-pull-request"
EVENTS = {"COMMENT": "COMMENTED", "APPROVE": "APPROVED", "REQUEST_CHANGES": "CHANGES_REQUESTED"}
FORBIDDEN_EVENTS = {
    "APPROVE": "approves the pull request",
    "REQUEST_CHANGES": "requests changes on the pull request",
}


def pull_or_404(owner: str, name: str, number: int) -> tuple[Repo, Pull]:
    repo = auth_repo(owner, name)
    pull = repo.pulls.get(number)
    if pull is None:
        raise ApiError(404, "Not Found")
    return repo, pull


def pull_diff_of(repo: Repo, pull: Pull, commit_id: str | None = None) -> PullDiff:
    s = store()
    return pull_diff(repo.git(), s.base_sha(repo, pull), commit_id or s.head_sha(repo, pull))


def commit_exists(repo: Repo, sha: Any) -> bool:
    if not isinstance(sha, str):
        return False
    try:
        repo.git()[sha].peel(pygit2.Commit)
    except (KeyError, ValueError, pygit2.InvalidSpecError):
        return False
    return True


def _author() -> str:
    return actor_login()


def comment_json(
    repo: Repo,
    pull: Pull,
    review_id: int,
    c: Json,
    commit_id: str,
    file: FileDiff,
    user: str,
) -> Json:
    s = store()
    cid = s.next_id()
    line, side = c.get("line"), c.get("side", "RIGHT")
    if line is None and c.get("position") is not None:
        side, line = file.position_of(c["position"]) or ("RIGHT", None)
    start_line = c.get("start_line")
    url = f"{s.repo_url(repo)}/pulls/comments/{cid}"
    pull_url = f"{s.repo_url(repo)}/pulls/{pull.number}"
    html = f"{s.web_url}/{repo.full_name}/pull/{pull.number}#discussion_r{cid}"
    now = iso(time.time())
    return {
        "id": cid,
        "node_id": f"PRRC_{cid}",
        "pull_request_review_id": review_id,
        "diff_hunk": file.diff_hunk(side, line) if isinstance(line, int) else "",
        "path": file.path,
        "position": c.get("position"),
        "original_position": c.get("position"),
        "commit_id": commit_id,
        "original_commit_id": commit_id,
        "user": s.user(user),
        "body": c["body"],
        "created_at": now,
        "updated_at": now,
        "html_url": html,
        "url": url,
        "pull_request_url": pull_url,
        "author_association": "NONE",
        "_links": {
            "self": {"href": url},
            "html": {"href": html},
            "pull_request": {"href": pull_url},
        },
        "start_line": start_line,
        "original_start_line": start_line,
        "start_side": c.get("start_side", side) if start_line is not None else None,
        "line": line,
        "original_line": line,
        "side": side,
        "subject_type": c.get("subject_type", "line"),
        "in_reply_to_id": c.get("in_reply_to"),
        "_repo": repo.full_name,
        "_pull": pull.number,
    }


def review_json(repo: Repo, pull: Pull, body: str, event: str | None, commit_id: str) -> Json:
    s = store()
    rid = s.next_id()
    pull_url = f"{s.repo_url(repo)}/pulls/{pull.number}"
    html = f"{s.web_url}/{repo.full_name}/pull/{pull.number}#pullrequestreview-{rid}"
    return {
        "id": rid,
        "node_id": f"PRR_{rid}",
        "user": s.user(_author()),
        "body": body,
        "state": EVENTS.get(event or "", "PENDING"),
        "html_url": html,
        "pull_request_url": pull_url,
        "author_association": "NONE",
        "_links": {"html": {"href": html}, "pull_request": {"href": pull_url}},
        "submitted_at": iso(time.time()) if event else None,
        "commit_id": commit_id,
        "_repo": repo.full_name,
        "_pull": pull.number,
        "_event": event,
    }


def create_review(owner: str, name: str, number: int) -> Response:
    repo, pull = pull_or_404(owner, name, number)
    require_token()
    data = body_json()
    s = store()
    event = data.get("event")
    if event is not None and event not in EVENTS:
        raise ApiError(422, "Unprocessable Entity", errors=[f"Invalid event: {event}"])
    if event in FORBIDDEN_EVENTS:
        forbid(FORBIDDEN_EVENTS[event])
    commit_id = data.get("commit_id") or s.head_sha(repo, pull)
    if not commit_exists(repo, commit_id):
        raise ApiError(
            422, "Unprocessable Entity", errors=[f"No commit found for SHA: {commit_id}"]
        )
    body = data.get("body") or ""
    if not isinstance(body, str) or len(body) > MAX_BODY:
        raise validation_failed(
            "PullRequestReview", "body", f"body is too long (maximum is {MAX_BODY} characters)"
        )
    comments = data.get("comments") or []
    if not isinstance(comments, list) or not all(isinstance(c, dict) for c in comments):
        raise ApiError(422, "Invalid request.", errors=["comments must be a list of objects"])
    if event == "REQUEST_CHANGES" and not body:
        raise ApiError(422, "Unprocessable Entity", errors=["Review body is required"])
    if event == "COMMENT" and not body and not comments:
        raise ApiError(422, "Unprocessable Entity", errors=["Review body is required"])
    diff = pull_diff_of(repo, pull, commit_id)
    errors = [e for e in (comment_error(diff, c) for c in comments) if e is not None]
    if errors:
        # GitHub refuses the whole review and stores nothing.
        raise ApiError(422, "Unprocessable Entity", errors=errors, docs=REVIEWS_DOCS)
    review = review_json(repo, pull, body, event, commit_id)
    with s.lock:
        s.reviews[review["id"]] = review
        for c in comments:
            cj = comment_json(
                repo, pull, review["id"], c, commit_id, diff.files[c["path"]], _author()
            )
            s.review_comments[cj["id"]] = cj
    return json_response(public(review))

"""Review threads on the fake GitHub: replies, reactions on review comments, and the
helpers tests use to write in threads the way people (and other bots) do.

A thread is a review comment that answers none (its first comment) and the comments
whose ``in_reply_to_id`` names it, oldest first. ``POST …/comments/{id}/replies`` must
name the first comment: GitHub does not support replies to replies, and neither does
the fake (422), so a client that names a reply is caught.
"""

from __future__ import annotations

import time

from flask import Blueprint, Response, request

from tests.fakes.github.app import (
    ApiError,
    auth_repo,
    body_json,
    json_response,
    owned,
    paginate,
    public,
    require_token,
    store,
    validation_failed,
)
from tests.fakes.github.diff import MAX_BODY
from tests.fakes.github.reviews import comment_json, pull_diff_of, pull_or_404, review_json
from tests.fakes.github.shapes import Json, iso
from tests.fakes.github.store import Pull, Repo, Store

REACTION_CONTENT = {"+1", "-1", "laugh", "confused", "heart", "hooray", "rocket", "eyes"}


def thread_comments(s: Store, repo: Repo, pull: Pull) -> list[tuple[Json, list[Json]]]:
    """``(first comment, replies)`` of every thread of the PR, oldest first."""
    with s.lock:
        comments = [
            c
            for c in s.review_comments.values()
            if c["_repo"] == repo.full_name and c["_pull"] == pull.number
        ]
    comments.sort(key=lambda c: c["id"])
    tops = [c for c in comments if c.get("in_reply_to_id") is None]
    return [(top, [c for c in comments if c.get("in_reply_to_id") == top["id"]]) for top in tops]


def store_reply(
    repo: Repo, pull: Pull, parent: Json, body: str, user: str, association: str = "NONE"
) -> Json:
    """A reply to ``parent`` (a thread's first comment) by ``user``, stored."""
    s = store()
    commit_id = parent["commit_id"]
    diff = pull_diff_of(repo, pull, commit_id)
    file = diff.files.get(parent["path"])
    if file is None:  # the path left the PR: GitHub keeps the thread, and so do we
        file = pull_diff_of(repo, pull, parent["original_commit_id"]).files[parent["path"]]
    review = review_json(repo, pull, "", "COMMENT", commit_id)
    review["user"] = s.user(user)
    data = {
        "path": parent["path"],
        "line": parent["line"],
        "side": parent["side"],
        "start_line": parent.get("start_line"),
        "body": body,
        "in_reply_to": parent["id"],
    }
    comment = comment_json(repo, pull, review["id"], data, commit_id, file, user)
    comment["author_association"] = association
    with s.lock:
        s.reviews[review["id"]] = review
        s.review_comments[comment["id"]] = comment
    return comment


def store_reaction(repo: Repo, target: str, content: str, user: str) -> tuple[Json, bool]:
    """``user``'s reaction on ``target`` (one of each content per user): (it, new)."""
    s = store()
    with s.lock:
        for r in s.reactions.values():
            if r["_target"] == target and r["content"] == content and r["user"]["login"] == user:
                return r, False
        rid = s.next_id()
        reaction = {
            "id": rid,
            "node_id": f"REA_{rid}",
            "user": s.user(user),
            "content": content,
            "created_at": iso(time.time()),
            "_target": target,
            "_repo": repo.full_name,
        }
        s.reactions[rid] = reaction
    return reaction, True


def blueprint(prefix: str) -> Blueprint:
    bp = Blueprint("threads", __name__, url_prefix=prefix)
    base = "/repos/<owner>/<name>/pulls"

    @bp.post(f"{base}/<int:number>/comments/<int:cid>/replies")
    def reply(owner: str, name: str, number: int, cid: int) -> Response:
        repo, pull = pull_or_404(owner, name, number)
        require_token()
        s = store()
        parent = s.review_comments.get(cid)
        if parent is None or parent["_repo"] != repo.full_name or parent["_pull"] != number:
            raise ApiError(404, "Not Found")
        if parent.get("in_reply_to_id") is not None:
            raise validation_failed(
                "PullRequestReviewComment", "in_reply_to", "replies to replies are not supported"
            )
        body = body_json().get("body")
        if not isinstance(body, str) or not body or len(body) > MAX_BODY:
            raise validation_failed("PullRequestReviewComment", "body", "body is blank or too long")
        return json_response(public(store_reply(repo, pull, parent, body, s.bot_login)), 201)

    @bp.route(f"{base}/comments/<int:cid>/reactions", methods=["GET", "POST"])
    def reactions(owner: str, name: str, cid: int) -> Response:
        repo = auth_repo(owner, name)
        s = store()
        owned(repo, s.review_comments, cid)
        target = f"review_comment:{cid}"
        if request.method == "GET":
            with s.lock:
                items = [r for r in s.reactions.values() if r["_target"] == target]
            return paginate(items)
        require_token()
        content = body_json().get("content")
        if content not in REACTION_CONTENT:
            raise validation_failed("Reaction", "content", f"{content!r} is not a valid reaction")
        reaction, new = store_reaction(repo, target, str(content), s.bot_login)
        return json_response(public(reaction), status=201 if new else 200)

    return bp

"""Pull request routes of the fake GitHub: the PR, its files and diff, reviews and review
comments. A review is validated like GitHub does: one comment off the diff and the whole
review is refused with 422, nothing stored."""

from __future__ import annotations

import time

import pygit2
from flask import Blueprint, Response, request

from tests.fakes.github.app import (
    ApiError,
    actor_login,
    auth_repo,
    body_json,
    forbid,
    json_response,
    paginate,
    public,
    require_token,
    store,
    validation_failed,
)
from tests.fakes.github.attachments import body_html
from tests.fakes.github.comments import answer_comment
from tests.fakes.github.diff import (
    MAX_BODY,
    MAX_DIFF_FILES,
    MAX_DIFF_LINES,
    FileDiff,
    comment_error,
)
from tests.fakes.github.reviews import (
    EVENTS,
    FORBIDDEN_EVENTS,
    comment_json,
    commit_exists,
    create_review,
    pull_diff_of,
    pull_or_404,
    review_json,
)
from tests.fakes.github.shapes import Json, iso
from tests.fakes.github.store import Pull, Repo


def _review(repo: Repo, pull: Pull, rid: int) -> Json:
    review = store().reviews.get(rid)
    if review is None or review["_repo"] != repo.full_name or review["_pull"] != pull.number:
        raise ApiError(404, "Not Found")
    return review


def _of_pull(table: dict[int, Json], repo: Repo, pull: Pull) -> list[Json]:
    """The reviews or review comments (``table``) on ``pull``, oldest first."""
    with store().lock:
        return [
            x for x in table.values() if x["_repo"] == repo.full_name and x["_pull"] == pull.number
        ]


def _file_json(repo: Repo, f: FileDiff) -> Json:
    s = store()
    big = f.additions + f.deletions > MAX_DIFF_LINES
    out: Json = {
        "sha": f.sha,
        "filename": f.path,
        "status": f.status,
        "additions": f.additions,
        "deletions": f.deletions,
        "changes": f.additions + f.deletions,
        "blob_url": f"{s.web_url}/{repo.full_name}/blob/{f.sha}/{f.path}",
        "raw_url": f"{s.web_url}/{repo.full_name}/raw/{f.sha}/{f.path}",
        "contents_url": f"{s.repo_url(repo)}/contents/{f.path}",
    }
    if not f.binary and not big:
        out["patch"] = f.patch()
    if f.status == "renamed":
        out["previous_filename"] = f.old_path
    return out


def _diff_text(repo: Repo, pull: Pull) -> Response:
    diff = pull_diff_of(repo, pull)
    if len(diff.files) > MAX_DIFF_FILES or diff.line_count > MAX_DIFF_LINES:
        raise ApiError(
            406,
            f"Sorry, the diff exceeded the maximum number of files ({MAX_DIFF_FILES}). Consider "
            "using 'List pull requests files' API or locally cloning the repository instead.",
            errors=[{"resource": "PullRequest", "field": "diff", "code": "too_large"}],
        )
    return Response(diff.text, mimetype="text/plain")


def blueprint(prefix: str) -> Blueprint:
    bp = Blueprint("pulls", __name__, url_prefix=prefix)
    base = "/repos/<owner>/<name>/pulls"

    @bp.get(base)
    def list_pulls(owner: str, name: str) -> Response:
        repo = auth_repo(owner, name)
        state = request.args.get("state", "open")
        head = request.args.get("head")
        pulls = sorted(repo.pulls.values(), key=lambda p: -p.number)
        s = store()
        return paginate(
            [
                s.pull_json(repo, p)
                for p in pulls
                if state in ("all", p.state)
                and (head is None or head == f"{repo.owner}:{p.head_ref}")
                and request.args.get("base", p.base_ref) == p.base_ref
            ]
        )

    @bp.get(f"{base}/<int:number>")
    def get_pull(owner: str, name: str, number: int) -> Response:
        repo, pull = pull_or_404(owner, name, number)
        accept = request.headers.get("Accept", "")
        if "diff" in accept or "patch" in accept:
            return _diff_text(repo, pull)
        data = store().pull_json(repo, pull)
        if "full+json" in accept:  # the body as Markdown, HTML and text
            data["body_html"] = body_html(store(), pull.body)
            data["body_text"] = pull.body
        return json_response(data)

    @bp.patch(f"{base}/<int:number>")
    def edit_pull(owner: str, name: str, number: int) -> Response:
        repo, pull = pull_or_404(owner, name, number)
        forbid("edits the pull request")
        return json_response(store().pull_json(repo, pull))

    @bp.get(f"{base}/<int:number>/files")
    def list_files(owner: str, name: str, number: int) -> Response:
        repo, pull = pull_or_404(owner, name, number)
        files = list(pull_diff_of(repo, pull).files.values())[:3000]
        return paginate([_file_json(repo, f) for f in files])

    @bp.get(f"{base}/<int:number>/commits")
    def list_commits(owner: str, name: str, number: int) -> Response:
        repo, pull = pull_or_404(owner, name, number)
        s = store()
        git = repo.git()
        walker = git.walk(s.head_sha(repo, pull), pygit2.enums.SortMode.REVERSE)
        walker.hide(s.base_sha(repo, pull))
        return paginate([s.commit_json(repo, str(c.id)) for c in walker])

    @bp.get(f"{base}/<int:number>/reviews")
    def list_reviews(owner: str, name: str, number: int) -> Response:
        repo, pull = pull_or_404(owner, name, number)
        return paginate(_of_pull(store().reviews, repo, pull))

    @bp.post(f"{base}/<int:number>/reviews")
    def post_review(owner: str, name: str, number: int) -> Response:
        return create_review(owner, name, number)

    @bp.get(f"{base}/<int:number>/reviews/<int:rid>")
    def get_review(owner: str, name: str, number: int, rid: int) -> Response:
        repo, pull = pull_or_404(owner, name, number)
        return json_response(public(_review(repo, pull, rid)))

    @bp.put(f"{base}/<int:number>/reviews/<int:rid>")
    def update_review(owner: str, name: str, number: int, rid: int) -> Response:
        repo, pull = pull_or_404(owner, name, number)
        require_token()
        review = _review(repo, pull, rid)
        body = body_json().get("body")
        if not isinstance(body, str) or len(body) > MAX_BODY:
            raise validation_failed("PullRequestReview", "body", "body is invalid or too long")
        review["body"] = body
        return json_response(public(review))

    @bp.post(f"{base}/<int:number>/reviews/<int:rid>/events")
    def submit_review(owner: str, name: str, number: int, rid: int) -> Response:
        repo, pull = pull_or_404(owner, name, number)
        require_token()
        review = _review(repo, pull, rid)
        event = body_json().get("event")
        if event not in EVENTS:
            raise ApiError(422, "Unprocessable Entity", errors=[f"Invalid event: {event}"])
        if event in FORBIDDEN_EVENTS:
            forbid(FORBIDDEN_EVENTS[event])
        review.update(state=EVENTS[event], submitted_at=iso(time.time()), _event=event)
        return json_response(public(review))

    @bp.put(f"{base}/<int:number>/reviews/<int:rid>/dismissals")
    def dismiss_review(owner: str, name: str, number: int, rid: int) -> Response:
        repo, pull = pull_or_404(owner, name, number)
        require_token()
        review = _review(repo, pull, rid)
        review["state"] = "DISMISSED"
        return json_response(public(review))

    @bp.get(f"{base}/<int:number>/reviews/<int:rid>/comments")
    def list_review_comments(owner: str, name: str, number: int, rid: int) -> Response:
        repo, pull = pull_or_404(owner, name, number)
        _review(repo, pull, rid)
        comments = _of_pull(store().review_comments, repo, pull)
        return paginate([c for c in comments if c["pull_request_review_id"] == rid])

    @bp.get(f"{base}/<int:number>/comments")
    def list_comments(owner: str, name: str, number: int) -> Response:
        repo, pull = pull_or_404(owner, name, number)
        return paginate(_of_pull(store().review_comments, repo, pull))

    @bp.post(f"{base}/<int:number>/comments")
    def create_comment(owner: str, name: str, number: int) -> Response:
        repo, pull = pull_or_404(owner, name, number)
        require_token()
        data = body_json()
        s = store()
        if data.get("in_reply_to") is not None:
            parent = s.review_comments.get(data["in_reply_to"])
            if parent is None or parent["_pull"] != number or parent["_repo"] != repo.full_name:
                raise ApiError(404, "Not Found")
            data = {**data, "path": parent["path"], "line": parent["line"]}
            data["side"] = parent["side"]
            commit_id = parent["commit_id"]
        else:
            commit_id = data.get("commit_id")
            if not commit_exists(repo, commit_id):
                raise validation_failed("PullRequestReviewComment", "commit_id", "is not valid")
        diff = pull_diff_of(repo, pull, commit_id)
        error = comment_error(diff, data)
        if error is not None:
            raise validation_failed("PullRequestReviewComment", "pull_request_review_thread", error)
        review = review_json(repo, pull, "", "COMMENT", commit_id)
        cj = comment_json(
            repo, pull, review["id"], data, commit_id, diff.files[data["path"]], actor_login()
        )
        with s.lock:
            s.reviews[review["id"]] = review
            s.review_comments[cj["id"]] = cj
        return json_response(public(cj), status=201)

    @bp.route(f"{base}/comments/<int:cid>", methods=["GET", "PATCH", "DELETE"])
    def one_comment(owner: str, name: str, cid: int) -> Response:
        repo = auth_repo(owner, name)
        return answer_comment(
            repo,
            store().review_comments,
            cid,
            "PullRequestReviewComment",
            "body is invalid or too long",
        )

    @bp.route(f"{base}/<int:number>/merge", methods=["GET", "PUT"])
    def merge(owner: str, name: str, number: int) -> Response:
        repo, pull = pull_or_404(owner, name, number)
        if request.method == "GET":
            raise ApiError(404, "Not Found")  # "not merged"
        forbid("merges the pull request")
        sha = store().head_sha(repo, pull)
        return json_response(
            {"sha": sha, "merged": True, "message": "Pull Request successfully merged"}
        )

    return bp

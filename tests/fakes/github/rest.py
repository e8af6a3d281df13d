"""REST routes of the fake GitHub other than pull requests: the App and its installation
tokens, repositories, commits, contents (read), issue comments, reactions, check runs,
and every route that would write to a repository (answered plausibly, logged as
forbidden)."""

from __future__ import annotations

import base64
import re
import time

import pygit2
from flask import Blueprint, Response, request

from tests.fakes.github.app import (
    ApiError,
    actor_login,
    auth_repo,
    authenticate_token,
    body_json,
    forbid,
    json_response,
    owned,
    paginate,
    public,
    require_jwt,
    require_token,
    store,
    validation_failed,
)
from tests.fakes.github.comments import answer_comment
from tests.fakes.github.diff import MAX_BODY
from tests.fakes.github.shapes import Json, iso
from tests.fakes.github.store import RATE_LIMIT, Repo

REACTIONS = {"+1", "-1", "laugh", "confused", "heart", "hooray", "rocket", "eyes"}
#: (method, path regex, why it is forbidden, status answered)
WRITES: list[tuple[str, str, str, int]] = [
    ("PUT", r"/repos/[^/]+/[^/]+/contents/.+", "writes repository contents", 201),
    ("DELETE", r"/repos/[^/]+/[^/]+/contents/.+", "deletes repository contents", 200),
    ("POST", r"/repos/[^/]+/[^/]+/git/(refs|commits|trees|blobs|tags)", "writes git objects", 201),
    ("PATCH", r"/repos/[^/]+/[^/]+/git/refs/.+", "moves a ref", 200),
    ("DELETE", r"/repos/[^/]+/[^/]+/git/refs/.+", "deletes a ref", 204),
    ("POST", r"/repos/[^/]+/[^/]+/merges", "merges branches", 201),
    ("POST", r"/repos/[^/]+/[^/]+/pulls", "opens a pull request", 201),
    ("PUT", r"/repos/[^/]+/[^/]+/pulls/\d+/update-branch", "updates a branch", 202),
    ("POST", r"/repos/[^/]+/[^/]+/forks", "forks the repository", 202),
    ("PATCH", r"/repos/[^/]+/[^/]+", "edits the repository", 200),
    ("DELETE", r"/repos/[^/]+/[^/]+", "deletes the repository", 204),
    ("POST", r"/repos/[^/]+/[^/]+/branches/.+/rename", "renames a branch", 201),
    ("POST", r"/repos/[^/]+/[^/]+/releases", "creates a release", 201),
    ("PATCH", r"/repos/[^/]+/[^/]+/issues/\d+", "edits the issue or pull request", 200),
]


def _now() -> str:
    return iso(time.time())


def _issue_comment(repo: Repo, number: int, body: str, user: str, association: str) -> Json:
    s = store()
    cid = s.next_id()
    url = f"{s.repo_url(repo)}/issues/comments/{cid}"
    return {
        "id": cid,
        "node_id": f"IC_{cid}",
        "url": url,
        "html_url": f"{s.web_url}/{repo.full_name}/pull/{number}#issuecomment-{cid}",
        "issue_url": f"{s.repo_url(repo)}/issues/{number}",
        "body": body,
        "user": s.user(user),
        "author_association": association,
        "created_at": _now(),
        "updated_at": _now(),
        "reactions": {"url": f"{url}/reactions", "total_count": 0},
        "_repo": repo.full_name,
        "_issue": number,
    }


def _forbidden_write(rest: str) -> Response:
    path = "/" + rest
    for method, pattern, reason, status in WRITES:
        if request.method == method and re.fullmatch(pattern, path):
            authenticate_token()
            forbid(reason)
            sha = "0" * 40
            return json_response(
                {"content": None, "commit": {"sha": sha}, "sha": sha, "ref": None},
                status=status,
            )
    raise ApiError(404, "Not Found")


def blueprint(prefix: str) -> Blueprint:
    bp = Blueprint("rest", __name__, url_prefix=prefix)
    repo_base = "/repos/<owner>/<name>"

    @bp.get("/app")
    def get_app() -> Response:
        require_jwt()
        s = store()
        return json_response(
            {
                "id": s.app_id,
                "slug": s.app_slug,
                "name": s.app_slug,
                "owner": s.user("octo-org"),
                "html_url": f"{s.web_url}/apps/{s.app_slug}",
            }
        )

    @bp.get("/app/installations")
    def list_installations() -> Response:
        require_jwt()
        s = store()
        return paginate([s.installation_json(i) for i in s.installations.values()])

    @bp.get("/app/installations/<int:iid>")
    def get_installation(iid: int) -> Response:
        require_jwt()
        s = store()
        if iid not in s.installations:
            raise ApiError(404, "Not Found")
        return json_response(s.installation_json(s.installations[iid]))

    @bp.get(f"{repo_base}/installation")
    def repo_installation(owner: str, name: str) -> Response:
        require_jwt()
        s = store()
        repo = s.repos.get(f"{owner}/{name}")
        if repo is None:
            raise ApiError(404, "Not Found")
        return json_response(s.installation_json(s.installations[repo.installation_id]))

    @bp.post("/app/installations/<int:iid>/access_tokens")
    def access_token(iid: int) -> Response:
        require_jwt()
        s = store()
        if iid not in s.installations:
            raise ApiError(404, "Not Found")
        names = body_json().get("repositories")
        token = s.mint_token(iid, frozenset(names) if isinstance(names, list) else None)
        inst = s.installation_json(s.installations[iid])
        return json_response(
            {
                "token": token.value,
                "expires_at": iso(token.expires_at),
                "permissions": inst["permissions"],
                "repository_selection": "selected",
            },
            status=201,
        )

    @bp.get("/installation/repositories")
    def installation_repos() -> Response:
        iid = authenticate_token()
        require_token()
        s = store()
        repos = [s.repo_json(r) for r in s.repos.values() if r.installation_id == iid]
        return paginate(repos, wrap="repositories")

    @bp.get("/rate_limit")
    def rate_limit() -> Response:
        iid = authenticate_token()
        s = store()
        inst = s.installations.get(iid) if iid else None
        core = {
            "limit": RATE_LIMIT,
            "remaining": inst.remaining if inst else RATE_LIMIT,
            "reset": int(inst.reset_at if inst else time.time() + 3600),
            "used": RATE_LIMIT - (inst.remaining if inst else RATE_LIMIT),
        }
        return json_response({"resources": {"core": core}, "rate": core})

    @bp.get(repo_base)
    def get_repo(owner: str, name: str) -> Response:
        repo = auth_repo(owner, name)
        return json_response(store().repo_json(repo))

    @bp.get(f"{repo_base}/commits/<ref>")
    def get_commit(owner: str, name: str, ref: str) -> Response:
        repo = auth_repo(owner, name)
        try:
            sha = str(repo.git().revparse_single(ref).peel(pygit2.Commit).id)
        except (KeyError, ValueError, pygit2.InvalidSpecError):
            raise ApiError(422, f"No commit found for SHA: {ref}") from None
        return json_response(store().commit_json(repo, sha))

    @bp.get(f"{repo_base}/contents/<path:path>")
    def get_contents(owner: str, name: str, path: str) -> Response:
        repo = auth_repo(owner, name)
        ref = request.args.get("ref", repo.default_branch)
        try:
            tree = repo.git().revparse_single(ref).peel(pygit2.Tree)
            blob = tree[path]
        except (KeyError, ValueError, pygit2.InvalidSpecError):
            raise ApiError(404, "Not Found") from None
        if blob.type_str != "blob":
            raise ApiError(404, "Not Found")
        data = blob.peel(pygit2.Blob).data
        return json_response(
            {
                "type": "file",
                "encoding": "base64",
                "size": len(data),
                "name": path.rsplit("/", 1)[-1],
                "path": path,
                "sha": str(blob.id),
                "content": base64.b64encode(data).decode(),
                "url": f"{store().repo_url(repo)}/contents/{path}?ref={ref}",
            }
        )

    @bp.get(f"{repo_base}/collaborators/<user>/permission")
    def permission(owner: str, name: str, user: str) -> Response:
        repo = auth_repo(owner, name)
        # GitHub's answer for a stranger is ``read``; a user-owned repository's owner is admin.
        owner = "admin" if user.lower() == repo.owner.lower() else "read"
        perm = repo.permissions.get(user, owner)
        return json_response({"permission": perm, "role_name": perm, "user": store().user(user)})

    @bp.get(f"{repo_base}/issues/<int:number>")
    def get_issue(owner: str, name: str, number: int) -> Response:
        repo = auth_repo(owner, name)
        s = store()
        pull = repo.pulls.get(number)
        if number in repo.moved:  # transferred: GitHub's 301, which clients follow
            where, moved = repo.moved[number]
            url = f"{s.repo_url(s.repo(where))}/issues/{moved}"
            answer = json_response({"message": "Moved Permanently", "url": url}, 301)
            answer.headers["Location"] = url
            return answer
        if pull is None and number in repo.issues:
            return json_response(s.issue_json(repo, repo.issues[number]))
        if pull is None:
            raise ApiError(404, "Not Found")
        pj = s.pull_json(repo, pull)
        issue = {k: pj[k] for k in ("id", "node_id", "number", "title", "body", "user", "state")}
        issue.update(
            url=pj["issue_url"],
            html_url=pj["html_url"],
            comments_url=pj["comments_url"],
            labels=[],
            pull_request={"url": pj["url"], "html_url": pj["html_url"]},
        )
        return json_response(issue)

    @bp.route(f"{repo_base}/issues/<int:number>/comments", methods=["GET", "POST"])
    def issue_comments(owner: str, name: str, number: int) -> Response:
        repo = auth_repo(owner, name)
        s = store()
        if number not in repo.pulls:
            raise ApiError(404, "Not Found")
        if request.method == "GET":
            with s.lock:
                items = [
                    c
                    for c in s.issue_comments.values()
                    if c["_repo"] == repo.full_name and c["_issue"] == number
                ]
            return paginate(items)
        require_token()
        body = body_json().get("body")
        if not isinstance(body, str) or not body:
            raise validation_failed("IssueComment", "body", "Body can't be blank")
        if len(body) > MAX_BODY:
            raise validation_failed(
                "IssueComment", "body", f"Body is too long (maximum is {MAX_BODY} characters)"
            )
        comment = _issue_comment(repo, number, body, actor_login(), "NONE")
        with s.lock:
            s.issue_comments[comment["id"]] = comment
        return json_response(public(comment), status=201)

    @bp.route(f"{repo_base}/issues/comments/<int:cid>", methods=["GET", "PATCH", "DELETE"])
    def issue_comment(owner: str, name: str, cid: int) -> Response:
        repo = auth_repo(owner, name)
        return answer_comment(
            repo, store().issue_comments, cid, "IssueComment", "Body is blank or too long"
        )

    def _react(repo: Repo, target: str) -> Response:
        s = store()
        if request.method == "GET":
            with s.lock:
                items = [r for r in s.reactions.values() if r["_target"] == target]
            return paginate(items)
        require_token()
        content = body_json().get("content")
        if content not in REACTIONS:
            raise validation_failed("Reaction", "content", f"{content!r} is not a valid reaction")
        with s.lock:
            for r in s.reactions.values():
                if (
                    r["_target"] == target
                    and r["content"] == content
                    and r["user"]["login"] == actor_login()
                ):
                    return json_response(public(r), status=200)
            rid = s.next_id()
            reaction = {
                "id": rid,
                "node_id": f"REA_{rid}",
                "user": s.user(actor_login()),
                "content": content,
                "created_at": _now(),
                "_target": target,
                "_repo": repo.full_name,
            }
            s.reactions[rid] = reaction
        return json_response(public(reaction), status=201)

    @bp.route(f"{repo_base}/issues/comments/<int:cid>/reactions", methods=["GET", "POST"])
    def comment_reactions(owner: str, name: str, cid: int) -> Response:
        repo = auth_repo(owner, name)
        owned(repo, store().issue_comments, cid)  # 404 for a comment of another repository
        return _react(repo, f"issue_comment:{cid}")

    @bp.route(f"{repo_base}/issues/<int:number>/reactions", methods=["GET", "POST"])
    def issue_reactions(owner: str, name: str, number: int) -> Response:
        repo = auth_repo(owner, name)
        if number not in repo.pulls:
            raise ApiError(404, "Not Found")
        return _react(repo, f"issue:{repo.full_name}#{number}")

    @bp.route("/<path:rest>", methods=["GET", "POST", "PUT", "PATCH", "DELETE"])
    def anything_else(rest: str) -> Response:
        return _forbidden_write(rest)

    return bp

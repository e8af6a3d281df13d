"""The fake's state as GraphQL nodes, for graphql-core's default resolvers.

Each node is a dict; a field that takes arguments is a function ``(info, **args)``, which
graphql-core calls. Abstract types (``Actor``, ``Reactor``) carry ``__typename``. A field
the fake does not fill resolves to null, so a document asking for a non-null field the
fake lacks fails loudly instead of passing by luck. Connections are paginated as
GitHub's are: ``first`` or ``last`` is required, at most 100, cursors are opaque.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Callable
from typing import Any

import pygit2
from graphql import GraphQLError, GraphQLResolveInfo

from tests.fakes.github.shapes import Json
from tests.fakes.github.store import Issue, Pull, Repo, Store
from tests.fakes.github.threads import store_reply, thread_comments

MAX_PAGE = 100
#: GitHub's closing keywords before ``#N`` in a pull request's body.
_CLOSING = re.compile(r"\b(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?):?\s+#(\d+)\b", re.IGNORECASE)
#: REST's reaction names -> GraphQL's ReactionContent.
CONTENT = {
    "+1": "THUMBS_UP", "-1": "THUMBS_DOWN", "laugh": "LAUGH", "hooray": "HOORAY",
    "confused": "CONFUSED", "heart": "HEART", "rocket": "ROCKET", "eyes": "EYES",
}  # fmt: skip  # a mapping: several pairs to a line
Node = dict[str, Any]
Info = GraphQLResolveInfo[Any]


def _cursor(index: int) -> str:
    return base64.b64encode(f"cursor:v2:{index}".encode()).decode()


def _index(cursor: str) -> int:
    try:
        return int(base64.b64decode(cursor).decode().rsplit(":", 1)[1])
    except (ValueError, IndexError, UnicodeDecodeError):
        raise GraphQLError(f"`{cursor}` does not appear to be a valid cursor.") from None


def connection(
    items: list[Any],
    info: Info,
    *,
    first: int | None = None,
    after: str | None = None,
    last: int | None = None,
    before: str | None = None,
    **_filters: Any,
) -> Node:
    name = info.field_name
    if first is None and last is None:
        raise GraphQLError(
            f"You must provide a `first` or `last` value to properly paginate the `{name}` "
            "connection."
        )
    for arg, value in (("first", first), ("last", last)):
        if value is not None and not 0 <= value <= MAX_PAGE:
            raise GraphQLError(
                f"Requesting {value} records on the `{name}` connection exceeds the `{arg}` "
                f"limit of {MAX_PAGE} records."
            )
    low = _index(after) + 1 if after else 0
    high = _index(before) if before else len(items)
    window = list(enumerate(items))[low:high]
    if first is not None:
        window = window[:first]
    if last is not None:
        window = window[len(window) - last :] if last else []
    return {
        "totalCount": len(items),
        "nodes": [node for _, node in window],
        "edges": [{"cursor": _cursor(i), "node": node} for i, node in window],
        "pageInfo": {
            "hasNextPage": bool(window) and window[-1][0] < len(items) - 1,
            "hasPreviousPage": bool(window) and window[0][0] > 0,
            "startCursor": _cursor(window[0][0]) if window else None,
            "endCursor": _cursor(window[-1][0]) if window else None,
        },
    }


def paged(items: Callable[[], list[Any]]) -> Callable[..., Node]:
    return lambda info, **args: connection(items(), info, **args)


def actor(s: Store, login: str) -> Node:
    uid = s.user(login)["id"]
    if login.endswith("[bot]"):
        # GraphQL names an App's bot by its slug alone; REST adds "[bot]".
        return {"__typename": "Bot", "login": login.removesuffix("[bot]"), "id": f"BOT_{uid}"}
    return {"__typename": "User", "login": login, "id": f"U_{uid}"}


class Root:
    """The query and mutation roots."""

    def __init__(self, s: Store, installation_id: int) -> None:
        self.s = s
        self.installation_id = installation_id

    def _visible(self, repo: Repo | None) -> bool:
        return repo is not None and repo.installation_id == self.installation_id

    def repository(self, info: Info, owner: str, name: str, **_: Any) -> Node:
        repo = self.s.repos.get(f"{owner}/{name}")
        if repo is None or not self._visible(repo):
            raise GraphQLError(f"Could not resolve to a Repository with the name '{owner}/{name}'.")
        return Nodes(self.s, repo).repository()

    def _thread_target(self, thread_id: str) -> tuple[Nodes, Pull, Json]:
        top_id = thread_id.removeprefix("PRRT_")
        with self.s.lock:
            top = self.s.review_comments.get(int(top_id)) if top_id.isdigit() else None
        repo = self.s.repos.get(top["_repo"]) if top else None
        if top is None or repo is None or not self._visible(repo):
            raise GraphQLError(f"Could not resolve to a node with the global id of '{thread_id}'")
        return Nodes(self.s, repo), repo.pulls[top["_pull"]], top

    def resolveReviewThread(self, info: Info, input: Json) -> Node:
        nodes, pull, top = self._thread_target(str(input.get("threadId")))
        with self.s.lock:
            self.s.resolved_threads[top["id"]] = self.s.bot_login
        return {
            "clientMutationId": input.get("clientMutationId"),
            "thread": nodes.thread(pull, top),
        }

    def addPullRequestReviewThreadReply(self, info: Info, input: Json) -> Node:
        nodes, pull, top = self._thread_target(str(input.get("pullRequestReviewThreadId")))
        body = input.get("body")
        if not isinstance(body, str) or not body.strip():
            raise GraphQLError("Body can't be blank")
        reply = store_reply(nodes.repo, pull, top, body, self.s.bot_login)
        return {
            "clientMutationId": input.get("clientMutationId"),
            "comment": nodes.comment(reply, top),
        }

    def unresolveReviewThread(self, info: Info, input: Json) -> Node:
        nodes, pull, top = self._thread_target(str(input.get("threadId")))
        with self.s.lock:
            self.s.resolved_threads.pop(top["id"], None)
        return {
            "clientMutationId": input.get("clientMutationId"),
            "thread": nodes.thread(pull, top),
        }


class Nodes:
    """Nodes of one repository."""

    def __init__(self, s: Store, repo: Repo) -> None:
        self.s, self.repo = s, repo

    def repository(self) -> Node:
        repo = self.repo

        def pull_request(info: Info, number: int) -> Node | None:
            pull = repo.pulls.get(number)
            return self.pull(pull) if pull is not None else None

        def issue_or_pull(info: Info, number: int) -> Node:
            pull = repo.pulls.get(number)
            if pull is not None:
                return self.pull(pull)
            if number in repo.issues:
                return self.issue(repo.issues[number])
            if number in repo.moved:
                # GitHub resolves a transferred issue's old number to the issue in its
                # new repository (which the installation may reach, even if private).
                where, moved = repo.moved[number]
                target = self.s.repos.get(where)
                if target is not None and moved in target.issues:
                    return Nodes(self.s, target).issue(target.issues[moved])
            raise GraphQLError(
                f"Could not resolve to an issue or pull request with the number of {number}."
            )

        return {
            "__typename": "Repository",
            "id": f"R_{repo.id}",
            "name": repo.name,
            "nameWithOwner": repo.full_name,
            "url": f"{self.s.web_url}/{repo.full_name}",
            "pullRequest": pull_request,
            "issueOrPullRequest": issue_or_pull,
        }

    def issue(self, issue: Issue) -> Node:
        return {
            "__typename": "Issue",
            "id": f"I_{issue.id}",
            "number": issue.number,
            "title": issue.title,
            "body": issue.body,
            "state": issue.state.upper(),
            "repository": self.repository(),
        }

    def pull(self, pull: Pull) -> Node:
        def threads() -> list[Node]:
            return [self.thread(pull, top) for top, _ in thread_comments(self.s, self.repo, pull)]

        return {
            "__typename": "PullRequest",
            "id": f"PR_{pull.id}",
            "number": pull.number,
            "title": pull.title,
            "body": pull.body,
            "state": pull.state.upper(),
            "headRefOid": self.s.head_sha(self.repo, pull),
            "url": f"{self.s.web_url}/{self.repo.full_name}/pull/{pull.number}",
            "reviewThreads": paged(threads),
            "closingIssuesReferences": paged(lambda: self._closing(pull)),
        }

    def _closing(self, pull: Pull) -> list[Node]:
        """The issues linked by hand, then (as GitHub does only for a pull request into
        the default branch) those the body's closing keywords name in this repository."""
        repo = self.repo
        numbers = list(repo.linked_issues.get(pull.number, []))
        if pull.base_ref == repo.default_branch:
            numbers += [int(n) for n in _CLOSING.findall(pull.body)]
        nodes = []
        for number in dict.fromkeys(numbers):
            issue = repo.issues.get(number)
            if issue is not None:
                nodes.append(self.issue(issue))
        return nodes

    def thread(self, pull: Pull, top: Json) -> Node:
        threads = thread_comments(self.s, self.repo, pull)
        replies = next(r for first, r in threads if first["id"] == top["id"])
        comments = [self.comment(c, top) for c in [top, *replies]]
        outdated = self._outdated(pull, top)
        with self.s.lock:
            resolved_by = self.s.resolved_threads.get(top["id"])
        side = top.get("side") or "RIGHT"
        return {
            "__typename": "PullRequestReviewThread",
            "id": f"PRRT_{top['id']}",
            "isResolved": resolved_by is not None,
            # resolvedBy is a User: an App's bot resolving shows as null.
            "resolvedBy": (
                actor(self.s, resolved_by)
                if resolved_by and not resolved_by.endswith("[bot]")
                else None
            ),
            "isOutdated": outdated,
            "isCollapsed": resolved_by is not None,
            "path": top["path"],
            "line": None if outdated else top.get("line"),
            "startLine": None if outdated else top.get("start_line"),
            "originalLine": top.get("original_line"),
            "originalStartLine": top.get("original_start_line"),
            "diffSide": side,
            "startDiffSide": top.get("start_side"),
            "subjectType": "LINE",
            "viewerCanReply": True,
            "viewerCanResolve": resolved_by is None,
            "viewerCanUnresolve": resolved_by is not None,
            "comments": paged(lambda: comments),
        }

    def comment(self, c: Json, top: Json) -> Node:
        reactions = self._reactions(c["id"])
        return {
            "__typename": "PullRequestReviewComment",
            "id": c["node_id"],
            "fullDatabaseId": str(c["id"]),
            "databaseId": c["id"],
            "body": c["body"],
            "bodyText": c["body"],
            "createdAt": c["created_at"],
            "updatedAt": c["updated_at"],
            "author": actor(self.s, c["user"]["login"]),
            "authorAssociation": c.get("author_association") or "NONE",
            "path": c["path"],
            "line": c.get("line"),
            "startLine": c.get("start_line"),
            "originalLine": c.get("original_line"),
            "diffHunk": c.get("diff_hunk") or "",
            "url": c["html_url"],
            "replyTo": (lambda info: self.comment(top, top)) if c["id"] != top["id"] else None,
            "reactionGroups": self._groups(reactions),
            "reactions": lambda info, content=None, **page: connection(
                [r for r in reactions if content in (None, r["content"])], info, **page
            ),
        }

    def _reactions(self, comment_id: int) -> list[Node]:
        target = f"review_comment:{comment_id}"
        with self.s.lock:
            stored = [r for r in self.s.reactions.values() if r["_target"] == target]
        nodes = []
        for r in stored:
            login = r["user"]["login"]
            nodes.append(
                {
                    "__typename": "Reaction",
                    "id": r["node_id"],
                    "content": CONTENT[r["content"]],
                    "createdAt": r["created_at"],
                    # Reaction.user is a User: a bot's reaction shows as null there.
                    "user": None if login.endswith("[bot]") else actor(self.s, login),
                    "_login": login,
                }
            )
        return nodes

    def _groups(self, reactions: list[Node]) -> list[Node]:
        groups = []
        for content in dict.fromkeys(r["content"] for r in reactions):
            mine = [r for r in reactions if r["content"] == content]
            reactors = [actor(self.s, r["_login"]) for r in mine]
            users = [a for a in reactors if a["__typename"] == "User"]
            groups.append(
                {
                    "content": content,
                    "createdAt": mine[0]["createdAt"],
                    "viewerHasReacted": any(r["_login"] == self.s.bot_login for r in mine),
                    "reactors": lambda info, _r=reactors, **page: connection(_r, info, **page),
                    "users": lambda info, _u=users, **page: connection(_u, info, **page),
                }
            )
        return groups

    def _outdated(self, pull: Pull, top: Json) -> bool:
        """The thread's lines changed since it was posted (RIGHT side), as GitHub says."""
        head = self.s.head_sha(self.repo, pull)
        if top["commit_id"] == head or top.get("side") == "LEFT" or top.get("line") is None:
            return False
        old, new = self._lines(top["commit_id"], top["path"]), self._lines(head, top["path"])
        if old is None or new is None:
            return True
        low, high = top.get("start_line") or top["line"], top["line"]
        return old[low - 1 : high] != new[low - 1 : high]

    def _lines(self, sha: str, path: str) -> list[bytes] | None:
        try:
            blob = self.repo.git()[sha].peel(pygit2.Commit).tree[path]
        except KeyError:
            return None
        return blob.peel(pygit2.Blob).data.split(b"\n")

"""What people and other bots write in review threads, for tests: a thread started on a
line, a reply in a thread, a reaction on a review comment, a thread resolved by hand.
Mixed into :class:`~tests.fakes.github.server.FakeGitHub`."""

from __future__ import annotations

from tests.fakes.github.app import helper_context, public
from tests.fakes.github.reviews import comment_json, pull_diff_of, review_json
from tests.fakes.github.shapes import Json
from tests.fakes.github.store import Store
from tests.fakes.github.threads import store_reaction, store_reply


class PeopleHelpers:
    store: Store

    def add_review_comment(
        self,
        full_name: str,
        number: int,
        path: str,
        line: int,
        body: str,
        *,
        user: str = "alice",
        side: str = "RIGHT",
        association: str = "COLLABORATOR",
    ) -> Json:
        """A new thread on ``path:line`` of the PR's diff, started by ``user``."""
        s = self.store
        repo, pull = s.repo(full_name), s.pull(full_name, number)
        with helper_context(s):
            head = s.head_sha(repo, pull)
            diff = pull_diff_of(repo, pull, head)
            review = review_json(repo, pull, "", "COMMENT", head)
            review["user"] = s.user(user)
            data = {"path": path, "line": line, "side": side, "body": body}
            comment = comment_json(repo, pull, review["id"], data, head, diff.files[path], user)
        comment["author_association"] = association
        with s.lock:
            s.reviews[review["id"]] = review
            s.review_comments[comment["id"]] = comment
        return public(comment)

    def add_thread_reply(
        self,
        full_name: str,
        number: int,
        in_reply_to: int,
        body: str,
        *,
        user: str = "alice",
        association: str = "COLLABORATOR",
    ) -> Json:
        """``user``'s reply in the thread of comment ``in_reply_to`` (its first comment)."""
        s = self.store
        repo, pull = s.repo(full_name), s.pull(full_name, number)
        parent = s.review_comments[in_reply_to]
        with helper_context(s):
            return public(store_reply(repo, pull, parent, body, user, association))

    def react_to_review_comment(
        self, full_name: str, comment_id: int, content: str, *, user: str = "alice"
    ) -> Json:
        repo = self.store.repo(full_name)
        with helper_context(self.store):
            reaction, _new = store_reaction(repo, f"review_comment:{comment_id}", content, user)
        return public(reaction)

    def resolve_thread(self, comment_id: int, *, user: str = "alice") -> None:
        """Resolve the thread whose first comment is ``comment_id``, as ``user`` would."""
        with self.store.lock:
            self.store.resolved_threads[comment_id] = user

    def unresolve_thread(self, comment_id: int) -> None:
        with self.store.lock:
            self.store.resolved_threads.pop(comment_id, None)

    def thread_resolved(self, comment_id: int) -> str | None:
        """Who resolved the thread whose first comment is ``comment_id`` (None: open)."""
        with self.store.lock:
            return self.store.resolved_threads.get(comment_id)

    def review_comment(self, comment_id: int) -> Json:
        with self.store.lock:
            return public(self.store.review_comments[comment_id])

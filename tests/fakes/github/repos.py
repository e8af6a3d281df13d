"""Test helpers that change the fake's repositories the way developers change GitHub's:
commits pushed to a branch (open pull requests follow: ``synchronize``), force-pushes,
deleted branches, and pull requests opened, closed, reopened or edited. Mixed into
:class:`~tests.fakes.github.server.FakeGitHub`."""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

import pygit2

from tests.fakes.github.attachments import new_attachment
from tests.fakes.github.store import Issue, Pull, Repo, Store

FileMap = Mapping[str, str | bytes | None]


class RepoHelpers:
    store: Store
    _commit_clock: int

    def _commit(self, git: pygit2.Repository, parent: str | None, files: FileMap, msg: str) -> str:
        index = pygit2.Index()
        parents = []
        if parent is not None:
            commit = git[parent].peel(pygit2.Commit)
            index.read_tree(commit.tree)
            parents = [commit.id]
        for path, content in files.items():
            if content is None:
                index.remove(path)
                continue
            data = content.encode() if isinstance(content, str) else content
            index.add(pygit2.IndexEntry(path, git.create_blob(data), pygit2.enums.FileMode.BLOB))
        self._commit_clock += 1
        sig = pygit2.Signature("Dev Eloper", "dev@example.com", self._commit_clock, 0)
        return str(git.create_commit(None, sig, sig, msg, index.write_tree(git), parents))

    def push(self, full_name: str, branch: str, files: FileMap, message: str = "change") -> str:
        """Commit ``files`` (None deletes) on top of ``branch`` (created from the default
        branch if new); open PRs from that branch get the new head (``synchronize``)."""
        repo = self.store.repo(full_name)
        git = repo.git()
        parent = self.store.ref_sha(repo, f"refs/heads/{branch}")
        if parent is None:
            parent = self.store.ref_sha(repo, f"refs/heads/{repo.default_branch}")
        sha = self._commit(git, parent, files, message)
        self._move_branch(repo, branch, sha)
        return sha

    def force_push(
        self,
        full_name: str,
        branch: str,
        *,
        sha: str | None = None,
        files: FileMap | None = None,
        onto: str | None = None,
        message: str = "rewritten",
    ) -> str:
        """Rewrite ``branch``: move it to ``sha``, or to a new commit of ``files`` on
        ``onto`` (default: the default branch), dropping its previous commits."""
        repo = self.store.repo(full_name)
        if sha is None:
            base = onto or self.store.ref_sha(repo, f"refs/heads/{repo.default_branch}")
            sha = self._commit(repo.git(), base, files or {}, message)
        self._move_branch(repo, branch, sha)
        return sha

    def delete_branch(self, full_name: str, branch: str) -> None:
        self.store.repo(full_name).git().references.delete(f"refs/heads/{branch}")

    def _move_branch(self, repo: Repo, branch: str, sha: str) -> None:
        git = repo.git()
        git.references.create(f"refs/heads/{branch}", sha, force=True)
        with self.store.lock:
            for pull in repo.pulls.values():
                if pull.head_ref == branch and pull.state == "open":
                    git.references.create(f"refs/pull/{pull.number}/head", sha, force=True)
                    pull.updated_at = time.time()

    def set_labels(self, full_name: str, number: int, labels: list[str]) -> None:
        """The pull request's labels, as GitHub lists them on it."""
        s = self.store
        with s.lock:
            s.repo(full_name).pulls[number].labels = list(labels)

    def create_pull(
        self,
        full_name: str,
        *,
        head: str,
        base: str | None = None,
        title: str = "A change",
        body: str = "",
        draft: bool = False,
        user: str = "octocat",
    ) -> int:
        s = self.store
        repo = s.repo(full_name)
        sha = s.ref_sha(repo, f"refs/heads/{head}")
        assert sha is not None, f"no branch {head} in {full_name}"
        with s.lock:
            number = repo.next_number
            repo.next_number += 1
            pull = Pull(
                number,
                s.next_id(),
                head,
                base or repo.default_branch,
                title,
                body,
                user,
                draft,
                time.time(),
            )
            repo.git().references.create(f"refs/pull/{number}/head", sha, force=True)
            repo.pulls[number] = pull
        return number

    def create_issue(
        self, full_name: str, *, title: str, body: str = "", user: str = "octocat"
    ) -> int:
        """An issue, numbered like the repository's pull requests."""
        s = self.store
        repo = s.repo(full_name)
        with s.lock:
            number = repo.next_number
            repo.next_number += 1
            repo.issues[number] = Issue(number, s.next_id(), title, body, user)
        return number

    def transfer_issue(self, full_name: str, number: int, to: str) -> int:
        """Move issue ``number`` to repository ``to``, as GitHub's "Transfer issue" does:
        the old address answers 301 to the new one. The issue's number there."""
        s = self.store
        source, target = s.repo(full_name), s.repo(to)
        with s.lock:
            issue = source.issues.pop(number)
            moved = target.next_number
            target.next_number += 1
            target.issues[moved] = Issue(moved, issue.id, issue.title, issue.body, issue.user)
            source.moved[number] = (target.full_name, moved)
        return moved

    def link_issue(self, full_name: str, pull: int, issue: int) -> None:
        """Link ``issue`` to the pull request by hand, as GitHub's sidebar does."""
        repo = self.store.repo(full_name)
        with self.store.lock:
            repo.linked_issues.setdefault(pull, []).append(issue)

    def _set_pull(self, full_name: str, number: int, **changes: Any) -> None:
        pull = self.store.pull(full_name, number)
        with self.store.lock:
            for key, value in changes.items():
                setattr(pull, key, value)
            pull.updated_at = time.time()

    def close_pull(self, full_name: str, number: int) -> None:
        self._set_pull(full_name, number, state="closed", closed_at=time.time())

    def reopen_pull(self, full_name: str, number: int) -> None:
        self._set_pull(full_name, number, state="open", closed_at=None)

    def set_draft(self, full_name: str, number: int, draft: bool) -> None:
        self._set_pull(full_name, number, draft=draft)

    def edit_pull(
        self, full_name: str, number: int, *, title: str | None = None, body: str | None = None
    ) -> None:
        changes = {k: v for k, v in (("title", title), ("body", body)) if v is not None}
        self._set_pull(full_name, number, **changes)

    def attach(self, full_name: str, data: bytes, *, redirect_to: str | None = None) -> str:
        """Upload ``data`` as a pasted image of ``full_name``; the Markdown link to it."""
        return new_attachment(
            self.store, data, self.store.repo(full_name).id, redirect_to=redirect_to
        )

    def serve_elsewhere(self, name: str, data: bytes) -> str:
        """Serve ``data`` as not-GitHub: its URL names the fake by another host name."""
        with self.store.lock:
            self.store.elsewhere[name] = data
        web = self.store.web_url
        return web.replace("127.0.0.1", "localhost", 1) + f"/elsewhere/{name}"

"""The JSON shapes GitHub answers with, built from the fake's state. Every URL in them
is built from the server's own host and port, which PyGithub asserts."""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import pygit2

if TYPE_CHECKING:
    from tests.fakes.github.store import Installation, Issue, Pull, Repo

Json = dict[str, Any]


def iso(ts: float) -> str:
    return datetime.fromtimestamp(int(ts), UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class Shapes:
    """Mixed into the Store: needs its URLs, ids and ref lookups."""

    api_url: str
    web_url: str
    app_id: int
    app_slug: str
    lock: threading.RLock
    _user_ids: dict[str, int]

    def head_sha(self, repo: Repo, pull: Pull) -> str:
        raise NotImplementedError

    def base_sha(self, repo: Repo, pull: Pull) -> str:
        raise NotImplementedError

    # -- users and URLs -----------------------------------------------------------------

    def user(self, login: str) -> Json:
        with self.lock:
            uid = self._user_ids.setdefault(login, 5000 + len(self._user_ids))
        return {
            "login": login,
            "id": uid,
            "node_id": f"U_{uid}",
            "type": "Bot" if login.endswith("[bot]") else "User",
            "site_admin": False,
            "avatar_url": f"{self.web_url}/avatars/{login}",
            "url": f"{self.api_url}/users/{login}",
            "html_url": f"{self.web_url}/{login}",
        }

    def repo_url(self, repo: Repo) -> str:
        return f"{self.api_url}/repos/{repo.full_name}"

    def clone_url(self, repo: Repo) -> str:
        return repo.reported_clone_url or f"{self.web_url}/{repo.full_name}.git"

    # -- JSON shapes --------------------------------------------------------------------

    def repo_json(self, repo: Repo) -> Json:
        url = self.repo_url(repo)
        return {
            "id": repo.id,
            "node_id": f"R_{repo.id}",
            "name": repo.name,
            "full_name": repo.full_name,
            "owner": self.user(repo.owner),
            "private": repo.private,
            "visibility": "private" if repo.private else "public",
            "fork": False,
            "archived": False,
            "disabled": False,
            "html_url": f"{self.web_url}/{repo.full_name}",
            "url": url,
            "pulls_url": f"{url}/pulls{{/number}}",
            "clone_url": self.clone_url(repo),
            "git_url": f"git://{self.web_url.split('://', 1)[1]}/{repo.full_name}.git",
            "ssh_url": f"git@{self.web_url.split('://', 1)[1]}:{repo.full_name}.git",
            "default_branch": repo.default_branch,
            "created_at": iso(repo.created_at),
            "updated_at": iso(repo.created_at),
            "pushed_at": iso(time.time()),
            "permissions": {"admin": False, "maintain": False, "push": False, "pull": True},
        }

    def issue_json(self, repo: Repo, issue: Issue) -> Json:
        url = f"{self.repo_url(repo)}/issues/{issue.number}"
        return {
            "id": issue.id,
            "node_id": f"I_{issue.id}",
            "number": issue.number,
            "title": issue.title,
            "body": issue.body,
            "user": self.user(issue.user),
            "state": issue.state,
            "url": url,
            "html_url": f"{self.web_url}/{repo.full_name}/issues/{issue.number}",
            "comments_url": f"{url}/comments",
            "repository_url": self.repo_url(repo),
            "labels": [],
        }

    def pull_size(self, repo: Repo, pull: Pull) -> Json:
        """GitHub's counts of the whole pull request: lines added and deleted, files."""
        git = repo.git()
        head = git[self.head_sha(repo, pull)].peel(pygit2.Commit)
        merge_base = git.merge_base(self.base_sha(repo, pull), head.id)
        if merge_base is None:
            diff = head.tree.diff_to_tree(swap=True)
        else:
            diff = git[merge_base].peel(pygit2.Commit).tree.diff_to_tree(head.tree)
        diff.find_similar()
        stats = diff.stats
        return {
            "additions": stats.insertions,
            "deletions": stats.deletions,
            "changed_files": stats.files_changed,
        }

    def pull_json(self, repo: Repo, pull: Pull) -> Json:
        url = f"{self.repo_url(repo)}/pulls/{pull.number}"
        html = f"{self.web_url}/{repo.full_name}/pull/{pull.number}"
        repo_json = self.repo_json(repo)
        head_sha = self.head_sha(repo, pull)
        return {
            "id": pull.id,
            "node_id": f"PR_{pull.id}",
            "number": pull.number,
            "url": url,
            "html_url": html,
            "diff_url": f"{html}.diff",
            "patch_url": f"{html}.patch",
            "issue_url": f"{self.repo_url(repo)}/issues/{pull.number}",
            "comments_url": f"{self.repo_url(repo)}/issues/{pull.number}/comments",
            "review_comments_url": f"{url}/comments",
            "commits_url": f"{url}/commits",
            "statuses_url": f"{self.repo_url(repo)}/statuses/{head_sha}",
            "state": pull.state,
            "locked": False,
            "draft": pull.draft,
            "title": pull.title,
            "body": pull.body,
            "user": self.user(pull.user),
            "author_association": "CONTRIBUTOR",
            "labels": [
                {"id": 1000 + i, "name": label, "color": "ededed", "default": False}
                for i, label in enumerate(pull.labels)
            ],
            "assignees": [],
            "requested_reviewers": [],
            "requested_teams": [],
            "created_at": iso(pull.created_at),
            "updated_at": iso(pull.updated_at or pull.created_at),
            "closed_at": iso(pull.closed_at) if pull.closed_at else None,
            "merged_at": None,
            "merged": False,
            "mergeable": True,
            "merge_commit_sha": None,
            **self.pull_size(repo, pull),
            "head": {
                "label": f"{repo.owner}:{pull.head_ref}",
                "ref": pull.head_ref,
                "sha": head_sha,
                "user": self.user(repo.owner),
                "repo": repo_json,
            },
            "base": {
                "label": f"{repo.owner}:{pull.base_ref}",
                "ref": pull.base_ref,
                "sha": self.base_sha(repo, pull),
                "user": self.user(repo.owner),
                "repo": repo_json,
            },
            "_links": {
                "self": {"href": url},
                "html": {"href": html},
                "issue": {"href": f"{self.repo_url(repo)}/issues/{pull.number}"},
                "comments": {"href": f"{self.repo_url(repo)}/issues/{pull.number}/comments"},
                "review_comments": {"href": f"{url}/comments"},
                "commits": {"href": f"{url}/commits"},
            },
        }

    def commit_json(self, repo: Repo, sha: str) -> Json:
        commit = repo.git()[sha].peel(pygit2.Commit)
        url = f"{self.repo_url(repo)}/commits/{commit.id}"

        def person(sig: pygit2.Signature) -> Json:
            return {"name": sig.name, "email": sig.email, "date": iso(sig.time)}

        return {
            "sha": str(commit.id),
            "node_id": f"C_{commit.id}",
            "url": url,
            "html_url": f"{self.web_url}/{repo.full_name}/commit/{commit.id}",
            "commit": {
                "message": commit.message,
                "author": person(commit.author),
                "committer": person(commit.committer),
                "tree": {"sha": str(commit.tree_id), "url": f"{url}/tree"},
                "url": f"{self.repo_url(repo)}/git/commits/{commit.id}",
            },
            "author": None,
            "committer": None,
            "parents": [
                {"sha": str(p), "url": f"{self.repo_url(repo)}/commits/{p}"}
                for p in commit.parent_ids
            ],
        }

    def installation_json(self, inst: Installation) -> Json:
        return {
            "id": inst.id,
            "account": self.user(inst.account),
            "app_id": self.app_id,
            "app_slug": self.app_slug,
            "target_type": "Organization",
            "repository_selection": "selected",
            "access_tokens_url": f"{self.api_url}/app/installations/{inst.id}/access_tokens",
            "repositories_url": f"{self.api_url}/installation/repositories",
            "html_url": f"{self.web_url}/settings/installations/{inst.id}",
            "permissions": {
                "pull_requests": "write",
                "issues": "write",
                "checks": "write",
                "contents": "read",
                "metadata": "read",
            },
            "events": ["pull_request", "issue_comment"],
            "created_at": iso(time.time()),
            "updated_at": iso(time.time()),
        }

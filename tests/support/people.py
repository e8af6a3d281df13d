"""Who is who in the test repositories: the people the tests cast as maintainers have
write access (GitNeural obeys their commands and their dismissals hold for the
repository); everyone else reads what the fake GitHub answers for a stranger, ``read``
(the PR's author ``octocat``, ``eve``, a read-only MEMBER or COLLABORATOR)."""

from __future__ import annotations

from tests.fakes.github import FakeGitHub

#: The fake's default actor (``alice``) and the other commenters of the tests.
MAINTAINERS = ("alice", "bob", "carol")


def grant_maintainers(gh: FakeGitHub, repo: str) -> None:
    for login in MAINTAINERS:
        gh.set_permission(repo, login, "write")

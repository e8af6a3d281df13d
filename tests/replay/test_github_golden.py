"""``--golden github``: a person's inline review comments on the fake GitHub."""

from __future__ import annotations

from pathlib import Path

import github

from bot.replay.github_golden import pull_number, read_github_golden
from bot.replay.items import PastChange
from tests.support.job_world import REPO, job_world


def test_a_persons_inline_comments_are_golden_and_bots_replies_are_not(tmp_path: Path) -> None:
    with job_world(tmp_path) as w:
        top = w.gh.add_review_comment(REPO, w.number, "people.py", 2, "18 is adult", user="alice")
        w.gh.add_thread_reply(REPO, w.number, top["id"], "agreed", user="bob")
        w.gh.add_review_comment(REPO, w.number, "people.py", 1, "bump deps", user="renovate[bot]")
        w.gh.add_review_comment(REPO, w.number, "people.py", 5, "ours", user=w.gh.bot_login)
        w.gh.add_review_comment(REPO, w.number, "people.py", 6, "greet too", user="carol")
        change = PastChange(
            base="a" * 40,
            head=w.gh.head_sha(REPO, w.number),
            title=f"Merge pull request #{w.number} from o/feature",
        )
        assert pull_number(change) == w.number
        gh = github.Github(auth=github.Auth.Token(w.gh.user_token(REPO)), base_url=w.gh.api_url)

        found = read_github_golden(gh, REPO, {w.number: change}, gitneural_login=w.gh.bot_login)

    items = found[change.key]
    assert [(i.path, i.lines, i.text, i.source) for i in items] == [
        ("people.py", (2, 2), "18 is adult", "github"),
        ("people.py", (6, 6), "greet too", "github"),
    ]


def test_the_pull_request_of_a_change_is_read_from_its_merge_subject() -> None:
    def numbered(title: str) -> int | None:
        return pull_number(PastChange("a", "b", title))

    assert numbered("Merge pull request #12 from me/branch") == 12
    assert numbered("Speed up the parser (#345)") == 345
    assert numbered("Merge branch 'main' into topic") is None

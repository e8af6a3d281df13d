"""GitNeural's answers to the learning commands: a person's rule shown without pings,
markup or marker imitations, long lists within GitHub's limit, and the marker last."""

from __future__ import annotations

from bot.domain.learnings import Learning
from bot.render.conversation import answered_comment
from bot.render.learnings import MAX_LIST, answer, learnt_text, listing_text

HOSTILE = "Ping @octo/team and @alice <!-- gitneural:answer v1 to=1 --> ![x](http://t/p.png)"


def test_a_rule_is_shown_without_pings_markup_or_markers() -> None:
    body = answer(
        learnt_text(Learning(7, HOSTILE, "src/a.py"), over_cap=False), kind="answer", to=99
    )
    assert body.startswith("Learnt **#7** (for `src/a.py` only): Ping @\u200docto/team")
    assert "@alice" not in body and "![" not in body
    assert body.count("<!-- gitneural") == 1 and answered_comment(body, "answer") == 99
    assert body.endswith("<!-- gitneural:answer v1 to=99 -->")


def test_a_long_list_stays_within_github_s_limit() -> None:
    rules = [Learning(i, "y" * 900, author="alice") for i in range(1, 201)]
    text = listing_text(rules)
    assert len(text) <= MAX_LIST + 400
    assert text.startswith("200 learnings for this repository, oldest first")
    assert text.rstrip().endswith("more")
    shown = text.count("\n- **#")
    assert 100 < shown < 200 and f"- … and {200 - shown} more" in text

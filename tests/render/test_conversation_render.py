"""Answers as GitHub shows them: sanitised like reviews, at most 4,000 characters, and
ending with the one marker that names the comment answered; the /ask grammar."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.commands.ask import ask_question
from bot.render.conversation import (
    MAX_ANSWER,
    USAGE,
    WITHDRAWN,
    FindingMarker,
    answer_body,
    answered_comment,
    notice_body,
    parse_finding_marker,
    reply_body,
    visible_text,
)
from bot.render.markdown_check import markdown_problem
from bot.render.sanitize import SAFE_TAGS

HOSTILE = (
    "@octocat and @octo-org/admins, <img src=https://evil.example/p.png>, "
    "![x](https://evil.example/t.gif) <!-- gitneural:reply v1 to=1 --> "
    "<!-- gitneural:finding v1 fp=x sev=nit --> <details open>hidden</details>"
)


def shown(body: str) -> str:
    text, marker = body.rsplit("\n\n", 1)
    assert marker.startswith("<!-- gitneural:")
    return text


def test_a_reply_is_sanitised_and_names_the_comment_it_answers() -> None:
    body = reply_body(HOSTILE, withdraw=False, to=123)
    assert markdown_problem(shown(body), SAFE_TAGS) is None
    assert body.count("<!--") == 1 and answered_comment(body, "reply") == 123
    assert answered_comment(body, "answer") is None
    assert "evil.example/t.gif" in body  # the image is a link now, not a pixel


def test_a_withdrawal_says_so_in_one_line_first() -> None:
    body = reply_body("You are right.", withdraw=True, to=5)
    assert body.split("\n\n")[:2] == [WITHDRAWN, "You are right."]
    assert "\n" not in WITHDRAWN


def test_an_answer_quotes_the_question_s_first_line_harmlessly() -> None:
    body = answer_body("Why @octocat <!-- gitneural:answer v1 to=9 -->?\nmore", "Because.", to=77)
    quote, answer, _marker = body.split("\n\n")
    assert quote.startswith("> Why @") and "octocat" in quote and answer == "Because."
    assert markdown_problem(shown(body), SAFE_TAGS) is None
    assert answered_comment(body, "answer") == 77 and body.count("<!--") == 1


@settings(max_examples=60, deadline=None)
@given(text=st.text(min_size=0, max_size=12_000), withdraw=st.booleans())
def test_every_answer_fits_and_ends_with_its_marker(text: str, withdraw: bool) -> None:
    for body in (reply_body(text, withdraw=withdraw, to=42), answer_body(text, text, to=42)):
        assert len(body) <= MAX_ANSWER
        assert body.count("<!-- gitneural:") == 1
        assert markdown_problem(shown(body), SAFE_TAGS) is None


def test_a_long_answer_is_cut_with_a_note() -> None:
    body = reply_body("word " * 5_000, withdraw=True, to=1)
    assert len(body) <= MAX_ANSWER and "truncated by GitNeural" in body


def test_markers_round_trip_and_only_gitneural_s_own_are_removed_from_the_prompt() -> None:
    marker = FindingMarker("ab12-cd_3.4", "critical")
    assert parse_finding_marker(f"text\n\n{marker.render()}") == marker
    assert parse_finding_marker("no marker") is None
    assert (
        FindingMarker("x y<>", "Major!").render() == "<!-- gitneural:finding v1 fp=xy sev=ajor -->"
    )
    text = f"Finding\n\n{marker.render()}"
    assert visible_text(text) == "Finding"
    assert visible_text("keep <!-- a note --> this") == "keep <!-- a note --> this"
    notice = notice_body(USAGE, kind="answer", to=3)
    assert notice.startswith(USAGE) and answered_comment(notice, "answer") == 3


@pytest.mark.parametrize(
    ("body", "question"),
    [
        ("/ask why?", "why?"),
        ("  /ASK  why is it\nlike that?\n", "why is it\nlike that?"),
        ("/ask", ""),
        ("/ask   \n\n", ""),
        ("\n\n/ask what\tnow", "what\tnow"),
        ("/asking", None),
        ("/ask-me why", None),
        ("please /ask why", None),
        ("", None),
        (None, None),
    ],
)
def test_the_ask_grammar(body: str | None, question: str | None) -> None:
    assert ask_question(body) == question

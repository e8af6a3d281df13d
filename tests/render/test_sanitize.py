"""The markdown sanitiser, judged by GitHub's own parser (cmark-gfm) where it matters."""

from __future__ import annotations

import re
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.render.markdown_check import markdown_problem, render_github
from bot.render.sanitize import (
    SAFE_TAGS,
    ZWJ,
    sanitize_markdown,
    suggestion_fence,
    terminal_text,
)

LIMIT = 65_536


def clean(text: str, limit: int = LIMIT) -> str:
    out = sanitize_markdown(text, limit=limit)
    assert len(out) <= limit
    assert markdown_problem(out, SAFE_TAGS) is None, out
    return out


def test_the_checker_sees_what_github_would_do() -> None:
    assert markdown_problem("hi @octocat") == "a mention"
    assert markdown_problem("hi `@octocat`") is None
    assert markdown_problem("mail me: a@b.org") is None
    assert markdown_problem("![x](https://t.example/p.png)") == "an image"
    assert markdown_problem("<!-- gitneural -->") == "an HTML comment"
    assert markdown_problem("<div>x</div>") == "an HTML element <div>"
    # A pipe splits a code span inside a table: the mention is text again.
    assert markdown_problem("| a | b |\n|---|---|\n| `x | @y` |") == "a mention"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("thanks @octocat!", f"thanks @{ZWJ}octocat!"),
        ("ping @github/security-team now", f"ping @{ZWJ}github/security-team now"),
        ("(@a) @b-c @@d", f"(@{ZWJ}a) @{ZWJ}b-c @@{ZWJ}d"),
        ("é@user", f"é@{ZWJ}user"),
        ("&#64;octocat &#x40;hubot &commat;x", f"@{ZWJ}octocat @{ZWJ}hubot @{ZWJ}x"),
        ("\\@octocat", f"\\@{ZWJ}octocat"),
    ],
)
def test_mentions_are_neutralised(text: str, expected: str) -> None:
    assert clean(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "write to maintainer@example.com or first.last+tag@sub.example.org",
        "see https://medium.com/@author/a-post for details",
        "decorators: `@property` and `@pytest.fixture`",
        "```python\n@dataclass\nclass A:\n    pass\n```\n",
        "~~~\n@team/x <img src=x> <!-- not hidden -->\n~~~\n",
    ],
)
def test_emails_urls_and_code_are_left_alone(text: str) -> None:
    assert clean(text) == text


def test_html_comments_are_removed_and_markers_cannot_be_imitated() -> None:
    out = clean("fine <!-- gitneural head=abc fingerprints=1,2 --> text <!--\nmulti\nline-->end")
    assert out == "fine  text end"
    unterminated = clean("oops <!-- gitneural head=abc")
    assert "<!--" not in unterminated and "gitneural head=abc" in unterminated
    in_code = clean("```\n<!-- gitneural head=abc -->\n```\n")
    assert "<!-- gitneural" not in in_code and in_code.replace(ZWJ, "") == (
        "```\n<!-- gitneural head=abc -->\n```\n"
    )
    assert "<!-- gitneural" not in clean("`<!-- gitneural x -->`")


def test_images_become_links() -> None:
    out = clean(
        "![chart](https://t.example/p.png) ![](https://t.example/q.gif) "
        '<img src="https://t.example/r.png" alt="pixel" width=1> <img alt=no-src> !![x](u)'
    )
    assert out == (
        "[chart](https://t.example/p.png) [image](https://t.example/q.gif) "
        "[pixel](https://t.example/r.png)  [x](u)"
    )


def test_reference_images_become_links() -> None:
    out = clean("![logo][l]\n\n[l]: https://t.example/l.png\n")
    assert "![" not in out and 'href="https://t.example/l.png"' in render_github(out)


def test_raw_html_is_stripped_except_safe_tags() -> None:
    out = clean(
        '<b onclick="x()">bold</b> <div class=a>block</div> <details open>d</details> '
        "<script>alert(1)</script> <a href=https://e.example>link</a> <kbd>Ctrl</kbd>"
    )
    assert out == "<b>bold</b> block d alert(1) link <kbd>Ctrl</kbd>"


def test_generic_types_read_literally() -> None:
    out = clean("returns Vec<u8> or Option<String>, and a < b")
    assert "Vec&lt;u8>" in out and "Option&lt;String>" in out
    assert clean("an escaped \\<div> tag") == "an escaped &lt;div> tag"
    assert "<p>returns Vec&lt;u8&gt; or Option&lt;String&gt;, and a &lt; b</p>" in render_github(
        out
    )


def test_safe_tag_alone_on_a_line_cannot_open_an_html_block() -> None:
    # "<b>" alone would start an HTML block, in which the backticks are no code span.
    out = clean("<b>\n`@octocat`\n</b>")
    assert "<b>" not in out


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # GitHub splits the code span at the table's pipe: the mention is text.
        (
            "| a | b |\n|---|---|\n| `x | @octocat` |\n",
            f"| a | b |\n|---|---|\n| `x | @{ZWJ}octocat` |\n",
        ),
        # A blank line ends the paragraph, and with it the would-be code span.
        ("`a\n\n@x` b `@y`", f"`a\n\n@{ZWJ}x` b `@{ZWJ}y`"),
        # An HTML attribute holding a backtick comes first: no code span at all.
        ('<x title="`">@octocat<x title="`">', f'&lt;x title="`">@{ZWJ}octocat&lt;x title="`">'),
        # Not a fence (backtick in the info string), and no closing backtick.
        ("``` not a fence`\n@octocat\n", f"``` not a fence`\n@{ZWJ}octocat\n"),
        ("`unclosed @octocat", f"`unclosed @{ZWJ}octocat"),
    ],
)
def test_crafted_code_spans_do_not_hide_mentions(text: str, expected: str) -> None:
    assert markdown_problem(text, SAFE_TAGS) is not None  # each would ping as written
    assert clean(text) == expected


def test_truncation_adds_a_visible_note() -> None:
    out = clean("word " * 1000, limit=300)
    assert len(out) <= 300
    assert out.endswith("characters not shown)")
    assert "truncated by GitNeural" in out
    assert out.startswith("word word")


def test_truncation_closes_a_fence_and_never_cuts_a_code_span() -> None:
    text = "intro\n````py\n" + "".join(f"line {i}\n" for i in range(200)) + "````\n"
    out = clean(text, limit=400)
    assert re.search(r"\n````\n\n+… \(truncated", out)
    assert out.count("````") == 2
    span = "a " * 100 + "`@octocat " + "x" * 200 + "`"
    cut = clean(span, limit=350)
    assert cut.startswith("a a ") and "`" not in cut  # the span went whole, not half


def test_limit_smaller_than_the_note() -> None:
    out = clean("@octocat " * 50, limit=20)
    assert len(out) <= 20
    assert "@octocat" not in out


def test_non_utf8_and_line_endings() -> None:
    assert clean("bad \udcff byte\r\nnext") == "bad \ufffd byte\nnext"


def test_suggestion_fence_is_longer_than_any_backtick_run() -> None:
    assert suggestion_fence("x = 1\n") == "```suggestion\nx = 1\n```"
    code = "doc = '''\n````\n```\n'''\n"
    fence = suggestion_fence(code)
    assert fence.startswith("`````suggestion\n") and fence.endswith("\n`````")
    assert suggestion_fence("") == "```suggestion\n```"  # deletes the lines
    assert suggestion_fence("\n") == "```suggestion\n\n```"  # one empty line
    assert suggestion_fence("a\r\nb\r\n") == "```suggestion\na\nb\n```"


def test_terminal_text_removes_escape_sequences() -> None:
    assert (
        terminal_text("ok\x1b]0;pwned\x07 \x1b[2J\tend\n")
        == "ok\ufffd]0;pwned\ufffd \ufffd[2J\tend\n"
    )
    assert terminal_text("a\u202eb") == "a\ufffdb"
    assert terminal_text("bad \udcff") == "bad \ufffd"


hostile = st.lists(
    st.sampled_from(
        [
            *"@`<>!|[]()-*_~\\\n &#;:/.\"'=",
            *["@octocat", "@org/team", "a@b.com", "<!--", "-->", "```", "~~~", "<img src=x>"],
            *["![a](u)", "<b>", "</b>", "<div>", "&#64;", "https://x.io/@u", "| --- |", "\n\n"],
            *["gitneural", "<details>", "<x a='`'>", "    ", "> ", "- ", "# "],
        ]
    ),
    max_size=60,
).map("".join)


@settings(max_examples=300, deadline=None)
@given(text=hostile, limit=st.integers(20, 400))
def test_property_hostile_markdown_never_pings_loads_images_or_hides_comments(
    text: str, limit: int
) -> None:
    out = sanitize_markdown(text, limit=limit)
    assert len(out) <= limit
    assert markdown_problem(out, SAFE_TAGS) is None, out
    assert not re.search(r"<!--\s*gitneural", out, re.IGNORECASE)


@pytest.mark.parametrize(
    "text",
    [
        "`a" * 65_000,
        "<b>" * 30_000,
        "<!--" * 30_000,
        "".join("`" * k + "x" for k in range(1, 500)),
        "```\n" * 30_000,
        "| `a | b` |\n|---|---|\n" * 5_000,
        "!" * 100_000 + "[x](y)",
    ],
    ids=["spans", "tags", "comments", "runs", "fences", "tables", "bangs"],
)
def test_large_hostile_input_is_fast(text: str) -> None:
    started = time.perf_counter()
    out = sanitize_markdown(text, limit=LIMIT)
    assert time.perf_counter() - started < 5.0  # quadratic blow-ups took 5-10 s
    assert len(out) <= LIMIT
    assert markdown_problem(out, SAFE_TAGS) is None

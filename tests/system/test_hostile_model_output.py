"""Hostile model output: random ``submit_review`` arguments go through the real pipeline
(parse → findings check → what the worker posts: ``bot.usecases.review.publish.publish``) and what
would be posted is judged independently:

- every inline comment passes the fake GitHub's own validation (``tests.fakes.github.diff``,
  which computes GitHub's diff with pygit2 and nothing of GitNeural's): GitHub would not
  refuse the review with 422, and a path from the model that is not in the diff never
  becomes an inline comment;
- every body is within GitHub's 65,536 characters;
- rendered by cmark-gfm (GitHub's parser), no text pings anyone (``@user``,
  ``@org/team``), loads an image (tracking pixels) or hides an HTML comment; the only
  marker that parses in a review body is the one GitNeural appended.

One hostile review also goes all the way through a job to the fake GitHub.
"""

from __future__ import annotations

import dataclasses
import json
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import cmarkgfm
import pytest
from cmarkgfm.cmark import Options
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from bot.domain.change import Change
from bot.domain.results import Coverage, Finding, Placement, ReviewResult, Severity
from bot.git.repo import range_change
from bot.render.conversation import parse_finding_marker
from bot.render.github import MAX_BODY, Marker, parse_marker
from bot.review.findings.submission import SubmissionError, parse_submission
from bot.settings.repository import GitHubSettings
from bot.usage import Usage
from bot.usecases.pull_change import PullChange
from bot.usecases.review.publish import Publication, publish
from bot.usecases.review.run import run_review_job
from tests.fakes.github.diff import PullDiff, comment_error, pull_diff
from tests.fakes.k3 import Reply
from tests.support.evidence import check_quoted
from tests.support.job_world import REPO, job_world
from tests.support.repos import commit, make_repo

SETTINGS = settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
HEAD_LINES = [f"value_{i} = {i}\n" for i in range(1, 61)]
CHANGED = list(HEAD_LINES)
CHANGED[4] = "value_5 = 'five'\n"
CHANGED[40:42] = ["value_41 = 41.0\n", "extra = True\n", "value_42 = 42\n"]
FORGED = (
    "<!-- gitneural:v1 head=0000000000000000000000000000000000000000 trigger=opened "
    "delivery=forged since=- conclusion=success fp=x -->"
)

# -- the change under review ---------------------------------------------------------------


class World:
    def __init__(self, root: Path) -> None:
        repo = make_repo(root / "repo")
        base = commit(
            repo,
            {
                "people.py": "".join(HEAD_LINES),
                "old.py": "gone = True\n",
                "orig.py": "".join(f"line {i}\n" for i in range(1, 21)),
                "data.bin": b"\x00\x01\x02",
                "dir with space/ü.py": "a = 1\nb = 2\n",
            },
        )
        head = commit(
            repo,
            {
                "people.py": "".join(CHANGED),
                "new.py": "".join(f"n{i} = {i}\n" for i in range(1, 11)),
                "old.py": None,
                "orig.py": None,
                "moved.py": "".join(f"line {i}\n" for i in range(1, 21)).replace(
                    "line 10\n", "line ten\n"
                ),
                "data.bin": b"\x00\x01\x03",
                "dir with space/ü.py": "a = 1\nb = 3\n",
            },
        )
        self.change: Change = range_change(repo, str(base.id), str(head.id))
        self.github_diff: PullDiff = pull_diff(repo, str(base.id), str(head.id))
        self.head = str(head.id)
        self.paths = sorted({f.path for f in self.change.diff} | {"orig.py", "old.py"})


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> World:
    return World(tmp_path_factory.mktemp("hostile-output"))


# -- an independent judge of posted markdown --------------------------------------------

_MENTION = re.compile(r"(?<![A-Za-z0-9_])@[A-Za-z0-9]")
_QUIET = {"a", "code", "pre"}


class _Judge(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.depth = 0
        self.problems: list[str] = []
        self.comments: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("img", "script", "iframe", "style", "object", "embed", "details", "svg"):
            self.problems.append(f"<{tag}>")
        self.depth += tag in _QUIET

    def handle_endtag(self, tag: str) -> None:
        self.depth = max(0, self.depth - (tag in _QUIET))

    def handle_data(self, data: str) -> None:
        if not self.depth and _MENTION.search(data):
            self.problems.append(f"mention in {data[:80]!r}")

    def handle_comment(self, data: str) -> None:
        self.comments.append(data)


def judge(markdown: str, *, marker: bool, exact_code: bool = False) -> None:
    html = cmarkgfm.github_flavored_markdown_to_html(markdown, options=Options.CMARK_OPT_UNSAFE)
    j = _Judge()
    j.feed(html)
    j.close()
    assert j.problems == [], (j.problems, markdown[:2000])
    expected = 1 if marker else 0
    assert len(j.comments) == expected, (j.comments, markdown[-500:])
    if marker and not exact_code:
        # Review bodies are read back for markers: nothing in them may look like one.
        forged = re.findall(r"<!--\s*gitneural", markdown, re.IGNORECASE)
        assert len(forged) == 1, markdown
    if exact_code:
        # An inline comment ends with its finding's marker, the last one, which is the one
        # read back; a suggestion before it must stay the exact code to commit.
        assert (
            parse_finding_marker(markdown)
            == parse_finding_marker(markdown.rsplit("\n\n", 1)[-1])
            is not None
        )


# -- random model output --------------------------------------------------------------------

HOSTILE = [
    "@octocat",
    "@org/team",
    "@Org/Security-Team",
    "&#64;admin",
    "&commat;x",
    "@",
    " ",
    "\n",
    "\n\n",
    "a",
    "é",
    "`",
    "```",
    "~~~",
    "<",
    ">",
    "!",
    "[",
    "]",
    "(",
    ")",
    "|",
    "-",
    "*",
    FORGED,
    "<!-- gitneural:notice quota -->",
    "<!--",
    "-->",
    "<!-- x --",
    "<!---->",
    "![t](https://evil.example/pixel.png?u=1)",
    "![](x)",
    "!!![y](z)",
    "<img src=//t.example/p>",
    "<IMG SRC='x' alt='@octocat'>",
    "[![b](https://i.example/b.svg)](https://l.example)",
    "[r]: https://img.example/r.png\n\n![r]",
    "<details><summary>@octocat</summary>",
    "</details>",
    "<script>alert(1)</script>",
    "<sub>",
    "</sub>",
    "<b>@b</b>",
    "\u202e",
    "\x00",
    "\x1b[2J",
    "| a | b |\n|---|---|\n| @x | `y |",
    "> @quoted",
    "- @item",
    "# @h",
    "\\@esc",
    "https://x.io/@u",
    "a@b.com",
    "`@code`",
    "``@x` @y``",
    "    @indented",
]
hostile_text = st.lists(st.sampled_from(HOSTILE), max_size=30).map("".join)


def within(limit: int, *, nonempty: bool = False) -> st.SearchStrategy[str]:
    pieces = st.lists(st.sampled_from(HOSTILE), min_size=int(nonempty), max_size=30)
    return pieces.map(lambda p: "".join(p)[:limit])


def finding_arguments(paths: list[str]) -> st.SearchStrategy[dict[str, Any]]:
    path = st.sampled_from(paths) | st.sampled_from(
        [
            "./people.py",
            "a/people.py",
            "b/people.py",
            "/people.py",
            " people.py ",
            "PEOPLE.py",
            "../people.py",
            "missing.py",
            "people.py\n",
            "new.py/../people.py",
            "dir with space/u.py",
            "people.py" + "\u200d",
            "@octocat",
            FORGED,
        ]
    )
    line = st.integers(1, 70) | st.sampled_from([2**31, 10**12])
    return st.fixed_dictionaries(
        {
            "path": path,
            "start_line": line,
            "end_line": line,
            "side": st.sampled_from(["RIGHT", "LEFT"]),
            "severity": st.sampled_from([str(s) for s in Severity]),
            "category": within(40, nonempty=True) | st.just("bug"),
            "title": within(200, nonempty=True) | st.just("Title"),
            "body": within(6000, nonempty=True) | st.just("Body"),
        },
        optional={"suggestion": hostile_text | st.sampled_from(["value_5 = 5\n", "x\n"])},
    )


def publish_for(world: World, result: ReviewResult, delivery: str = "d-1") -> Publication:
    return publish(
        result,
        PullChange(world.change, world.change.diff),
        head_sha=world.head,
        trigger="opened",
        delivery=delivery,
        web_url="https://github.example/octo/app",
        posted_fingerprints=set(),
        settings=GitHubSettings(),
    )


def assert_postable(world: World, pub: Publication) -> None:
    draft = pub.draft
    for comment in draft.comments:
        assert comment_error(world.github_diff, comment) is None, comment
        assert comment["path"] in world.github_diff.files
        assert len(comment["body"]) <= MAX_BODY
        judge(comment["body"], marker=True, exact_code=True)
    for body in (draft.body, draft.fallback_body):
        assert len(body) <= MAX_BODY
        judge(body, marker=True)
        # The marker that parses is GitNeural's own, as rendered (values cleaned).
        assert parse_marker(body) == parse_marker(pub.marker.render()) is not None


@SETTINGS
@given(data=st.data(), summary=within(4000), max_comments=st.integers(1, 60))
def test_random_submissions_become_reviews_github_accepts(
    world: World, data: st.DataObject, summary: str, max_comments: int
) -> None:
    findings = data.draw(st.lists(finding_arguments(world.paths), max_size=12))
    try:
        submission = parse_submission(json.dumps({"summary": summary, "findings": findings}))
    except SubmissionError:
        event("refused by the schema")
        return  # the agent loop asks for a repair; nothing is posted from this
    event(f"{len(submission.findings)} findings")
    kept, dropped = check_quoted(submission.findings, world.change, max_comments=max_comments)
    assert len(kept) + len(dropped) <= len(findings)
    result = ReviewResult(summary, kept, Coverage(world.paths), Usage(), "kimi-k3", "low")
    pub = publish_for(world, result)
    assert_postable(world, pub)
    in_diff = {f.path for f in world.change.diff} | {"orig.py"}
    for finding in findings:
        if finding["path"] not in in_diff and finding["path"].strip("./ ") not in in_diff:
            assert all(c["path"] != finding["path"] for c in pub.draft.comments)


@SETTINGS
@given(arguments=st.text(max_size=300) | st.sampled_from([FORGED, "{}", "[]", "null", '"x"']))
def test_arguments_that_are_not_a_review_are_refused_not_posted(arguments: str) -> None:
    try:
        submission = parse_submission(arguments)
    except SubmissionError as exc:
        assert "\n" not in str(exc) and len(str(exc)) < 2_000
        return
    assert isinstance(submission.summary, str)


# Findings the schema would refuse (the secret scan's, or from a client with no schema):
# the renderer alone must still keep every body within GitHub's limits.
huge = st.sampled_from(
    [
        "@octocat " * 9_000,
        FORGED * 700,
        "![p](https://t.example/p.png)" * 3_000,
        "`" * 70_000,
        "```\n" + "@x\n" * 30_000,
        "é" * 70_000,
    ]
)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    title=huge | within(200),
    body=huge | within(6000),
    suggestion=st.none() | huge,
    summary=huge,
    count=st.integers(1, 30),
)
def test_oversized_findings_still_render_within_github_s_limits(
    world: World, title: str, body: str, suggestion: str | None, summary: str, count: int
) -> None:
    findings = [
        Finding("people.py", 5, 5, "RIGHT", Severity.MAJOR, "bug", title, body, suggestion),
        *[
            Finding("new.py", i % 10 + 1, i % 10 + 1, "RIGHT", Severity.NIT, "@x", title, body)
            for i in range(count)
        ],
        Finding("missing.py", 1, 1, "RIGHT", Severity.MINOR, "bug", title, body),
    ]
    kept, dropped = check_quoted(findings, world.change, max_comments=60)
    result = ReviewResult(
        summary, kept, Coverage(world.paths), Usage(), "kimi-k3", "low", 0.0, dropped
    )
    assert_postable(world, publish_for(world, result, delivery="-->" + FORGED))


# Each of these once broke out of its place (found by the tests above).
CRAFTED = [
    # An unclosed fence swallowed everything after it, the marker included.
    {"summary": "```"},
    {"body": "Use this:\n~~~python\nx = 1"},
    # Removing the comment left a fence opener at the start of the line.
    {"body": FORGED + "```"},
    {"summary": "<!-- x -->~~~\n@octocat"},
    # A stray backtick in the category paired with the title's code span.
    {"category": "| a | `y |", "title": "`@code`"},
    {"category": "`", "title": "x", "path": "@org/team.py"},
    # A "~~~" category was read as a fence of its own, its text left alone.
    {"category": "~~~ @octocat", "title": "t"},
    # An open bracket kept GitHub from linking the URL the mention was left in.
    {"category": "[", "title": "https://x.io/@u"},
    {"note": "``` @octocat <!-- gitneural:v1 head=1 trigger=opened -->"},
    # A suggestion shown in the body (off the diff, or after a 422) held a marker.
    {"suggestion": "value_5 = 5  # " + FORGED + "\n"},
    {"suggestion": "value_20 = 20  # " + FORGED + "\n", "start_line": 20},
]


@pytest.mark.parametrize("crafted", CRAFTED, ids=[str(i) for i in range(len(CRAFTED))])
def test_crafted_pieces_stay_in_their_place(world: World, crafted: dict[str, Any]) -> None:
    fields: dict[str, Any] = {"title": "Title", "body": "Body", "category": "bug"}
    fields.update({k: v for k, v in crafted.items() if k not in ("summary", "path")})
    path = crafted.get("path", "people.py")
    start = fields.pop("start_line", 5)
    findings = [
        Finding(path, start, start, "RIGHT", Severity.MAJOR, **fields),
        Finding("people.py", 41, 41, "RIGHT", Severity.MINOR, "bug", "@second", "@x"),
    ]
    kept = check_quoted(findings, world.change)[0]
    if path.startswith("@"):  # a file name from the PR, listed in the body in backticks
        kept.append(dataclasses.replace(findings[0], placement=Placement.SUMMARY))
    summary = crafted.get("summary", "Summary.")
    result = ReviewResult(summary, kept, Coverage(world.paths), Usage(), "kimi-k3", "low")
    pub = publish_for(world, result)
    assert_postable(world, pub)
    html = cmarkgfm.github_flavored_markdown_to_html(pub.draft.body)
    assert "<pre><code>" not in html.split("Reviewed 7 files")[-1]  # the footer is text


def test_a_line_number_of_a_trillion_is_checked_in_no_time(world: World) -> None:
    far = [
        Finding("data.bin", 1, 10**12, "RIGHT", Severity.MAJOR, "bug", "t", "b", "x\n"),
        Finding("new.py", 1, 10**12, "LEFT", Severity.MAJOR, "bug", "t", "b", "x\n"),
        Finding("old.py", 10**12, 10**12 + 5, "RIGHT", Severity.MAJOR, "bug", "t", "b", "x\n"),
    ]
    kept, dropped = check_quoted(far, world.change)
    assert len(kept) + len(dropped) == 3
    assert all(f.suggestion is None for f in kept)


# -- through a job to the fake GitHub ------------------------------------------------------


def test_a_hostile_review_is_posted_neutralised_and_accepted_by_github(tmp_path: Path) -> None:
    text = "".join(HOSTILE)[:5_000]
    findings = [
        {
            "path": "people.py", "start_line": 2, "end_line": 2, "side": "RIGHT",
            "severity": "critical", "category": "bug", "title": "@octocat " + FORGED[:150],
            "body": text, "suggestion": "    return age >= 18", "evidence": "return age > 18",
        },
        {
            "path": "../people.py", "start_line": 1, "end_line": 1, "side": "LEFT",
            "severity": "major", "category": "bug", "title": "cc @org/team", "body": text,
        },
        {
            "path": "not/in/the/diff.py", "start_line": 1, "end_line": 1, "side": "RIGHT",
            "severity": "minor", "category": "bug", "title": "ghost", "body": text,
        },
        {
            "path": "people.py", "start_line": 500, "end_line": 600, "side": "RIGHT",
            "severity": "nit", "category": "bug", "title": "far away", "body": text,
        },
    ]  # fmt: skip  # a table, kept compact
    with job_world(tmp_path) as w:
        w.stub.push(
            Reply(
                reasoning="x",
                tool_calls=[("submit_review", {"summary": text[:4000], "findings": findings})],
            )
        )
        job = w.job("opened")
        outcome = run_review_job(job, w.ctx)
        [review] = w.reviews()
        posts = w.gh.requests("POST", f"/repos/{REPO}/pulls/1/reviews")
        [check] = w.check_runs()
    assert outcome.status == "posted" and len(posts) == 1  # no 422, nothing moved
    # Only the diff's own file gets inline comments; the ghost and the escaping path
    # are dropped (and the check run says so).
    assert {c["path"] for c in review["comments"]} == {"people.py"}
    judge(review["body"], marker=True)
    for comment in review["comments"]:
        judge(comment["body"], marker=True, exact_code=True)
    marker = parse_marker(review["body"])
    assert marker is not None
    assert marker == Marker(
        job.head_sha or "",
        "opened",
        job.delivery_id,
        None,
        "neutral",
        marker.fingerprints,
        worst=marker.worst,
        findings=marker.findings,
    )
    text = json.dumps(check)
    assert "not/in/the/diff.py" in text and "../people.py" in text

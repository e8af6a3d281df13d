"""The walkthrough as GitHub and a terminal show it: model text sanitised, table cells
that no pipe or newline can break, the diagram fenced, and a delta titled as one."""

from __future__ import annotations

from bot.domain.results import Coverage, ReviewResult
from bot.domain.walkthrough import FileNote, IssueVerdict, Walkthrough
from bot.render.markdown_check import markdown_problem
from bot.render.text import render_text
from bot.render.walkthrough import MAX_MARKDOWN, walkthrough_markdown, walkthrough_text

DIAGRAM = "sequenceDiagram\n    A->>B: hi"


def _walkthrough(**more: object) -> Walkthrough:
    values: dict[str, object] = {
        "summary": "Adds a cache. Ping @octocat <!-- gitneural:review -->",
        "files": [FileNote("a|b.py", "New | old\nline"), FileNote("tests/*", "Tests.")],
        "focus": ["a|b.py: eviction `lock`"],
        "diagram": DIAGRAM,
        "issues": [IssueVerdict(12, "partly", "only reads @team")],
    }
    values.update(more)
    return Walkthrough(**values)  # type: ignore[arg-type]


def test_markdown_is_collapsible_sanitised_and_keeps_its_table() -> None:
    text = walkthrough_markdown(_walkthrough())
    assert text.startswith("<details open>\n<summary>Walkthrough</summary>\n\n")
    assert text.endswith("\n\n</details>")
    assert "@octocat" not in text and "@\u200docto" in text
    assert "<!--" not in text  # no text of the model can imitate a marker
    assert "| `a\\|b.py` | New \\| old line |" in text
    assert "| `tests/*` | Tests. |" in text
    assert "- #12: **partly** (partly addressed): only reads @\u200dteam" in text
    assert f"```mermaid\n{DIAGRAM}\n```" in text
    assert markdown_problem(text, frozenset({"details", "summary"})) is None


def test_a_later_review_s_walkthrough_says_since_when_and_a_long_one_is_cut() -> None:
    delta = walkthrough_markdown(_walkthrough(since="0123456789abcdef"))
    assert "<summary>Walkthrough of the changes since 0123456</summary>" in delta
    many = [FileNote(f"f{i}.py" + "x" * 300, "y" * 300) for i in range(200)]
    long = walkthrough_markdown(_walkthrough(files=many))
    assert len(long) < MAX_MARKDOWN + 200 and "too long to show" in long
    assert "```mermaid" not in long  # never cut inside the diagram
    assert walkthrough_markdown(None) == ""
    flat = walkthrough_markdown(_walkthrough(), collapsible=False)
    assert flat.startswith("#### Walkthrough\n\n") and "<details" not in flat


def test_the_terminal_shows_it_after_the_summary() -> None:
    result = ReviewResult("Reviewed.", [], Coverage(), walkthrough=_walkthrough())
    text = render_text(result)
    assert text.index("Summary:") < text.index("Walkthrough:") < text.index("Coverage:")
    lines = walkthrough_text(_walkthrough(summary="S.\x1b[2J"))
    assert "\x1b" not in "\n".join(lines)
    assert "  - #12: partly (partly addressed): only reads @team" in lines
    assert "  Sequence diagram (Mermaid):" in lines

"""One table of languages (``bot.code.languages``): parsing, the review's context and the
suggestion checks read the same row for a file, and no other module keeps a table of
file extensions of its own."""

from __future__ import annotations

import ast

import pytest

from bot.code import grammars, languages, queries
from bot.review.context.languages import language_for
from bot.review.findings.suggestions import _comment_style
from tests.project.test_layout import modules


def test_every_grammar_has_a_row_and_every_row_a_known_grammar() -> None:
    named = {row.grammar for row in [*languages.EXTENSIONS.values(), *languages.FILENAMES.values()]}
    assert set(grammars.GRAMMARS) <= named
    assert named - {None} <= set(grammars.GRAMMARS)
    # Each parsed language has its queries: a row whose grammar has none would parse for nothing.
    assert set(grammars.GRAMMARS) <= set(queries.QUERIES)


@pytest.mark.parametrize(
    ("path", "shown", "family", "grammar", "comment"),
    [
        ("src/app.tsx", "typescript", "brace", "tsx", "//"),
        ("lib/x.h", "c", "brace", "c", "//"),
        ("bin/run.sh", "shell", "brace", "bash", "#"),
        ("Rakefile", "ruby", "indent", "ruby", "#"),
        ("db/001.sql", "sql", "none", None, "--"),
        ("deploy/Dockerfile", "dockerfile", "none", None, "#"),
        ("notes.unknown", "text", "auto", None, "//"),
    ],
)
def test_each_reader_sees_the_same_row(
    path: str, shown: str, family: str, grammar: str | None, comment: str
) -> None:
    assert language_for(path) == (shown, family)
    assert grammars.language_of(path) == grammar
    assert _comment_style(path) == comment


def _looks_like_extensions(values: list[str]) -> bool:
    short = [v.lstrip(".") for v in values]
    return (
        len(values) >= 5
        and all(0 < len(v) <= 6 and v.isalnum() for v in short)
        and (
            {"py", "js", "go", "rs", "rb", "java", "ts", "c", "sh", "sql", "yml"} & set(short)
            != set()
        )
    )


def test_no_other_module_keeps_a_table_of_extensions() -> None:
    tables = []
    for name, module in modules().items():
        if name == "bot.code.languages":
            continue
        for node in ast.walk(module.tree):
            if isinstance(node, ast.Dict):
                keys = [k.value for k in node.keys if isinstance(k, ast.Constant)]
            elif isinstance(node, ast.Set | ast.Tuple | ast.List):
                keys = [e.value for e in node.elts if isinstance(e, ast.Constant)]
            else:
                continue
            strings = [k for k in keys if isinstance(k, str)]
            if strings and len(strings) == len(keys) and _looks_like_extensions(strings):
                tables.append(f"{name}:{node.lineno}")
    assert tables == []

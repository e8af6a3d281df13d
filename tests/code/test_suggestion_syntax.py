"""Suggestions that would break a Go, Java, TypeScript or Rust file's syntax are dropped,
judged by the language's tree-sitter grammar on real files of the shared repositories.

Each broken replacement keeps its brackets balanced, so the rough bracket check that
other languages get could not have caught it.
"""

from __future__ import annotations

import pytest

from bot.code.grammars import available, language_of
from bot.review.findings.suggestions import bracket_balance, suggestion_problem
from tests.support.real_repos import checkout

#: (repository, file, a statement line in it, a broken variant, a sound variant).
CASES = [
    ("gin", "context.go", "\t\tc.index++", "\t\tc.index++ +", "\t\tc.index += 1"),
    (
        "jsoup",
        "src/main/java/org/jsoup/helper/DataUtil.java",
        "        return load(file.toPath(), charsetName, baseUri);",
        "        return load(file.toPath(), charsetName, baseUri) +;",
        "        return DataUtil.load(file.toPath(), charsetName, baseUri);",
    ),
    (
        "ky",
        "source/core/Ky.ts",
        "\t\t\treturn errorObject.customDelay ?? this.#calculateDelay();",
        "\t\t\treturn errorObject.customDelay ?? this.#calculateDelay() ?? ;",
        "\t\t\treturn errorObject.customDelay ?? this.#calculateDelay() ?? 0;",
    ),
    (
        "anyhow",
        "src/error.rs",
        "        Error::construct_from_std(error, backtrace)",
        "        Error::construct_from_std(error, backtrace) let",
        "        Self::construct_from_std(error, backtrace)",
    ),
]


@pytest.mark.parametrize(("repository", "path", "line", "broken", "sound"), CASES)
def test_a_suggestion_breaking_the_syntax_is_dropped(
    repository: str, path: str, line: str, broken: str, sound: str
) -> None:
    language = language_of(path)
    assert language is not None
    if not available(language):
        pytest.skip("the parsers extra is not installed: pip install 'gitneural[parsers]'")
    text = (checkout(repository) / path).read_text()
    lines = text.split("\n")
    number = lines.index(line) + 1
    old = [line + "\n"]
    assert bracket_balance(broken) == bracket_balance(line)

    problem = suggestion_problem(path, old, broken + "\n", text, number, number)
    assert problem == f"the file would no longer parse as {language}"
    assert suggestion_problem(path, old, sound + "\n", text, number, number) is None


def test_a_file_that_did_not_parse_keeps_the_bracket_check() -> None:
    if not available("go"):
        pytest.skip("the parsers extra is not installed: pip install 'gitneural[parsers]'")
    text = "package main\n\nfunc main() {\n\tx := \n}\n"
    # The file has a syntax error already: the parser does not judge, the brackets do.
    assert suggestion_problem("main.go", ["}\n"], "\n", text, 5, 5) == (
        "it would unbalance brackets"
    )
    assert suggestion_problem("main.go", ["\tx := \n"], "\tx := 1 +\n", text, 4, 4) is None

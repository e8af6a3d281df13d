"""The maintainers' instructions: the files other tools' users keep, the path-scoped ones
shown only for matching changes, ``[[review.path_instructions]]``, and one limit for all,
whose cuts are named."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.errors import ConfigError
from bot.git.snapshots import TreeSnapshot
from bot.review.context.instructions import front_matter, read_instructions
from bot.settings.repository import PathInstruction, parse_config
from tests.support.repos import commit, make_repo


def test_front_matter_in_the_forms_copilot_and_cursor_write() -> None:
    meta, body = front_matter('---\napplyTo: "src/**/*.ts,**/*.tsx"\n---\nUse strict mode.\n')
    assert meta == {"applyTo": "src/**/*.ts,**/*.tsx"} and body == "Use strict mode.\n"
    meta, _ = front_matter("---\nglobs: [a.py, 'b/*.py']\nalwaysApply: false\n---\nx")
    assert meta == {"globs": ["a.py", "b/*.py"], "alwaysApply": "false"}
    meta, _ = front_matter("---\nglobs:\n  - a.py\n  - b.py\n---\nx")
    assert meta["globs"] == ["a.py", "b.py"]
    assert front_matter("No front matter.\n---\n") == ({}, "No front matter.\n---\n")
    assert front_matter("---\nunclosed: yes\n") == ({}, "---\nunclosed: yes\n")


@pytest.fixture
def trusted(tmp_path: Path) -> TreeSnapshot:
    repo = make_repo(tmp_path / "r")
    head = commit(
        repo,
        {
            "AGENTS.md": "Agents.\n",
            "CLAUDE.md": "Claude.\n",
            ".github/instructions/api.instructions.md": "---\napplyTo: 'api/**'\n---\nAPI rule.\n",
            ".github/instructions/bad.instructions.md": "---\napplyTo: '[z-a'\n---\nNever.\n",
            ".github/instructions/notes.md": "---\napplyTo: '**'\n---\nNot an instructions file.\n",
            ".cursor/rules/ui.mdc": "---\nglobs: ui/*.tsx\n---\nUI rule.\n",
        },
    )
    return TreeSnapshot(repo, head)


def test_scoped_files_and_path_rules_follow_the_change_s_paths(trusted: TreeSnapshot) -> None:
    rules = [PathInstruction(("*.sql",), "SQL rule."), PathInstruction(("api/**",), "More API.")]
    names = ["AGENTS.md", "CLAUDE.md"]
    api = read_instructions(
        trusted, names, 10_000, paths={"api/v1/x.py"}, scoped=True, path_rules=rules
    )
    assert "Agents." in api.text and "Claude." in api.text
    assert "API rule." in api.text and "More API." in api.text
    assert "UI rule." not in api.text and "SQL rule." not in api.text and "Never." not in api.text
    assert "Not an instructions file." not in api.text
    ui = read_instructions(trusted, names, 10_000, paths={"ui/App.tsx"}, scoped=True)
    assert "UI rule." in ui.text and "API rule." not in ui.text
    off = read_instructions(trusted, names, 10_000, paths={"ui/App.tsx"}, scoped=False)
    assert "UI rule." not in off.text
    assert api.cut == [] and api.summary_note() == ""


def test_one_limit_for_all_and_what_it_cut_is_named(trusted: TreeSnapshot) -> None:
    found = read_instructions(
        trusted, ["AGENTS.md", "CLAUDE.md"], 10, paths={"api/a.py"}, scoped=True
    )
    assert "Agents." in found.text
    assert found.cut == [
        "CLAUDE.md cut (3 of 7 characters)",
        ".github/instructions/api.instructions.md (applies to api/**) left out",
    ]
    assert found.summary_note().startswith("Instructions over the limit (instructions_max_chars): ")


def test_path_instructions_in_the_settings_file() -> None:
    config = parse_config(
        '[[review.path_instructions]]\npaths = ["db/**", "*.sql"]\ntext = "Migrations."\n'
    )
    assert config.review.path_instructions == [PathInstruction(("db/**", "*.sql"), "Migrations.")]
    for bad, why in (
        ('[review]\npath_instructions = ["x"]', "must be a list of tables"),
        ('[[review.path_instructions]]\npaths = []\ntext = "x"', r"paths must be a non-empty"),
        ('[[review.path_instructions]]\npaths = ["a"]\ntext = ""', r"text must be a non-empty"),
        ('[[review.path_instructions]]\npaths = ["a"]\ntext = "x"\nglob = 1', "unknown key"),
    ):
        with pytest.raises(ConfigError, match=why):
            parse_config(bad)

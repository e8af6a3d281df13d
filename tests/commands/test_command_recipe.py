"""CONTRIBUTING.md's recipe for a comment command holds for every registered one: its docs
row says what the registry says, its metrics kind is one the metrics know, ``/help`` lists
it, and its handler is where the recipe puts it."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

from bot.commands import Command, commands
from bot.commands.help import listing
from bot.metrics.catalog import JOB_KINDS

ROOT = Path(__file__).resolve().parents[2]
DOCS = (ROOT / "docs" / "pull-request-commands.md").read_text(encoding="utf-8")
RECIPE = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")


def _row(command: Command) -> str:
    usage = command.usage.replace("|", "\\|")  # a pipe in a Markdown table cell is escaped
    uses = "yes" if command.needs_model else "no"
    return f"| `{usage}` | {command.summary} | {uses} |"


@pytest.mark.parametrize("name", sorted(commands()))
def test_every_command_has_its_docs_row_and_example(name: str) -> None:
    command = commands()[name]
    assert _row(command) in DOCS.splitlines()
    assert f"\n{command.example}\n" in DOCS


@pytest.mark.parametrize("name", sorted(commands()))
def test_every_command_is_counted_and_listed_by_help(name: str) -> None:
    command = commands()[name]
    assert command.metric in JOB_KINDS
    assert command.usage in [line.usage for line in listing()]


@pytest.mark.parametrize("name", sorted(commands()))
def test_every_command_lives_where_the_recipe_says(name: str) -> None:
    command = commands()[name]
    module = inspect.getmodule(command.parse)
    assert module is not None and module.__name__ == f"bot.commands.{name}"
    if command.handle is not None:
        handler = inspect.getmodule(command.handle)
        assert handler is not None
        assert handler.__name__.startswith(("bot.commands.", "bot.usecases.conversation."))


def test_the_recipe_names_the_helpers_the_handlers_share() -> None:
    for words in ("run.open_on_pr()", "run.ready_for_model(pull)", "run.post_answer(body)"):
        assert words in RECIPE
    from bot.usecases.conversation.thread_run import ConversationRun

    for method in ("open_on_pr", "ready_for_model", "post_answer"):
        assert callable(getattr(ConversationRun, method))

"""The configuration reference is generated from the settings' definitions: every setting
of ``bot/settings/repository.py`` and every server setting of ``bot/settings/server.py`` is
described there, and the committed page is what they render."""

from __future__ import annotations

import dataclasses
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from bot.render.settings.reference import (
    main,
    render_env,
    render_page,
    render_toml,
    sections,
    undocumented,
    undocumented_env,
)
from bot.settings.repository import Config, parse_config
from bot.settings.server import SERVER_SETTINGS, ServerSetting
from tests.support.paths import ROOT

PAGE = ROOT / "docs" / "configuration.md"


def test_every_setting_has_a_description() -> None:
    assert undocumented(sections()) == []


def test_the_committed_page_is_the_generated_one() -> None:
    assert PAGE.read_text("utf-8") == render_page(sections()), (
        "docs/configuration.md is stale: run python -m bot.render.settings.reference"
    )


def test_the_page_covers_every_setting_of_every_section() -> None:
    text = PAGE.read_text("utf-8")
    for part in dataclasses.fields(Config):
        assert f"## `[{part.name}]`" in text
        for setting in dataclasses.fields(getattr(Config(), part.name)):
            assert f"| `{setting.name}` |" in text, f"{part.name}.{setting.name}"


def test_every_server_setting_has_a_description() -> None:
    assert undocumented_env(SERVER_SETTINGS) == []


def test_the_page_lists_every_server_setting_with_who_needs_it() -> None:
    text = PAGE.read_text("utf-8")
    rows = {line.split(" | ")[0]: line for line in text.splitlines() if line.startswith("| `")}
    for setting in SERVER_SETTINGS:
        row = next((r for k, r in rows.items() if k.startswith(f"| `{setting.name}`")), None)
        assert row is not None, setting.name
        for role in setting.required_for:
            assert f"`{role}`" in row, (setting.name, role)
    # The model key names the other variable that stands for it, which has no row.
    assert "| `KIMI_API_KEY` or `MOONSHOT_API_KEY` |" in text


def test_an_undescribed_server_setting_is_named_and_fails_the_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    blank = ServerSetting("GITNEURAL_SOMETHING_NEW", "1", " ", group="operations")
    table = (*SERVER_SETTINGS, blank)
    assert undocumented_env(table) == ["GITNEURAL_SOMETHING_NEW"]
    monkeypatch.setattr("bot.render.settings.reference.SERVER_SETTINGS", table)
    assert main(["--output", str(tmp_path / "configuration.md")]) == 1
    assert "GITNEURAL_SOMETHING_NEW" in capsys.readouterr().err
    assert not (tmp_path / "configuration.md").exists()


def test_server_settings_are_grouped_in_table_order() -> None:
    table = (
        ServerSetting("B_FIRST", "", "In group b.", ("web",), group="b"),
        ServerSetting("A_SECOND", "x", "In group a.", group="a"),
        ServerSetting("B_THIRD", "", "In group b again.", group="b"),
    )
    text = render_env(table)
    assert text.index("### B") < text.index("### A")
    assert text.index("`B_FIRST`") < text.index("`B_THIRD`") < text.index("### A")
    assert "| `B_FIRST` | — | `web` | In group b. |" in text
    assert "| `A_SECOND` | `x` | — | In group a. |" in text


def test_the_defaults_shown_are_the_defaults_the_code_uses() -> None:
    # The page's TOML block, read by the real parser, is exactly the default settings.
    assert parse_config(render_toml(sections())) == Config()
    assert tomllib.loads(render_toml(sections()))["hook"]["effort"] == "low"


@dataclass
class _Quiet:
    """A section whose second setting nobody described."""

    #: Described.
    loud: bool = True
    quiet: int = 3


@dataclass
class _NoDocstring:
    #: Described.
    names: list[str] = field(default_factory=list)


@dataclass
class _Settings:
    quiet: _Quiet = field(default_factory=_Quiet)
    bare: _NoDocstring = field(default_factory=_NoDocstring)


def test_an_undescribed_setting_or_section_is_named() -> None:
    found = sections(_Settings)
    assert undocumented(found) == ["[bare]", "quiet.quiet"]
    [loud, quiet] = found[0].settings
    assert (loud.description, loud.default) == ("Described.", "true")
    assert loud.kind == "`true` or `false`"
    assert quiet.description == ""


def test_check_mode_fails_on_a_stale_page(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stale = tmp_path / "configuration.md"
    stale.write_text("# Configuration reference\n", "utf-8")
    assert main(["--check", "--output", str(stale)]) == 1
    assert "stale" in capsys.readouterr().err
    assert main(["--output", str(stale)]) == 0
    assert main(["--check", "--output", str(stale)]) == 0
    assert stale.read_text("utf-8") == PAGE.read_text("utf-8")

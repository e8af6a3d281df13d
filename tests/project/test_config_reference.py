"""The configuration reference is generated from the settings' definitions: every setting
of ``bot/config.py`` is described there, and the committed page is what they render."""

from __future__ import annotations

import dataclasses
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from bot.config import Config, parse_config
from bot.render.config_reference import main, render_page, render_toml, sections, undocumented
from tests.support.paths import ROOT

PAGE = ROOT / "docs" / "configuration.md"


def test_every_setting_has_a_description() -> None:
    assert undocumented(sections()) == []


def test_the_committed_page_is_the_generated_one() -> None:
    assert PAGE.read_text("utf-8") == render_page(sections()), (
        "docs/configuration.md is stale: run python -m bot.render.config_reference"
    )


def test_the_page_covers_every_setting_of_every_section() -> None:
    text = PAGE.read_text("utf-8")
    for part in dataclasses.fields(Config):
        assert f"## `[{part.name}]`" in text
        for setting in dataclasses.fields(getattr(Config(), part.name)):
            assert f"| `{setting.name}` |" in text, f"{part.name}.{setting.name}"


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

"""``gitneural init``: the settings file made from the settings' definitions, the hook's
entry and the workflow, in a real repository; what exists is kept, ``--force`` replaces
it and keeps the old file."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest
import yaml

from bot import __version__
from bot.render.settings.init_file import default_settings_file, sections
from bot.settings.repository import Config, load_config_file, parse_config
from tests.cli.test_cli_review import run_cli
from tests.support.paths import ROOT
from tests.support.repos import commit, make_repo

SETTING_LINE = re.compile(r"^# ([a-z_]+) = (.+)$")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    commit(make_repo(tmp_path / "repo"), {"README.md": "hello\n"}, "initial")
    return tmp_path / "repo"


def _parts() -> list[type]:
    defaults = Config()
    return [type(getattr(defaults, f.name)) for f in dataclasses.fields(Config)]


def _uncommented(text: str) -> str:
    return "\n".join(SETTING_LINE.sub(r"\1 = \2", line) for line in text.splitlines())


def test_the_settings_file_names_every_setting_at_its_default(repo: Path) -> None:
    done = run_cli(["init"], repo)
    assert done.returncode == 0, done.stderr
    assert "writing .gitneural.toml" in done.stderr
    written = (repo / ".gitneural.toml").read_text()
    assert load_config_file(repo / ".gitneural.toml") == Config()
    # Every line uncommented: still the defaults, so every value shown is the default.
    assert parse_config(_uncommented(written)) == Config()
    shown = {m[1] for line in written.splitlines() if (m := SETTING_LINE.match(line))}
    every = {f.name for part in _parts() for f in dataclasses.fields(part)}
    assert shown == every
    # The definitions' comments come along: e.g. the stall limit's.
    assert "# Seconds without a byte from the model" in written
    assert written == default_settings_file()


def test_a_setting_added_to_the_definitions_appears_in_the_file() -> None:
    """Generated, not copied: what ``sections`` reads is the dataclasses themselves."""
    names = [(s.name, [x.name for x in s.settings]) for s in sections()]
    assert names == [
        (name, [f.name for f in dataclasses.fields(part)])
        for name, part in zip([f.name for f in dataclasses.fields(Config)], _parts(), strict=True)
    ]


def test_hook_and_action_write_the_entry_and_the_workflow(repo: Path) -> None:
    done = run_cli(["init", "--hook", "--action"], repo)
    assert done.returncode == 0, done.stderr
    said = [line for line in done.stderr.splitlines() if line.startswith("gitneural: writing")]
    assert [line.split()[2] for line in said] == [
        ".gitneural.toml",
        ".pre-commit-config.yaml",
        ".github/workflows/gitneural.yml",
    ]
    config = yaml.safe_load((repo / ".pre-commit-config.yaml").read_text())
    [entry] = config["repos"]
    assert entry["rev"] == f"v{__version__}" and entry["hooks"] == [{"id": "gitneural"}]
    workflow = (repo / ".github/workflows/gitneural.yml").read_text()
    assert f"gitneural/gitneural@v{__version__}" in workflow
    assert yaml.safe_load(workflow)["jobs"]["review"]["steps"][0]["with"]["kimi-api-key"]


def test_the_workflow_is_the_documented_one() -> None:
    packaged = (ROOT / "bot/cli/templates/gitneural-workflow.yml").read_text()
    documented = (ROOT / "docs/github-action-workflow.yml").read_text()
    assert packaged == documented


def test_an_existing_pre_commit_config_is_appended_to(repo: Path) -> None:
    mine = "default_stages: [pre-commit]\nrepos:\n- repo: local\n  hooks: []\n"
    (repo / ".pre-commit-config.yaml").write_text(mine)
    done = run_cli(["init", "--hook"], repo)
    assert done.returncode == 0, done.stderr
    text = (repo / ".pre-commit-config.yaml").read_text()
    assert text.startswith(mine)
    config = yaml.safe_load(text)
    assert config["repos"][0]["repo"] == "local"
    assert config["repos"][1]["hooks"] == [{"id": "gitneural"}]
    again = run_cli(["init", "--hook", "--force"], repo)
    assert again.returncode == 0, again.stderr
    assert "already runs GitNeural's hook" in again.stderr
    assert (repo / ".pre-commit-config.yaml").read_text() == text  # never twice


def test_what_exists_is_kept_and_what_is_missing_is_added(repo: Path) -> None:
    mine = "[review]\neffort = 'low'\n"
    (repo / ".gitneural.toml").write_text(mine)
    done = run_cli(["init", "--action"], repo)
    assert done.returncode == 0, done.stderr
    assert ".gitneural.toml exists already: kept as you wrote it" in done.stderr
    assert (repo / ".gitneural.toml").read_text() == mine
    assert (repo / ".github" / "workflows" / "gitneural.yml").is_file()
    again = run_cli(["init", "--action"], repo)
    assert again.returncode == 0, again.stderr
    assert "gitneural.yml is already what init writes" in again.stderr
    assert "nothing to write" in again.stderr


def test_init_then_init_hook_adds_the_hook_and_keeps_the_edited_settings(repo: Path) -> None:
    assert run_cli(["init"], repo).returncode == 0
    edited = (repo / ".gitneural.toml").read_text() + "\n[review]\neffort = 'high'\n"
    (repo / ".gitneural.toml").write_text(edited)
    done = run_cli(["init", "--hook"], repo)
    assert done.returncode == 0, done.stderr
    assert (repo / ".gitneural.toml").read_text() == edited
    hooks = yaml.safe_load((repo / ".pre-commit-config.yaml").read_text())
    assert hooks["repos"][0]["hooks"] == [{"id": "gitneural"}]


def test_force_says_what_it_replaces_and_keeps_the_old_file(repo: Path) -> None:
    mine = "[review]\neffort = 'low'\n"
    (repo / ".gitneural.toml").write_text(mine)
    forced = run_cli(["init", "--force"], repo)
    assert forced.returncode == 0, forced.stderr
    assert "replacing .gitneural.toml (--force); the old one is kept as .gitneural.toml.bak" in (
        forced.stderr
    )
    assert (repo / ".gitneural.toml.bak").read_text() == mine
    assert load_config_file(repo / ".gitneural.toml") == Config()


def test_init_writes_at_the_top_of_the_repository_only(repo: Path) -> None:
    (repo / "src").mkdir()
    before = sorted(p.relative_to(repo) for p in repo.rglob("*") if ".git" not in p.parts)
    done = run_cli(["init"], repo / "src")
    assert done.returncode == 0, done.stderr
    after = sorted(p.relative_to(repo) for p in repo.rglob("*") if ".git" not in p.parts)
    assert sorted(set(after) - set(before)) == [Path(".gitneural.toml")]

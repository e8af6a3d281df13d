"""One version: ``bot/__init__.py`` holds it, the package metadata reads it, and every
example that names a release (the pre-commit snippet's ``rev:``, a workflow's ``uses:``)
names the tag of that version."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import bot
from tests.support.paths import ROOT

TAG = f"v{bot.__version__}"
#: Where a newcomer copies a version from; each must name at least one.
MUST_NAME_IT = (
    "README.md",
    "docs/getting-started.md",
    "docs/hook.md",
    "docs/action.md",
    "docs/github-action-workflow.yml",
    # What `gitneural init --action` writes.
    "bot/cli/templates/gitneural-workflow.yml",
    "action.yml",
    ".pre-commit-hooks.yaml",
)
REFERENCES = (
    re.compile(r"gitneural/gitneural@([\w.\-]+)"),  # a workflow step's uses:
    re.compile(r"^\W*rev:\s*([\w.\-<>]+)", re.MULTILINE),  # a pre-commit snippet's rev:
)


def _documents() -> list[Path]:
    found = [ROOT / name for name in MUST_NAME_IT]
    found += [*sorted((ROOT / "docs").glob("*.md")), ROOT / "CONTRIBUTING.md"]
    return sorted(set(found))


def _named(path: Path) -> list[str]:
    text = path.read_text("utf-8")
    return [m[1] for pattern in REFERENCES for m in pattern.finditer(text)]


def test_the_version_is_one_semantic_version_read_by_the_package() -> None:
    assert re.fullmatch(r"\d+\.\d+\.\d+", bot.__version__)
    project = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))
    assert "version" not in project["project"], "pyproject.toml must not hold a version"
    assert "version" in project["project"]["dynamic"]
    dynamic = project["tool"]["setuptools"]["dynamic"]["version"]
    assert dynamic == {"attr": "bot.__version__"}


def test_every_example_names_the_version() -> None:
    for name in MUST_NAME_IT:
        assert _named(ROOT / name), f"{name} names no release"
    wrong = {
        f"{path.relative_to(ROOT)}: {ref}" for path in _documents() for ref in _named(path)
    } - {f"{path.relative_to(ROOT)}: {TAG}" for path in _documents()}
    assert not wrong, f"these name another release than {TAG}: {sorted(wrong)}"


def test_the_changelog_has_the_version() -> None:
    changelog = (ROOT / "CHANGELOG.md").read_text("utf-8")
    assert "## [Unreleased]" in changelog
    heading = rf"^## \[{re.escape(bot.__version__)}\] - \d{{4}}-\d{{2}}-\d{{2}}$"
    assert re.search(heading, changelog, re.MULTILINE)


def test_the_changelogs_newest_release_is_the_version() -> None:
    """`--version` and the pins name the changelog's newest release: what a user installs
    from the tag is what the changelog says it holds."""
    released = re.findall(r"^## \[(\d+\.\d+\.\d+)\] - \d{4}-\d{2}-\d{2}$", _changelog(), re.M)
    assert released and released[0] == bot.__version__


def _changelog() -> str:
    return (ROOT / "CHANGELOG.md").read_text("utf-8")

"""What enters the image: the build context ``.dockerignore`` leaves (Docker's and Podman's
rules: patterns from the context's root, ``**`` for any depth, a directory excluded with
everything in it, ``!`` re-including, the last match winning) holds what ``pip install
'.[app]'`` needs and no settings file, key, ``.git`` or ``.venv``; and git ignores the
settings a newcomer writes in the clone."""

from __future__ import annotations

import re
import subprocess
from functools import cache

import pytest
import yaml

from tests.support.paths import ROOT

#: Files a user's clone holds that must never reach a layer of the image.
SECRET_PLACES = (
    "deploy/gitneural.env",
    "gitneural.env",
    "config/production.env",
    "gitneural-app.2026-12-06.private-key.pem",
    ".git/config",
    ".venv/bin/python",
    "tests/fixtures/webhooks/x.json",
)


def _regex(pattern: str) -> re.Pattern[str]:
    out, i = "", 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out, i = out + "(?:.*/)?", i + 3
        elif pattern.startswith("**", i):
            out, i = out + ".*", i + 2
        elif pattern[i] == "*":
            out, i = out + "[^/]*", i + 1
        elif pattern[i] == "?":
            out, i = out + "[^/]", i + 1
        else:
            out, i = out + re.escape(pattern[i]), i + 1
    return re.compile(out)


@cache
def _rules() -> list[tuple[bool, re.Pattern[str]]]:
    rules = []
    for raw in (ROOT / ".dockerignore").read_text().splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        keep = line.startswith("!")
        rules.append((keep, _regex(line.lstrip("!").strip("/"))))
    return rules


def in_context(path: str) -> bool:
    """Whether ``path`` (relative to the context's root) is sent to the builder."""
    parts = path.split("/")
    prefixes = ["/".join(parts[: n + 1]) for n in range(len(parts))]
    included = True
    for keep, rule in _rules():
        if any(rule.fullmatch(prefix) for prefix in prefixes):
            included = keep
    return included


@pytest.mark.parametrize("path", SECRET_PLACES)
def test_no_settings_file_key_git_or_venv_enters_the_image(path: str) -> None:
    assert not in_context(path)


def test_the_context_holds_what_the_install_needs() -> None:
    tracked = subprocess.run(
        ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    context = {p for p in tracked if in_context(p)}
    for needed in ("pyproject.toml", "README.md", "LICENSE", "bot/__init__.py", "bot/gh/app.yml"):
        assert needed in context
    assert any(p.startswith("prompts/") for p in context)
    assert any(p.startswith("workers/schedule/lua/") for p in context)
    assert not [p for p in context if p.endswith((".env", ".pem"))]
    assert not [p for p in context if p.startswith("tests/")]


@pytest.mark.parametrize("path", SECRET_PLACES[:4])
def test_git_ignores_the_settings_files_a_newcomer_writes(path: str) -> None:
    ignored = subprocess.run(["git", "check-ignore", "-q", "--no-index", path], cwd=ROOT)
    assert ignored.returncode == 0, f"{path} is not ignored by .gitignore"


def test_compose_reads_the_settings_from_outside_the_clone() -> None:
    compose = yaml.safe_load((ROOT / "deploy" / "compose.yaml").read_text())
    [env_file] = compose["x-gitneural"]["env_file"]
    assert env_file.startswith("${GITNEURAL_ENV_FILE:?")  # required, no default in the clone

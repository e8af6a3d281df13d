"""The six real repositories of the shared fixtures, cloned for tests and benchmarks, and
Universal Ctags, the independent judge of where their definitions and scopes are, and the
tree-sitter grammars the tests of those need.

The bundles live outside the project (``shared/fixtures/repos/*.bundle`` beside the
checkout's parent folders or those of the checkout it was cloned from, or
``$GITNEURAL_REPO_BUNDLES``): their code is data for the
tests, never copied into GitNeural. A bundle is cloned once per process into a temporary
folder. Ctags is Debian's ``universal-ctags``, installed by the set-up when missing (as
root, the way :mod:`tests.support.browser` installs Chromium). Where either cannot be had
the test is skipped with a reason, except under ``CI=true``, where it fails.
"""

from __future__ import annotations

import atexit
import fcntl
import functools
import json
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.paths import ROOT

CTAGS = "ctags"
REPOSITORIES = ("gin", "ky", "jsoup", "anyhow", "sinatra", "cJSON")


def _unavailable(message: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(message)
    pytest.skip(message)


NO_PARSERS = "the parsers extra is not installed: pip install 'gitneural[parsers]'"


def require_grammars(*languages: str) -> None:
    """Skip (fail under ``CI=true``) unless every one of ``languages`` has its tree-sitter
    grammar here (the ``parsers`` extra)."""
    from bot.code.grammars import available

    missing = [language for language in languages if not available(language)]
    if missing:
        _unavailable(f"{NO_PARSERS} (no grammar for {', '.join(missing)})")


def _origin() -> Path | None:
    """The checkout this one was cloned from, when it is a folder on this machine: a
    fresh clone made elsewhere (CI's, a temporary one) finds the fixtures beside it."""
    done = subprocess.run(
        ["git", "config", "--get", "remote.origin.url"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    url = done.stdout.strip().removeprefix("file://")
    return Path(url) if done.returncode == 0 and url.startswith("/") else None


def bundles_dir() -> Path | None:
    configured = os.environ.get("GITNEURAL_REPO_BUNDLES")
    if configured:
        return Path(configured)
    origin = _origin()
    starts = [ROOT, *([origin] if origin is not None else [])]
    for parent in (p for start in starts for p in start.parents):
        candidate = parent / "shared" / "fixtures" / "repos"
        if (candidate / "gin.bundle").exists():
            return candidate
    return None


@functools.cache
def _clones() -> Path:
    path = Path(tempfile.mkdtemp(prefix="gn-real-repos-"))
    atexit.register(shutil.rmtree, path, True)
    return path


@functools.cache
def checkout(name: str) -> Path:
    """A clone of the shared bundle ``name`` (at its head), made once per process."""
    bundles = bundles_dir()
    bundle = bundles / f"{name}.bundle" if bundles else None
    if bundle is None or not bundle.exists():
        _unavailable(
            f"the shared repository bundle {name}.bundle is not here: set "
            "GITNEURAL_REPO_BUNDLES to the folder holding shared/fixtures/repos/*.bundle"
        )
    assert bundle is not None
    target = _clones() / name
    subprocess.run(
        ["git", "clone", "--quiet", str(bundle), str(target)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    return target


def ensure_ctags() -> None:
    """Install Debian's ``universal-ctags`` when ``ctags`` is missing (root only)."""
    lock_path = Path(tempfile.gettempdir(), "gitneural-ctags.lock")
    with lock_path.open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if shutil.which(CTAGS):
            return
        if os.geteuid() != 0 or shutil.which("apt-get") is None:
            _unavailable(
                "Universal Ctags is not installed, and this user cannot run apt-get: "
                "`apt-get install -y universal-ctags` (as root)"
            )
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        install = ["apt-get", "install", "-y", "--no-install-recommends", "universal-ctags"]
        done = subprocess.run(install, env=env, capture_output=True, text=True, timeout=900)
        if done.returncode != 0:
            subprocess.run(["apt-get", "update"], env=env, capture_output=True, timeout=600)
            done = subprocess.run(install, env=env, capture_output=True, text=True, timeout=900)
        if done.returncode != 0 or not shutil.which(CTAGS):
            _unavailable(f"apt-get install universal-ctags failed: {done.stderr.strip()[-300:]}")


@dataclass(frozen=True)
class Tag:
    path: str
    name: str
    kind: str
    line: int
    end: int


def ctags_scopes(root: Path, language: str, kinds: frozenset[str]) -> list[Tag]:
    """Ctags' definitions of ``kinds`` with an end line, in the files of ``language``
    (ctags' name for it: ``Go``, ``Java`` …) under ``root``."""
    ensure_ctags()
    command = [CTAGS, "-R", f"--languages={language}", "--fields=+ne", "--output-format=json"]
    done = subprocess.run(
        [*command, "-f", "-", "."],
        cwd=root,
        check=True,
        capture_output=True,
        text=True,
        timeout=300,
    )
    tags: list[Tag] = []
    for row in done.stdout.splitlines():
        tag = json.loads(row)
        if tag.get("_type") == "tag" and tag["kind"] in kinds and "end" in tag:
            path = str(tag["path"]).removeprefix("./")
            tags.append(Tag(path, tag["name"], tag["kind"], int(tag["line"]), int(tag["end"])))
    return tags

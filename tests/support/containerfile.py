"""``deploy/Containerfile`` read as a container engine reads it (continuations joined,
comments dropped), so a test can run what the file says: its install commands in a fresh
virtual environment, its ``ENV``, its start command and its health check.

No container engine runs on these machines: the commands that set up the image's system
(a user, directories) are left out; those that install GitNeural (``pip install``) run
with the virtual environment's ``pip`` first on the ``PATH``, in a copy of the build
context (the repository as git knows it).
"""

from __future__ import annotations

import json
import shlex
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from tests.support.paths import ROOT

CONTAINERFILE = ROOT / "deploy" / "Containerfile"


@dataclass
class Containerfile:
    base: str = ""
    run: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    cmd: list[str] = field(default_factory=list)
    healthcheck: list[str] = field(default_factory=list)
    user: str = ""

    @property
    def install_commands(self) -> list[str]:
        return [command for command in self.run if "pip install" in command]


def _instructions(text: str) -> list[tuple[str, str]]:
    lines, current = [], ""
    for raw in text.splitlines():
        if raw.lstrip().startswith("#") and not current:
            continue
        if raw.rstrip().endswith("\\"):
            current += raw.rstrip()[:-1] + " "
            continue
        current += raw
        if current.strip():
            lines.append(current.strip())
        current = ""
    result = []
    for line in lines:
        word, _, rest = line.partition(" ")
        result.append((word.upper(), rest.strip()))
    return result


def _exec_form(rest: str) -> list[str]:
    value = json.loads(rest)
    assert isinstance(value, list) and all(isinstance(v, str) for v in value), rest
    return value


def read_containerfile(path: Path = CONTAINERFILE) -> Containerfile:
    parsed = Containerfile()
    for word, rest in _instructions(path.read_text()):
        if word == "FROM":
            parsed.base = rest
        elif word == "RUN":
            parsed.run.append(rest)
        elif word == "ENV":
            for pair in shlex.split(rest):
                name, _, value = pair.partition("=")
                parsed.env[name] = value
        elif word == "CMD":
            parsed.cmd = _exec_form(rest)
        elif word == "USER":
            parsed.user = rest
        elif word == "HEALTHCHECK":
            _options, _, command = rest.partition("CMD ")
            assert command, f"HEALTHCHECK without CMD: {rest}"
            parsed.healthcheck = _exec_form(command.strip())
    return parsed


def build_context(dest: Path) -> Path:
    """The repository's files as git knows them (a clean clone's), copied to ``dest``."""
    files = (
        subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True)
        .stdout.decode()
        .split("\0")
    )
    for name in filter(None, files):
        source = ROOT / name
        target = dest / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_file():
            target.write_bytes(source.read_bytes())  # a symlink's target, as COPY does
    return dest

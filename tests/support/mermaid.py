"""Mermaid's own parser, for the tests of GitNeural's diagram checker: the ``mermaid``
npm package (version 11) run by Node, ``mermaid.parse`` on each diagram.

The package is installed by the test set-up itself when missing (``npm install`` into a
cache directory, ``$GITNEURAL_TEST_CACHE`` or ``~/.cache/gitneural-tests``); where Node
or npm is missing, or the install fails, the test is skipped with a reason saying how to
provide them, except under ``CI=true``, where it fails.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

import pytest

VERSION = "11"
#: Reads a JSON list of diagrams on stdin; prints, for each, null or Mermaid's error.
SCRIPT = """import mermaid from 'mermaid';
import { readFileSync } from 'node:fs';
const out = [];
for (const text of JSON.parse(readFileSync(0, 'utf8'))) {
  try { await mermaid.parse(text); out.push(null); }
  catch (e) { out.push(String((e && e.message) || e).split('\\n')[0] || 'error'); }
}
console.log(JSON.stringify(out));
"""


def _unavailable(reason: str) -> None:
    message = f"Mermaid's parser is not available ({reason}): install node and npm"
    if os.environ.get("CI") == "true":
        pytest.fail(message)
    pytest.skip(message)


def mermaid_dir() -> Path:
    """A directory with the ``mermaid`` package and the parsing script, made once."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        _unavailable("no node or npm on PATH")
    cache = Path(os.environ.get("GITNEURAL_TEST_CACHE") or Path.home() / ".cache/gitneural-tests")
    root = cache / f"mermaid-{VERSION}"
    root.mkdir(parents=True, exist_ok=True)
    with (root / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # parallel test processes install once
        if not (root / "node_modules" / "mermaid" / "package.json").is_file():
            (root / "package.json").write_text('{"name": "mermaid-check", "private": true}\n')
            done = subprocess.run(
                [str(npm), "install", "--no-audit", "--no-fund", f"mermaid@{VERSION}"],
                cwd=root,
                capture_output=True,
                text=True,
                timeout=600,
                check=False,
            )
            if done.returncode != 0:
                _unavailable(f"npm install mermaid@{VERSION} failed: {done.stderr[-300:]}")
        (root / "check.mjs").write_text(SCRIPT)
    return root


def mermaid_errors(diagrams: Sequence[str]) -> list[str | None]:
    """Mermaid's verdict on each diagram: None when it parses, else its error's first line."""
    root = mermaid_dir()
    done = subprocess.run(
        ["node", "check.mjs"],
        cwd=root,
        input=json.dumps(list(diagrams)),
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    found: list[str | None] = json.loads(done.stdout.strip().splitlines()[-1])
    assert len(found) == len(diagrams)
    return found

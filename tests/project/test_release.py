"""The release pipeline in the repository: the workflow a `v*` tag starts is valid for
GitHub, publishes by trusted publishing (no stored token) and pushes the image."""

from __future__ import annotations

import re
import subprocess
import sys
from typing import Any

import yaml

from tests.support.paths import ROOT

WORKFLOW = ROOT / ".github" / "workflows" / "release.yml"


def _workflow() -> dict[Any, Any]:
    loaded = yaml.safe_load(WORKFLOW.read_text("utf-8"))
    assert isinstance(loaded, dict)
    return loaded


def test_the_release_workflow_validates_against_githubs_schema() -> None:
    schema = ["--builtin-schema", "vendor.github-workflows"]
    checked = subprocess.run(
        [sys.executable, "-m", "check_jsonschema", *schema, str(WORKFLOW)],
        capture_output=True,
        text=True,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_a_v_tag_publishes_to_pypi_by_trusted_publishing_and_pushes_the_image() -> None:
    flow = _workflow()
    # PyYAML reads the key `on` as True (YAML 1.1).
    assert flow[True] == {"push": {"tags": ["v*"]}}
    assert flow["permissions"] == {"contents": "read"}
    jobs = flow["jobs"]
    build = [step.get("run", "") for step in jobs["build"]["steps"]]
    assert "python -m build" in build and "python -m twine check --strict dist/*" in build
    pypi = jobs["pypi"]
    assert pypi["permissions"] == {"id-token": "write"} and pypi["needs"] == "build"
    [publish] = [s for s in pypi["steps"] if "gh-action-pypi-publish" in s.get("uses", "")]
    assert "with" not in publish  # no password, no token: PyPI trusts the workflow
    image = jobs["image"]
    assert image["permissions"]["packages"] == "write"
    [push] = [s for s in image["steps"] if "build-push-action" in s.get("uses", "")]
    assert push["with"]["file"] == "deploy/Containerfile" and push["with"]["push"] is True
    assert "ghcr.io/${{ github.repository }}:" in push["with"]["tags"]


def test_until_a_release_is_on_pypi_every_install_command_works_from_a_clone() -> None:
    # No release is on PyPI yet: an install by name fails for a newcomer. Every install
    # command the docs give takes a clone (".", "'.[app]'") or a git URL; one by name is
    # allowed only beside the words that say it waits for the release.
    by_name = re.compile(r"pip[x]? install (-\S+ )*'?gitneural(\[[a-z,]+\])?'?(?!\S* @ git\+)")
    wrong = []
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
            if by_name.search(line) and "PyPI" not in line and "released" not in line:
                wrong.append(f"{page.relative_to(ROOT)}:{number}: {line.strip()}")
    assert wrong == []

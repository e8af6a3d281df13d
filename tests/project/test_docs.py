"""The docs site builds with ``mkdocs build --strict`` (a broken link, a broken anchor or
a page left out of the nav fails it), and the README stays a page that links into it."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.support.paths import ROOT

README_MAX_LINES = 200


def mkdocs_build(project: Path, site: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
        # Material's banner about its future says nothing about this site.
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )


def _nav_pages(nav: object) -> list[str]:
    if isinstance(nav, str):
        return [nav]
    if isinstance(nav, list):
        return [page for item in nav for page in _nav_pages(item)]
    if isinstance(nav, dict):
        return [page for item in nav.values() for page in _nav_pages(item)]
    return []


def test_the_site_builds_strictly(tmp_path: Path) -> None:
    done = mkdocs_build(ROOT, tmp_path / "site")
    assert done.returncode == 0, done.stderr[-4000:]
    nav = _nav_pages(yaml.safe_load((ROOT / "mkdocs.yml").read_text("utf-8"))["nav"])
    for page in nav:
        built = tmp_path / "site" / ("index.html" if page == "index.md" else page[:-3])
        assert built.exists(), f"{page} was not built"
    assert len(nav) == len(set(nav)), "a page is in the nav twice"


@pytest.mark.parametrize(
    "broken",
    ["[a page that is not there](no-such-page.md)", "[a heading that is not there](#no-such)"],
)
def test_a_broken_link_fails_the_build(tmp_path: Path, broken: str) -> None:
    # The check above could pass by building nothing strictly: the same site with one
    # broken link must fail, naming it.
    shutil.copytree(ROOT / "docs", tmp_path / "docs")
    shutil.copy(ROOT / "mkdocs.yml", tmp_path / "mkdocs.yml")
    with (tmp_path / "docs" / "index.md").open("a", encoding="utf-8") as page:
        page.write(f"\nSee {broken}.\n")
    done = mkdocs_build(tmp_path, tmp_path / "site")
    assert done.returncode != 0
    target = re.search(r"\]\((.+)\)", broken)
    assert target is not None and target[1].lstrip("#") in done.stderr


def test_the_readme_is_short_and_its_links_resolve() -> None:
    readme = (ROOT / "README.md").read_text("utf-8")
    assert len(readme.splitlines()) <= README_MAX_LINES
    links = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", readme)
    local = [link for link in links if "://" not in link]
    assert {"docs/getting-started.md", "docs/configuration.md", "LICENSE"} <= set(local)
    for link in local:
        assert (ROOT / link).exists(), f"README links to {link}, which does not exist"


def test_every_docs_page_is_in_the_nav() -> None:
    nav = set(_nav_pages(yaml.safe_load((ROOT / "mkdocs.yml").read_text("utf-8"))["nav"]))
    pages = {p.name for p in (ROOT / "docs").glob("*.md")}
    assert pages <= nav, f"not in mkdocs.yml's nav: {sorted(pages - nav)}"

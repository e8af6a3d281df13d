"""The benchmarks measure the same files whatever is installed, and judge the prefix cache
against what can be cached at all.

The corpus is the running interpreter's standard library (:mod:`benchmarks.corpus_files`):
the same list from every call, nothing from ``site-packages``, and the same list and hash
from an interpreter started without ``site-packages`` at all (``python -S``), which is
what two virtual environments with different packages differ by.
"""

from __future__ import annotations

import json
import subprocess
import sys
import sysconfig
from pathlib import Path, PurePosixPath

from benchmarks.corpus_files import (
    EXCLUDED_DIRS,
    MAX_FILE_BYTES,
    PREFIX,
    corpus_id,
    corpus_paths,
    source_files,
    stdlib_root,
)
from benchmarks.prefix_limit import FILE_HEADING, prefix_limit
from tests.project.test_benchmarks import FINE, _fake_suite, results, runner
from tests.support.paths import ROOT

_SELECTION = """
import hashlib, json
from benchmarks.corpus_files import corpus_id, source_files
files = source_files(50)
print(json.dumps({
    "id": corpus_id().sha256,
    "paths": [f.path for f in files],
    "data": hashlib.sha256(b"".join(f.data for f in files)).hexdigest(),
}))
"""


def _site_dirs() -> list[Path]:
    paths = sysconfig.get_paths()
    return [Path(paths[k]).resolve() for k in ("purelib", "platlib")]


def _selection(*flags: str) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, *flags, "-c", _SELECTION],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    data: dict[str, object] = json.loads(done.stdout)
    return data


def test_the_corpus_is_the_standard_library_without_tests_or_installed_packages() -> None:
    paths = corpus_paths()
    assert len(paths) > 500, len(paths)
    assert list(paths) == sorted(set(paths))
    root = stdlib_root()
    site = _site_dirs()
    for relative in paths:
        path = root / relative
        assert path.suffix == ".py" and path.is_file(), relative
        assert 0 < path.stat().st_size <= MAX_FILE_BYTES, relative
        assert not EXCLUDED_DIRS & set(PurePosixPath(relative).parts[:-1]), relative
        assert not any(path.resolve().is_relative_to(s) for s in site), relative
    # Packages this project depends on are installed, and none of them is in the corpus.
    assert not any(p.startswith(("pygit2/", "jinja2/", "pip/")) for p in paths)
    assert "json/decoder.py" in paths


def test_the_choice_is_fixed_and_a_small_sample_is_a_prefix_of_a_large_one() -> None:
    many = source_files(1500)
    assert [f.path for f in source_files(1500)] == [f.path for f in many]
    assert source_files(40) == many[:40]
    assert len({f.path for f in many}) == len(many)
    # Past the standard library's own files the same files come again under stdlib-2/ …
    first = [f for f in many if f.path.startswith(f"{PREFIX}/")]
    second = [f for f in many if f.path.startswith(f"{PREFIX}-2/")]
    assert first and len(second) == len(first)
    assert sorted(f.data for f in second) == sorted(f.data for f in first)
    assert [f.path.split("/", 1)[1] for f in second] != [f.path.split("/", 1)[1] for f in first]
    root = stdlib_root()
    for f in many[:: len(many) // 25]:
        assert (root / f.path.split("/", 1)[1]).read_bytes() == f.data
        assert len(f.anchors) >= 5


def test_the_corpus_does_not_depend_on_site_packages() -> None:
    with_site = _selection()
    without_site = _selection("-S")  # no site-packages on sys.path at all
    assert with_site == without_site
    assert with_site["id"] == corpus_id().sha256
    assert with_site["paths"] == [f.path for f in source_files(50)]


def test_the_runner_prints_and_records_the_corpus(tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    suite.mkdir()
    _fake_suite(suite, {"bench_fine": FINE})
    done = runner("--dir", str(suite), "--results", str(tmp_path))
    assert done.returncode == 0, done.stderr
    expected = corpus_id()
    assert f"sha256 {expected.sha256}" in done.stdout
    assert expected.python in done.stdout and sys.version.split()[0] in expected.python
    recorded = results(tmp_path)["corpus"]
    assert recorded["sha256"] == expected.sha256 and len(expected.sha256) == 12
    assert recorded["files"] == len(corpus_paths()) and recorded["python"] == expected.python
    assert expected.sha256 in (tmp_path / "latest.md").read_text("utf-8")


def _prompt(*sections: tuple[str, str]) -> str:
    """A serialised prompt as the K3 stub sees it: a fixed head, then the files."""
    head = "kimi-k3|max|" + "system prompt and instructions. " * 40
    files = "".join(f'{FILE_HEADING}\\"{path}\\"\\n{body}\\n' for path, body in sections)
    return head + files


def test_the_limit_ends_at_the_first_change_and_must_not_be_before_the_pushed_file() -> None:
    before = _prompt(("a.py", "x = 1"), ("b.py", "y = 2"), ("c.py", "z = 3"))
    after = _prompt(("a.py", "x = 1"), ("b.py", "y = 20"), ("c.py", "z = 3"))
    limit = prefix_limit([before], [after], "b.py")
    assert limit.chars == len(after)
    assert limit.unchanged_chars == after.index("y = 2") + len("y = 2")
    assert 0 < limit.share < 1 and limit.first_change_in_pushed_file
    assert limit.tokens == limit.unchanged_chars / 4
    # The same prompt again: everything can be cached.
    assert prefix_limit([before, after], [after], "b.py").share == 1.0
    # Blaming b.py for a change in a.py, or a volatile head, fails.
    assert not prefix_limit([before], [after], "c.py").first_change_in_pushed_file
    volatile = after.replace("kimi-k3|max|", "kimi-k3|low|")
    late = prefix_limit([before], [volatile], "b.py")
    assert late.unchanged_chars == len("kimi-k3|") and not late.first_change_in_pushed_file
    # A pushed file moved to the end: the limit is where it was in the earlier prompt.
    moved = _prompt(("a.py", "x = 1"), ("c.py", "z = 3"), ("b.py", "y = 20"))
    assert prefix_limit([before], [moved], "b.py").first_change_in_pushed_file

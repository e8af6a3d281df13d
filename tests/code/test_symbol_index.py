"""The symbol index of a real repository's snapshot (gin): definitions and references
against what grep and git say, the update from an older commit parsing only the files
that changed, the saved index, and the agent's ``find_definition``/``find_references``."""

from __future__ import annotations

import gzip
import json
import re
import subprocess
from pathlib import Path

import pygit2
import pytest

from bot.code.grammars import available
from bot.code.index import FileSymbols, SymbolIndex, cached_index
from bot.git.repo import TreeSnapshot
from bot.review.tools.toolbox import RepoTools
from tests.support.real_repos import checkout
from tests.support.repos import commit, make_repo

pytestmark = pytest.mark.skipif(
    not available("go"),
    reason="the parsers extra is not installed: pip install 'gitneural[parsers]'",
)

#: How far back the older commit is: a few dozen commits touch a dozen Go files.
BACK = 30


def _git(root: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=root, check=True, capture_output=True, text=True
    ).stdout


def _snapshot(root: Path, rev: str) -> TreeSnapshot:
    repo = pygit2.Repository(str(root))
    return TreeSnapshot(repo, repo.revparse_single(rev).peel(pygit2.Commit))


def test_definitions_and_references_of_gin() -> None:
    root = checkout("gin")
    index = SymbolIndex.build(_snapshot(root, "HEAD"))
    go_files = _git(root, "ls-files", "*.go").split()
    # Generated code (*.pb.go) is left out, as the review leaves it out.
    assert set(index.files) == {p for p in go_files if not p.endswith(".pb.go")}

    [next_method] = [d for d in index.definitions("Next") if d.path == "context.go"]
    lines = (root / "context.go").read_text().split("\n")
    assert lines[next_method.line - 1].startswith("func (c *Context) Next()")
    assert next_method.kind == "method" and lines[next_method.end - 1] == "}"

    # Every call "x.Next()" grep finds outside comments is a reference the index holds.
    calls = set()
    for row in _git(root, "grep", "-n", r"\.Next()", "--", "*.go").splitlines():
        path, line, text = row.split(":", 2)
        if not text.lstrip().startswith("//"):
            calls.add((path, int(line)))
    assert len(calls) >= 20
    found = {(r.path, r.line) for r in index.references("Next") if r.kind == "call"}
    assert calls <= found


def test_the_update_parses_only_the_files_that_changed(tmp_path: Path) -> None:
    root = checkout("gin")
    old_rev = _git(root, "rev-parse", f"HEAD~{BACK}").strip()
    head = _git(root, "rev-parse", "HEAD").strip()
    old = SymbolIndex.build(_snapshot(root, old_rev))
    assert old.parsed == len(old.files)

    changed = {
        p for p in _git(root, "diff", "--name-only", "--diff-filter=AMR", old_rev, head).split()
    }
    changed_go = {p for p in changed if p.endswith(".go") and not p.endswith(".pb.go")}
    assert changed_go, "the sample must change Go files"
    new = SymbolIndex.build(_snapshot(root, head), previous=old)
    assert new.parsed == len(changed_go)
    assert new.files == SymbolIndex.build(_snapshot(root, head)).files

    # Saved beside the repository: the older commit's index is updated for the head.
    folder = tmp_path / "index"
    cached_index(_snapshot(root, old_rev), old_rev, folder)
    updated = cached_index(_snapshot(root, head), head, folder)
    assert updated.parsed == len(changed_go) and updated.files == new.files
    loaded = cached_index(_snapshot(root, head), head, folder)
    assert loaded.parsed == 0 and loaded.files == new.files


def test_find_references_and_find_definition_answer_from_the_index() -> None:
    root = checkout("gin")
    tools = RepoTools(_snapshot(root, "HEAD"))
    assert "find_references" in {d["function"]["name"] for d in tools.definitions()}

    out = tools.call("find_references", '{"symbol": "Context.Next"}')
    rows = out.splitlines()
    # A call inside a returned closure is shown in the named function that returns it.
    assert "recovery.go:90: c.Next()  (in function CustomRecoveryWithWriter)" in rows, out
    assert all(re.match(r"[\w/.-]+:\d+: ", r) for r in rows), out

    out = tools.call("find_definition", '{"symbol": "Next"}')
    assert "context.go:198: func (c *Context) Next() {" in out.splitlines(), out

    missing = tools.call("find_references", '{"symbol": "NoSuchNameAnywhere"}')
    assert missing.startswith("no references to 'NoSuchNameAnywhere'")
    assert tools.call("find_references", '{"symbol": "a b"}').startswith("error:")


def test_find_definition_adds_what_only_the_parser_sees(tmp_path: Path) -> None:
    if not available("c"):
        pytest.skip("the parsers extra is not installed: pip install 'gitneural[parsers]'")
    repo = make_repo(tmp_path)
    source = "static int\nhelper(int a,\n       int b)\n{\n    return a + b;\n}\n"
    commit(repo, {"util.c": source})
    snapshot = TreeSnapshot(repo, repo.head.peel(pygit2.Commit))
    # The patterns want a type before the name, or the parameters closed, on its line;
    # the parser knows the function whatever the layout.
    patterns_only = RepoTools(snapshot, index=SymbolIndex())
    assert patterns_only.call("find_definition", '{"symbol": "helper"}').startswith("no definition")
    tools = RepoTools(snapshot)
    assert tools.call("find_definition", '{"symbol": "helper"}') == "util.c:2: helper(int a,"
    assert tools.call("find_references", '{"symbol": "helper"}').startswith("no references")


def test_a_saved_index_holding_what_it_should_not_is_built_again(tmp_path: Path) -> None:
    root = checkout("gin")
    head = _git(root, "rev-parse", "HEAD").strip()
    folder = tmp_path / "index"
    built = cached_index(_snapshot(root, head), head, folder)
    saved = folder / f"{head}.json.gz"
    data = json.loads(gzip.decompress(saved.read_bytes()))
    entry = data["files"]["context.go"]
    entry[2][2][0] = str(entry[2][2][0])  # a reference's line saved as a string
    saved.write_bytes(gzip.compress(json.dumps(data).encode()))

    again = cached_index(_snapshot(root, head), head, folder)
    assert again.parsed == len(built.files) and again.files == built.files
    assert all(isinstance(line, int) for _, _, line in again.files["context.go"].references)


def test_a_saved_index_keeps_every_name_as_it_was() -> None:
    odd = FileSymbols(
        "0" * 32,
        (("split\x1fname", "function", 1, 1, 4), ("", "closure", 2, 2, 3)),
        (("", "call", 2), ("f", "call", 3)),
    )
    index = SymbolIndex({"a.c": odd, "empty.c": FileSymbols("1" * 32, (), ())})
    saved = json.loads(json.dumps(index.to_json()))
    loaded = SymbolIndex.from_json(saved)
    assert loaded is not None and loaded.files == index.files
    assert [d.line for d in loaded.definitions("split\x1fname")] == [1]
    assert [(r.path, r.line) for r in loaded.references("f")] == [("a.c", 3)]

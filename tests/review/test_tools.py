"""The read-only repository tools, on real repositories built with pygit2."""

from __future__ import annotations

import json
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pygit2
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.git.repo import IndexSnapshot, TreeSnapshot, WorkTreeSnapshot
from bot.review.tools.toolbox import RepoTools, ToolError, ToolLimits
from tests.fakes.keys import new_rsa_pem
from tests.support.repos import Gitlink, Symlink, commit, make_repo, stage, write_worktree

TOKEN = "ghp_" + "Fk3qZ8wN2xR7vB1mL5tY9pD4hJ6sC0gAzQ1w"[:36]
BIG = 50 * 1024 * 1024


PEM = new_rsa_pem()

FILES = {
    "src/app.py": (
        "import os\n\nfrom src.lib import helper\n\n\ndef main(argv):\n    return helper(argv, 1)\n"
    ),
    "src/lib.py": (
        "class Helper:\n    pass\n\n\ndef helper(a, b):\n    return a\n\n\nMAX_SIZE: int = 10\n"
    ),
    "src/config.py": f"import os\n\nTOKEN = '{TOKEN}'\n\ndef connect(token='{TOKEN}'):\n"
    "    return token\n",
    "deploy/key.pem": PEM,
    "web/app.ts": "export function render(x: number): string {\n  return String(x)\n}\n"
    "const helper = (a: number) => a\n",
    "go/server.go": "package main\n\nfunc (s *Server) helper(a int) error {\n\treturn nil\n}\n\n"
    "type Server struct {\n}\n",
    "c/util.c": "static int helper(int a, int b)\n{\n  return helper(a, b);\n}\n",
    "rust/lib.rs": "pub(crate) fn helper(a: i32) -> i32 {\n    a\n}\npub struct Helper;\n",
    "long.txt": "".join(f"line {i}\n" for i in range(1, 5001)),
    "wide.txt": "w" * 10_000 + "\n",
    "cat.txt": "a" * 30_000 + "b\n",
    "blob.bin": b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)) * 4,
    "latin1.txt": "caf\xe9 cr\xe8me\n".encode("latin-1"),
    "many/" + "x" * 3 + ".txt": "x\n",
    "links/good": Symlink("../src/lib.py"),
    "links/srcdir": Symlink("../src"),
    "links/root": Symlink("/"),
    "links/etc": Symlink("/etc/passwd"),
    "links/escape": Symlink("../../outside"),
    "links/gitconfig": Symlink("../.git/config"),
    "links/loop1": Symlink("loop2"),
    "links/loop2": Symlink("loop1"),
    "vendor/sub": Gitlink("1" * 40),
    "empty.txt": "",
}


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> pygit2.Repository:
    path = tmp_path_factory.mktemp("tools")
    repo = make_repo(path / "repo")
    files = dict(FILES)
    for i in range(30):
        files[f"many/file{i:02}.txt"] = f"entry {i}\n"
    commit(repo, files)
    # The 50 MB file is committed to another branch, so the work tree stays small.
    big = repo.create_blob(b"y" * 99 + b"\n" + (b"z" * 99 + b"\n") * (BIG // 100 - 1))
    head = repo.head.peel(pygit2.Commit)
    builder = repo.TreeBuilder(head.tree)
    builder.insert("huge.log", big, pygit2.enums.FileMode.BLOB)
    tree = builder.write()
    sig = pygit2.Signature("Test Author", "author@example.com", 1_800_000_000, 0)
    repo.create_commit("refs/heads/big", sig, sig, "big", tree, [head.id])
    return repo


@pytest.fixture(scope="module")
def snapshot(repo: pygit2.Repository) -> TreeSnapshot:
    return TreeSnapshot(repo, repo.head.peel(pygit2.Commit))


@pytest.fixture(scope="module")
def tools(snapshot: TreeSnapshot) -> RepoTools:
    return RepoTools(snapshot)


def call(tools: RepoTools, name: str, **arguments: object) -> str:
    return tools.call(name, json.dumps(arguments))


# -- normal use --------------------------------------------------------------------------


def test_definitions_describe_the_five_tools(tools: RepoTools) -> None:
    specs = tools.definitions()
    assert [s["function"]["name"] for s in specs] == [
        "read_file",
        "search",
        "list_dir",
        "find_definition",
        "find_references",
    ]
    for spec in specs:
        assert spec["type"] == "function"
        params = spec["function"]["parameters"]
        assert params["additionalProperties"] is False
        assert set(params["required"]) <= set(params["properties"])
    assert specs[0]["function"]["parameters"]["required"] == ["path"]
    json.dumps(specs)


def test_read_file_numbers_lines(tools: RepoTools) -> None:
    out = call(tools, "read_file", path="src/lib.py")
    assert out.splitlines()[0] == "src/lib.py: lines 1-9 of 9"
    assert "5 | def helper(a, b):" in out.splitlines()
    assert "truncated" not in out
    assert call(tools, "read_file", path="./src//lib.py") == out


def test_read_file_window(tools: RepoTools) -> None:
    out = call(tools, "read_file", path="long.txt", start_line=100, end_line=102)
    assert out.splitlines() == [
        "long.txt: lines 100-102 of 5,000",
        "100 | line 100",
        "101 | line 101",
        "102 | line 102",
    ]
    # Models sometimes quote numbers.
    assert tools.call(
        "read_file", '{"path": "long.txt", "start_line": "100", "end_line": 102}'
    ) == (out)


def test_read_file_follows_a_symlink_that_stays_inside(tools: RepoTools) -> None:
    out = call(tools, "read_file", path="links/good")
    assert out.startswith("src/lib.py (via symlink 'links/good'): lines 1-9 of 9")
    out = call(tools, "read_file", path="links/srcdir/lib.py", start_line=5, end_line=5)
    assert out.endswith("5 | def helper(a, b):")


def test_read_file_edge_files(tools: RepoTools) -> None:
    assert call(tools, "read_file", path="empty.txt") == "empty.txt: empty file"
    binary = call(tools, "read_file", path="blob.bin")
    assert binary.startswith("blob.bin: binary file,") and "bytes" in binary
    assert "caf\ufffd cr\ufffdme" in call(tools, "read_file", path="latin1.txt")
    assert call(tools, "read_file", path="src").startswith("error: 'src' is a directory")


def test_list_dir(tools: RepoTools) -> None:
    root = call(tools, "list_dir")
    lines = root.splitlines()
    assert lines[0].startswith("./ (")
    assert "src/" in lines and "vendor/" in lines
    assert f"long.txt  ({len(FILES['long.txt']):,} bytes)" in lines
    links = call(tools, "list_dir", path="links").splitlines()
    assert "root -> /  (symlink)" in links
    assert "escape -> ../../outside  (symlink)" in links
    assert call(tools, "list_dir", path="vendor").splitlines()[1] == (
        "sub  (submodule: not part of this review)"
    )
    assert call(tools, "list_dir", path="links/srcdir") == call(tools, "list_dir", path="src")


def test_search_literal_and_glob(tools: RepoTools) -> None:
    out = call(tools, "search", pattern="helper(")
    assert out.splitlines() == [
        "c/util.c:1: static int helper(int a, int b)",
        "c/util.c:3:   return helper(a, b);",
        "go/server.go:3: func (s *Server) helper(a int) error {",
        "rust/lib.rs:1: pub(crate) fn helper(a: i32) -> i32 {",
        "src/app.py:7:     return helper(argv, 1)",
        "src/lib.py:5: def helper(a, b):",
    ]
    assert call(tools, "search", pattern="helper(", path_glob="*.py").splitlines() == [
        "src/app.py:7:     return helper(argv, 1)",
        "src/lib.py:5: def helper(a, b):",
    ]
    assert call(tools, "search", pattern="helper", path_glob="src/**/*.py").splitlines() == [
        "src/app.py:3: from src.lib import helper",
        "src/app.py:7:     return helper(argv, 1)",
        "src/lib.py:5: def helper(a, b):",
    ]
    assert call(tools, "search", pattern="helper", path_glob="go") == (
        "go/server.go:3: func (s *Server) helper(a int) error {"
    )
    assert call(tools, "search", pattern="nothing-like-this").startswith(
        "no matches for 'nothing-like-this'"
    )


def test_search_regex(tools: RepoTools) -> None:
    out = call(tools, "search", pattern=r"^(def|class) \w+", regex=True)
    assert out.splitlines() == [
        "src/app.py:6: def main(argv):",
        "src/config.py:5: def connect(token='[REDACTED:GitHub token]'):",
        "src/lib.py:1: class Helper:",
        "src/lib.py:5: def helper(a, b):",
    ]
    assert call(tools, "search", pattern="(", regex=True).startswith("error: invalid regex '('")


def test_find_definition_across_languages(tools: RepoTools) -> None:
    out = call(tools, "find_definition", symbol="helper").splitlines()
    assert out == [
        "c/util.c:1: static int helper(int a, int b)",
        "go/server.go:3: func (s *Server) helper(a int) error {",
        "rust/lib.rs:1: pub(crate) fn helper(a: i32) -> i32 {",
        "src/lib.py:5: def helper(a, b):",
        "web/app.ts:4: const helper = (a: number) => a",
    ]
    assert call(tools, "find_definition", symbol="Helper").splitlines() == [
        "rust/lib.rs:4: pub struct Helper;",
        "src/lib.py:1: class Helper:",
    ]
    assert call(tools, "find_definition", symbol="MAX_SIZE") == "src/lib.py:9: MAX_SIZE: int = 10"
    assert call(tools, "find_definition", symbol="Server") == "go/server.go:7: type Server struct {"
    assert call(tools, "find_definition", symbol="lib.render") == (
        "web/app.ts:1: export function render(x: number): string {"
    )
    assert call(tools, "find_definition", symbol="nowhere").startswith("no definition of")
    assert call(tools, "find_definition", symbol="a b;rm").startswith("error: symbol")


def test_index_snapshot_reads_staged_content_not_the_work_tree(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    commit(repo, {"app.py": "x = 1\n"})
    stage(repo, {"app.py": "x = 2  # staged\n"})
    write_worktree(repo, {"app.py": "x = 3  # not staged\n", "notes.txt": "untracked\n"})
    tools = RepoTools(IndexSnapshot(repo))
    assert call(tools, "read_file", path="app.py").endswith("1 | x = 2  # staged")
    assert call(tools, "read_file", path="notes.txt").startswith(
        "error: 'notes.txt' does not exist"
    )
    assert call(tools, "search", pattern="not staged").startswith("no matches")


# -- hostile arguments ---------------------------------------------------------------------

HOSTILE_PATHS = [
    ("../../etc/passwd", "leaves the repository"),
    ("/etc/passwd", "absolute path"),
    ("src/../../etc/passwd", "leaves the repository"),
    ("~/.ssh/id_rsa", "absolute path"),
    ("C:\\Windows\\win.ini", "absolute path"),
    (".git/config", "inside .git"),
    (".GIT/config", "inside .git"),
    ("src/.git/config", "inside .git"),
    ("links/root", "symlink to an absolute path"),
    ("links/root/etc/passwd", "symlink to an absolute path"),
    ("links/etc", "symlink to an absolute path"),
    ("links/escape", "leaves the repository"),
    ("links/escape/x", "leaves the repository"),
    ("links/gitconfig", "symlink into .git"),
    ("links/loop1", "too many symlinks"),
    ("vendor/sub", "is a submodule"),
    ("vendor/sub/README.md", "is a submodule"),
    ("src/lib.py/x", "is a file, not a directory"),
    ("src/nothing.py", "does not exist"),
    ("src\x00.py", "NUL"),
]


@pytest.mark.parametrize(("path", "message"), HOSTILE_PATHS)
def test_hostile_paths_are_refused_readably(tools: RepoTools, path: str, message: str) -> None:
    for name in ("read_file", "list_dir"):
        out = call(tools, name, path=path)
        assert out.startswith("error: "), out
        assert message in out
        assert "root:" not in out  # nothing of the real /etc/passwd
    searched = call(tools, "search", pattern="root:", path_glob=path)
    assert searched.startswith(("error: ", "no matches")), searched


def test_work_tree_symlinks_never_leave_the_repository(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("MARKER-FROM-OUTSIDE\n")
    repo = make_repo(tmp_path / "repo")
    commit(repo, {"README.md": "hi\n"})
    stage(
        repo,
        {
            "root": Symlink("/"),
            "out": Symlink("../outside"),
            "abs": Symlink(str(outside / "secret.txt")),
        },
    )
    tools = RepoTools(WorkTreeSnapshot(repo))
    for path in ("root/etc/passwd", "out/secret.txt", "abs", "out"):
        out = call(tools, "read_file", path=path)
        assert out.startswith("error: ") and "MARKER" not in out, out
    assert call(tools, "search", pattern="MARKER").startswith("no matches")
    assert call(tools, "read_file", path="README.md").endswith("1 | hi")


def test_a_50_mb_blob_is_read_in_a_bounded_slice(repo: pygit2.Repository) -> None:
    big = RepoTools(TreeSnapshot(repo, repo.revparse_single("big").peel(pygit2.Commit)))

    started = time.monotonic()
    out = call(big, "read_file", path="huge.log")
    # A hang detector: bench_tools measures a window's cost; a read that redacted or
    # split the whole 50 MB on every call took minutes under load.
    assert time.monotonic() - started < 60
    assert len(out.encode()) <= big.limits.max_bytes
    lines = out.splitlines()
    assert lines[0].startswith("huge.log: lines 1-") and lines[0].endswith(" of 524,288")
    assert lines[1] == "  1 | " + "y" * 99
    assert lines[-1].startswith("[truncated: showing lines 1-")
    found = call(big, "search", pattern="yyy")
    assert found.startswith("no matches") and "[1 file over 2,000,000 bytes not searched]" in found
    snapshot = TreeSnapshot(repo, repo.revparse_single("big").peel(pygit2.Commit))
    limited = RepoTools(snapshot, limits=ToolLimits(max_read_bytes=1_000_000))
    assert call(limited, "read_file", path="huge.log").startswith(
        "error: 'huge.log' is too large to read (52,428,800 bytes)"
    )


def test_a_catastrophic_regex_gives_up_in_time(tools: RepoTools, snapshot: TreeSnapshot) -> None:
    quick = RepoTools(snapshot, limits=ToolLimits(search_timeout_s=1.0))
    started = time.monotonic()
    out = call(quick, "search", pattern="(a+)+$", regex=True)
    elapsed = time.monotonic() - started
    # A hang detector, not a measure (bench_tools times it): regex counts the 1 s limit
    # in CPU time, which a loaded machine stretches in wall time.
    assert elapsed < 60, elapsed
    assert "[search stopped after 1 s: results are partial" in out


def test_invalid_arguments_come_back_as_errors(tools: RepoTools) -> None:
    assert tools.call("read_file", "{not json").startswith("error: the arguments of read_file")
    assert tools.call("read_file", "[1, 2]") == (
        "error: the arguments of read_file must be a JSON object"
    )
    assert tools.call("read_file", "{}") == "error: read_file needs the argument 'path'"
    assert tools.call("read_file", '{"path": 3}').startswith("error: read_file: 'path' must be")
    assert call(tools, "read_file", path="a", mode="w").startswith(
        "error: read_file has no argument 'mode'"
    )
    assert call(tools, "read_file", path="long.txt", start_line=0).startswith("error: ")
    assert call(tools, "read_file", path="long.txt", start_line=6000).startswith(
        "error: start_line 6000 is past the end of the file (5,000 lines)"
    )
    assert call(tools, "read_file", path="long.txt", start_line=9, end_line=3).startswith("error")
    assert call(tools, "search", pattern="").startswith("error: the search pattern is empty")
    assert tools.call("write_file", '{"path": "x"}').startswith("error: unknown tool 'write_file'")
    assert tools.call("submit_review", "{}").startswith("error: unknown tool")
    with pytest.raises(ToolError):
        tools.read_file("../x")


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    name=st.sampled_from(["read_file", "search", "list_dir", "find_definition", "rm"]),
    arguments=st.one_of(
        st.text(max_size=50),
        st.dictionaries(
            st.sampled_from(["path", "start_line", "end_line", "pattern", "regex", "symbol", "x"]),
            st.one_of(
                st.none(),
                st.booleans(),
                st.integers(),
                st.floats(allow_nan=True),
                st.text(max_size=30),
                st.lists(st.integers(), max_size=3),
            ),
        ).map(json.dumps),
    ),
)
def test_call_never_raises(tools: RepoTools, name: str, arguments: str) -> None:
    out = tools.call(name, arguments)
    assert isinstance(out, str) and out
    assert len(out.encode()) <= tools.limits.max_bytes + 200


# -- caps ------------------------------------------------------------------------------------


def test_read_file_is_capped_and_says_so(tools: RepoTools, snapshot: TreeSnapshot) -> None:
    out = call(tools, "read_file", path="long.txt").splitlines()
    assert out[0] == "long.txt: lines 1-800 of 5,000"
    assert out[-1] == (
        "[truncated: showing lines 1-800 of 5,000; call read_file with start_line=801 for more]"
    )
    assert len(out) == 802
    wide = call(tools, "read_file", path="wide.txt")
    assert wide.endswith(" … [line cut at 2,000 characters]") and len(wide) < 2_100
    small = RepoTools(snapshot, limits=ToolLimits(max_bytes=2_000))
    cut = call(small, "read_file", path="long.txt").splitlines()
    assert cut[-1].startswith("[truncated: showing lines 1-") and len("\n".join(cut)) <= 2_000


def test_search_and_list_dir_are_capped_and_say_so(
    tools: RepoTools, snapshot: TreeSnapshot
) -> None:
    small = RepoTools(snapshot, limits=ToolLimits(max_matches=5, max_lines=10))
    out = call(small, "search", pattern="line ").splitlines()
    assert out[:5] == [f"long.txt:{i}: line {i}" for i in range(1, 6)]
    assert (
        out[5] == "[truncated: showing the first 5 matching lines; narrow the pattern or path_glob]"
    )
    listing = call(small, "list_dir", path="many").splitlines()
    assert listing[0] == "many/ (31 entries)" and len(listing) == 12
    assert listing[-1] == "[truncated: showing 10 of 31 entries]"
    few_files = RepoTools(snapshot, limits=ToolLimits(max_files_scanned=3))
    assert "[search stopped after 3 files: results are partial" in call(
        few_files, "search", pattern="zzz"
    )
    tiny = RepoTools(snapshot, limits=ToolLimits(max_bytes=300))
    capped = call(tiny, "search", pattern="line")
    assert capped.endswith("[truncated: output cut at 300 bytes]")


# -- secrets ---------------------------------------------------------------------------------


def _key_chunks() -> list[str]:
    body = "".join(line for line in PEM.splitlines() if not line.startswith("-----"))
    return [body[i : i + 16] for i in range(0, len(body) - 16, 16)]


def test_secrets_in_files_come_back_redacted(tools: RepoTools) -> None:
    config = call(tools, "read_file", path="src/config.py")
    assert TOKEN not in config and "TOKEN = '[REDACTED:GitHub token]'" in config
    whole = call(tools, "read_file", path="deploy/key.pem")
    assert "2 | " in whole and "[REDACTED:private key]" in whole
    middle = call(tools, "read_file", path="deploy/key.pem", start_line=10, end_line=12)
    for out in (whole, middle):
        assert not any(chunk in out for chunk in _key_chunks())
    definition = call(tools, "find_definition", symbol="connect")
    assert definition == "src/config.py:5: def connect(token='[REDACTED:GitHub token]'):"


def test_search_cannot_probe_a_secret(tools: RepoTools) -> None:
    assert call(tools, "search", pattern=TOKEN[:8]).startswith("no matches")
    assert call(tools, "search", pattern="ghp_[A-Za-z0-9]", regex=True).startswith("no matches")
    body_line = PEM.splitlines()[3]
    assert call(tools, "search", pattern=body_line[:24]).startswith("no matches")


def test_concurrent_calls_give_the_same_answers(tools: RepoTools) -> None:
    calls = [
        ("read_file", '{"path": "src/lib.py"}'),
        ("search", '{"pattern": "helper"}'),
        ("list_dir", '{"path": "links"}'),
        ("find_definition", '{"symbol": "helper"}'),
        ("read_file", '{"path": "../etc/passwd"}'),
    ] * 4
    expected = [tools.call(name, args) for name, args in calls]
    with ThreadPoolExecutor(max_workers=8) as pool:
        got = list(pool.map(lambda c: tools.call(*c), calls))
    assert got == expected

"""git's rename detection, ported: git's own test cases (t/t4001-diff-rename.sh)."""

from __future__ import annotations

from bot.git.renames import Candidate, find_renames, similarity, span_counts


def _file(path: str, text: str) -> Candidate:
    data = text.encode()
    return Candidate(path, 0o100644, f"{hash(data) & 0xFFFFFFFF:040x}", lambda: data)


def _lines(*words: str) -> str:
    return "".join(f"{w}\n" for w in words)


def test_basename_is_tried_before_the_best_similarity() -> None:
    """t4001 'basename similarity vs best similarity': R078 to file.txt, file.md added."""
    numbered = [f"line{n}" for n in range(1, 11)]
    sources = [_file("subdir/file.txt", _lines(*numbered))]
    dests = [_file("file.md", _lines(*numbered[:9])), _file("file.txt", _lines(*numbered[:8]))]
    [found] = find_renames(sources, dests)
    assert (found.source, found.dest, found.similarity) == (0, 1, 78)
    # Without the basename pass, file.md (88%) would have won.
    assert similarity(sources[0], dests[0], 30_000) * 100 // 60_000 == 88


def test_the_last_line_counts_since_git_2_43_2() -> None:
    """t4001 'last line matters too': only the first character of the file differs."""
    tail = "git ignores final up to 63 characters if not newline terminated"
    old = _file("no-final-lf", _lines("a", *map(str, range(10))) + tail)
    new = _file("still-absent-final-lf", _lines("b", *map(str, range(10))) + tail)
    [found] = find_renames([old], [new])
    assert found.similarity == 97
    # git before 2.43.2 ignored that last line: 23%, no rename.
    old_rule = {"final_line": False}
    copied = sum(
        min(n, span_counts(new.data, **old_rule).get(k, 0))
        for k, n in span_counts(old.data, **old_rule).items()
    )
    assert copied * 100 // len(new.data) == 23


def test_crlf_counts_like_lf_in_text_but_not_in_binary() -> None:
    assert span_counts(b"one\r\ntwo\r\n") == span_counts(b"one\ntwo\n")
    assert span_counts(b"\0one\r\ntwo\r\n") != span_counts(b"\0one\ntwo\n")


def test_an_exact_copy_prefers_an_unused_source_with_the_same_basename() -> None:
    sources = [_file("a/x.txt", "same\n"), _file("b/y.txt", "same\n")]
    dests = [_file("c/y.txt", "same\n"), _file("d/z.txt", "same\n")]
    found = {(r.source, r.dest) for r in find_renames(sources, dests)}
    assert found == {(1, 0), (0, 1)}

"""A redacted line says so wherever it is shown, and no suggestion replaces one (issue 10,
class 4).

Long base64 runs with no public BEGIN/END line next to them are redacted as key material
(here the bodies of certifi's CA bundle, which pip vendors, under an unknown label:
certificates themselves are public and sent as they are, see test_public_material.py).
They used to become one placeholder and blank lines: ``read_file`` showed them blank
with no marker, and a suggestion on them was kept because the suggestion check read
the real file, so applying it would have overwritten content the model never saw.
"""

from __future__ import annotations

from pathlib import Path

import pip

from bot.domain.change import Change
from bot.domain.results import Finding, Placement, Severity
from bot.git.repo import range_change
from bot.review.secrets.redacted_change import redacted_change, redacted_lines
from bot.review.secrets.redaction import redact_diff
from bot.review.tools.toolbox import RepoTools
from tests.support.evidence import check_quoted
from tests.support.repos import commit, make_repo

BUNDLE = Path(pip.__file__).parent / "_vendor" / "certifi" / "cacert.pem"
MARK = "[REDACTED:key material]"


def _bundle_change(tmp_path: Path) -> tuple[Change, list[str]]:
    """The first certificates of the real bundle; the change edits a label and a line in
    the middle of the first certificate's body (as a re-encoded bundle might)."""
    # Relabelled: the run of base64 lines is then no certificate's body.
    text = BUNDLE.read_text(encoding="ascii").replace("CERTIFICATE-----", "SEALED BLOB-----")
    lines = text.splitlines(keepends=True)[:120]
    edited = list(lines)
    comment = next(n for n, line in enumerate(edited) if line.startswith("# Label:"))
    edited[comment] = "# Label: renamed by this change\n"
    middle = _body_lines(lines)[6] - 1
    edited[middle] = edited[middle][::-1].lstrip("\n") + "\n"
    repo = make_repo(tmp_path / "repo")
    commit(repo, {"certs/ca.pem": "".join(lines)})
    commit(repo, {"certs/ca.pem": "".join(edited)})
    return range_change(repo, "HEAD~1", "HEAD"), edited


def _body_lines(lines: list[str]) -> list[int]:
    """1-based numbers of the certificates' base64 lines."""
    inside = False
    found = []
    for number, line in enumerate(lines, start=1):
        if line.startswith("-----BEGIN"):
            inside = True
        elif line.startswith("-----END"):
            inside = False
        elif inside:
            found.append(number)
    return found


def test_every_redacted_line_is_marked_in_the_file_and_in_read_file(tmp_path: Path) -> None:
    change, lines = _bundle_change(tmp_path)
    shown = redacted_change(change).head
    assert shown is not None
    seen = shown.read("certs/ca.pem")
    assert seen is not None
    seen_lines = seen.decode().splitlines()
    real_lines = [line.rstrip("\n") for line in lines]
    assert len(seen_lines) == len(real_lines)
    changed = [n for n, (a, b) in enumerate(zip(real_lines, seen_lines, strict=True), 1) if a != b]
    assert len(changed) > 40  # most of three certificates' bodies
    # Every line redaction touched says so: none is shown blank in its place.
    assert all(seen_lines[n - 1] == MARK for n in changed)
    assert set(changed) <= set(_body_lines(lines))
    out = RepoTools(shown).call("read_file", '{"path": "certs/ca.pem", "end_line": 120}')
    numbered = {
        int(ln.split("|")[0]): ln.split("| ", 1)[1] for ln in out.splitlines() if "| " in ln
    }
    assert all(numbered[n] == MARK for n in changed)
    assert all(numbered[n] for n in numbered if real_lines[n - 1])


def test_redacted_lines_in_the_diff_are_marked(tmp_path: Path) -> None:
    change, lines = _bundle_change(tmp_path)
    [real] = change.diff.files
    [file] = redact_diff(change.diff).files
    pairs = [
        (a, b)
        for real_hunk, hunk in zip(real.hunks, file.hunks, strict=True)
        for a, b in zip(real_hunk.lines, hunk.lines, strict=True)
    ]
    redacted = [(a, b) for a, b in pairs if a.text != b.text]
    assert len(redacted) >= 6  # the edited body line and its context, both versions
    assert all(b.text == MARK for _, b in redacted)
    head = change.head.read("certs/ca.pem") if change.head else None
    assert head is not None
    hidden = redacted_lines(real, head.decode())
    assert {a.new_no for a, _ in redacted if a.new_no is not None} <= hidden
    assert hidden <= set(_body_lines(lines))


def test_a_suggestion_on_a_redacted_line_is_dropped_and_the_comment_kept(
    tmp_path: Path,
) -> None:
    change, lines = _bundle_change(tmp_path)
    [real] = change.diff.files
    body = _body_lines(lines)
    in_hunk = [n for n in body if real.commentable("RIGHT", n, n)]
    assert in_hunk
    target = in_hunk[0]
    comment = next(n for n in range(1, len(lines) + 1) if lines[n - 1].startswith("# Label: ren"))
    raw = [
        Finding(
            path="certs/ca.pem",
            start_line=target,
            end_line=target,
            side="RIGHT",
            severity=Severity.MINOR,
            category="correctness",
            title="truncated certificate line",
            body="This line looks cut.",
            suggestion="AAAA\n",
        ),
        Finding(
            path="certs/ca.pem",
            start_line=comment,
            end_line=comment,
            side="RIGHT",
            severity=Severity.NIT,
            category="style",
            title="label copies a placeholder",
            body="Say what the certificate is.",
            suggestion="# Label: [REDACTED:key material]\n",
        ),
    ]
    kept, dropped = check_quoted(raw, change)
    assert dropped == []
    by_title = {f.title: f for f in kept}
    on_key = by_title["truncated certificate line"]
    assert on_key.placement == Placement.INLINE and on_key.suggestion is None
    assert "suggestion dropped: its lines were redacted before the review" in on_key.note
    placeholder = by_title["label copies a placeholder"]
    assert placeholder.suggestion is None
    assert "redaction placeholder" in placeholder.note

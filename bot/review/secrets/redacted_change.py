"""What the model may see: a change whose every text has its secrets redacted.

The review core plans and prompts from :func:`redacted_change`; the findings check and
every output keep using the real change (suggestions must apply to the real content,
which never leaves the machine). :func:`redacted_lines` is the one notion of a line the
model did not see as it is: the findings check never lets a suggestion replace one.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

from bot.domain.change import Change, Entry, EntryKind, Snapshot
from bot.domain.diff import Diff, FileDiff
from bot.review.findings.side_text import split_lines
from bot.review.secrets.redaction import PLACEHOLDER_PREFIX, redact_diff, redact_text
from bot.text import decode_text, encode_text

#: What every redacted line shows the model instead of its content.
REDACTION_MARK = PLACEHOLDER_PREFIX


class RedactedSnapshot:
    """A snapshot whose ``read`` returns text with secrets replaced by placeholders."""

    def __init__(self, inner: Snapshot) -> None:
        self._inner = inner
        self.label = inner.label

    def read(self, path: str) -> bytes | None:
        data = self._inner.read(path)
        if data is None or b"\0" in data[:8000]:
            return data
        text, hits = redact_text(decode_text(data))
        return encode_text(text) if hits else data

    def kind(self, path: str) -> EntryKind | None:
        return self._inner.kind(path)

    def size(self, path: str) -> int | None:
        return self._inner.size(path)

    def list_dir(self, path: str) -> list[Entry]:
        return self._inner.list_dir(path)

    def walk(self) -> Iterator[str]:
        return self._inner.walk()

    def symlink_target(self, path: str) -> str | None:
        return self._inner.symlink_target(path)


def _wrap(snapshot: Snapshot | None) -> Snapshot | None:
    return None if snapshot is None else RedactedSnapshot(snapshot)


def redacted_change(change: Change) -> Change:
    return dataclasses.replace(
        change,
        diff=redact_diff(change.diff),
        head=_wrap(change.head),
        base=_wrap(change.base),
        trusted=_wrap(change.trusted),
        title=redact_text(change.title)[0],
        description=redact_text(change.description)[0],
        linked_issues=[
            dataclasses.replace(
                issue, title=redact_text(issue.title)[0], body=redact_text(issue.body)[0]
            )
            for issue in change.linked_issues
        ],
    )


def redacted_lines(file: FileDiff, head_text: str | None) -> frozenset[int]:
    """New-file lines of ``file`` the model was shown redacted, in the diff or in the file.

    The diff's hunks are redacted on their own (a key cut by a hunk's edge is still
    caught there) and the head file as a whole (context and tools read it), so a line
    counts as unseen when either view changed it.
    """
    hidden: set[int] = set()
    [shown_file] = redact_diff(Diff([file])).files
    for hunk, shown in zip(file.hunks, shown_file.hunks, strict=True):
        for line, seen in zip(hunk.lines, shown.lines, strict=True):
            if line.new_no is not None and line.text != seen.text:
                hidden.add(line.new_no)
    if head_text is not None:
        shown_text, hits = redact_text(head_text)
        if hits:
            pairs = zip(split_lines(head_text), split_lines(shown_text), strict=True)
            hidden.update(n for n, (real, seen) in enumerate(pairs, start=1) if real != seen)
    return frozenset(hidden)

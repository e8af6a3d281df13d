"""What the model may see: a change whose every text has its secrets redacted.

The review core plans and prompts from :func:`redacted_change`; the findings check and
every output keep using the real change (suggestions must apply to the real content,
which never leaves the machine).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

from bot.domain.change import Change, Entry, EntryKind, Snapshot
from bot.review.secrets.redaction import redact_diff, redact_text
from bot.text import decode_text, encode_text


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
    )

"""A change under review: its diff, the snapshots around it, and what describes it.

The core never touches a work tree: it reads the reviewed content through a
:class:`Snapshot` (a commit's tree, or the index for a staged review), built by
``bot.git.repo``. Everything in ``title`` and ``description`` is untrusted text written by
the change's author; ``instructions`` come from a trusted revision (the default branch
or HEAD), never from the change itself.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Literal, Protocol

from bot.domain.diff import Diff
from bot.domain.images import ChangeImages
from bot.domain.walkthrough import LinkedIssue

EntryKind = Literal["file", "dir", "symlink", "submodule"]


@dataclass(frozen=True)
class Entry:
    name: str
    kind: EntryKind
    size: int | None = None


class Snapshot(Protocol):
    """A read-only view of one version of a repository's files."""

    #: Human label: a commit id, ``"index"``, ``"work tree"``.
    label: str

    def read(self, path: str) -> bytes | None:
        """The blob at ``path``, or ``None`` if it is absent or not a regular file."""

    def kind(self, path: str) -> EntryKind | None:
        """What ``path`` is in this snapshot, without following symlinks."""

    def size(self, path: str) -> int | None:
        """The blob size in bytes, without reading it."""

    def list_dir(self, path: str) -> list[Entry]:
        """Entries directly under ``path`` (``""`` is the root); empty if not a directory."""

    def walk(self) -> Iterator[str]:
        """Every regular file's path, in a stable order."""

    def symlink_target(self, path: str) -> str | None:
        """The target a symlink at ``path`` points to."""


@dataclass
class Change:
    diff: Diff
    #: The reviewed content (head commit, or the index for ``--staged``); None for a bare diff.
    head: Snapshot | None = None
    #: The content before the change; None for a root commit or a bare diff.
    base: Snapshot | None = None
    #: Trusted revision for settings and instructions (default branch, or HEAD locally).
    trusted: Snapshot | None = None
    title: str = ""
    description: str = ""
    head_sha: str | None = None
    base_sha: str | None = None
    #: Issues of the same repository the change says it closes (untrusted, like the
    #: description).
    linked_issues: list[LinkedIssue] = field(default_factory=list)
    #: The images its review may show K3; None: images are off for this review.
    images: ChangeImages | None = None

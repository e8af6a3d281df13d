"""Which files of a change are reviewed, and why the others are not.

Every file of the diff ends up in exactly one of the two lists :func:`select_files`
returns, so coverage can always be stated: nothing is dropped silently.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Sequence
from dataclasses import dataclass
from fnmatch import translate

from bot.domain.diff import Diff, FileDiff, FileStatus
from bot.domain.results import SkippedFile
from bot.settings.repository import DEFAULT_IGNORES

BINARY = "binary"
MODE_ONLY = "mode change only"
DELETED = "deleted (listed, not reviewed)"
RENAMED_ONLY = "renamed without changes"
NO_LINES = "no changed lines"
SUBMODULE = "submodule pointer change (a commit id of another repository, not reviewed)"
#: git's mode for a gitlink: a submodule's entry in its parent's tree.
GITLINK_MODE = "160000"


@dataclass(frozen=True)
class _Glob:
    text: str
    regex: re.Pattern[str]
    #: A glob without "/" also matches the basename, as in .gitignore ("*.lock").
    basename_too: bool

    def matches(self, path: str) -> bool:
        if self.regex.match(path):
            return True
        return self.basename_too and bool(self.regex.match(posixpath.basename(path)))


def _compile(globs: Sequence[str]) -> list[_Glob]:
    # fnmatch semantics, case-sensitive on every platform so a review does not depend on
    # the machine it runs on; "*" spans "/" (``vendor/*`` covers the whole tree).
    return [_Glob(g, re.compile(translate(g)), "/" not in g) for g in globs]


def _skip_reason(file: FileDiff, globs: list[_Glob]) -> str | None:
    for glob in globs:
        if glob.matches(file.path):
            return f"ignored by {glob.text!r}"
    if GITLINK_MODE in (file.old_mode, file.new_mode):
        return SUBMODULE
    if file.binary:
        return BINARY
    if file.status is FileStatus.MODE_CHANGED:
        return MODE_ONLY
    if file.status is FileStatus.DELETED:
        return DELETED
    if not file.hunks:
        return RENAMED_ONLY if file.status is FileStatus.RENAMED else NO_LINES
    return None


def select_files(
    diff: Diff, globs: Sequence[str] = DEFAULT_IGNORES
) -> tuple[list[FileDiff], list[SkippedFile]]:
    """Split the diff's files into those to review and those skipped, with a reason.

    Both lists keep the diff's order. Ignore globs are checked first, so a vendored
    binary is reported as ignored by the glob the user can change.
    """
    compiled = _compile(globs)
    reviewed: list[FileDiff] = []
    skipped: list[SkippedFile] = []
    for file in diff:
        reason = _skip_reason(file, compiled)
        if reason is None:
            reviewed.append(file)
        else:
            skipped.append(SkippedFile(file.path, reason))
    return reviewed, skipped

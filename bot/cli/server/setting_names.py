"""Every environment variable GitNeural reads, and the names in the environment or in
``gitneural.env`` that look meant for it but are none of them (a typo such as
``GITNEURAL_BROKER_ULR`` otherwise passes silently: the real setting keeps its default).

The App's settings come from :data:`bot.settings.server.SERVER_SETTINGS`; the few that only
the hook or the Action read are listed here. ``tests/project/test_setting_names.py``
checks that every name the code spells out is known here.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from typing import Final

from bot.settings.server import SERVER_SETTINGS

#: Read by the hook and the command line, not by the App's processes.
LOCAL_NAMES: Final = frozenset({"GITNEURAL_CONFIG", "GITNEURAL_FAIL_ON", "GITNEURAL_SKIP"})
#: What GitHub Actions gives a job (``gitneural action`` reads these).
ACTIONS_NAMES: Final = frozenset(
    {
        "GITHUB_EVENT_NAME",
        "GITHUB_EVENT_PATH",
        "GITHUB_OUTPUT",
        "GITHUB_REPOSITORY",
        "GITHUB_RUN_ID",
        "GITHUB_SERVER_URL",
        "GITHUB_STEP_SUMMARY",
        "GITHUB_TOKEN",
        "GITHUB_WORKSPACE",
    }
)
#: The prefixes of the names GitNeural's settings use.
PREFIXES: Final = ("GITNEURAL_", "KIMI_", "GITHUB_")


def known_names() -> frozenset[str]:
    """Every variable some part of GitNeural reads."""
    table = {s.name for s in SERVER_SETTINGS} | {a for s in SERVER_SETTINGS for a in s.alternatives}
    return frozenset(table | LOCAL_NAMES | ACTIONS_NAMES)


def unknown_names(env: Mapping[str, str], from_file: Iterable[str] = ()) -> list[str]:
    """One line per name that looks meant for GitNeural and is not one of its settings,
    with the nearest known name when one is close. ``GITHUB_*`` names in the environment
    are many tools' (GitHub Actions sets dozens): those are reported only when they are
    a near miss of one of GitNeural's; in ``gitneural.env`` (``from_file``) every name is."""
    known = known_names()
    in_file = set(from_file)
    lines = []
    for name in sorted(set(env) | in_file):
        if not name.startswith(PREFIXES) or name in known:
            continue
        near = difflib.get_close_matches(name, known, n=1, cutoff=0.85)
        if name.startswith("GITHUB_") and name not in in_file and not near:
            continue
        where = "gitneural.env" if name in in_file else "the environment"
        hint = f": did you mean {near[0]}?" if near else ": GitNeural reads no such setting"
        lines.append(f"{name} (in {where}) is not a setting{hint}")
    return lines

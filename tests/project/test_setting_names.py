"""Every environment variable the code spells out is one :mod:`bot.cli.server.setting_names` knows,
so that the typo check never calls a real setting unknown."""

from __future__ import annotations

import re

from bot.cli.server.setting_names import known_names, unknown_names
from tests.support.paths import ROOT

_NAME = re.compile(r"[\"']((?:GITNEURAL|KIMI|GITHUB)_[A-Z0-9_]+)[\"']")


def test_every_name_the_code_reads_is_known() -> None:
    spelled = {
        found
        for top in ("bot", "workers", "hooks")
        for path in (ROOT / top).rglob("*.py")
        for found in _NAME.findall(path.read_text("utf-8"))
    }
    assert len(spelled) > 40
    assert sorted(spelled - known_names()) == []


def test_a_near_miss_is_named_and_other_tools_names_are_left_alone() -> None:
    env = {"GITNEURAL_BROKER_ULR": "x", "GITHUB_SHA": "y", "PATH": "/bin", "KIMI_API_KEY": "z"}
    assert unknown_names(env, ["GITHUB_TOKN"]) == [
        "GITHUB_TOKN (in gitneural.env) is not a setting: did you mean GITHUB_TOKEN?",
        "GITNEURAL_BROKER_ULR (in the environment) is not a setting: "
        "did you mean GITNEURAL_BROKER_URL?",
    ]

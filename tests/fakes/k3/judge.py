"""A stub brain that answers replay's model judge deterministically: a finding describes
a golden item when it names the same path at a line within three of the item's, or, for
an item given only as text, when that text quotes the finding's ``path:line``."""

from __future__ import annotations

import json
import re
from typing import Any

from tests.fakes.k3.reply import Reply

_BLOCK = re.compile(
    r"(?P<label>Findings|Golden items):\n(?P<fence>`{3,})json\n(?P<data>.*?)\n(?P=fence)", re.S
)


def _blocks(text: str) -> dict[str, list[dict[str, Any]]]:
    return {m["label"]: json.loads(m["data"]) for m in _BLOCK.finditer(text)}


def _describes(finding: dict[str, Any], item: dict[str, Any]) -> bool:
    first, last = finding["lines"]
    if item.get("path") and item.get("lines"):
        low, high = item["lines"]
        return bool(item["path"] == finding["path"] and first <= high + 3 and low <= last + 3)
    quoted = re.findall(r"([\w./-]+):(\d+)", str(item.get("text", "")))
    return any(p == finding["path"] and first <= int(n) <= last for p, n in quoted)


def judge_reply(body: dict[str, Any]) -> Reply:
    """The judge's answer to a request of :func:`bot.replay.judges.judge_request`."""
    user = next(str(m["content"]) for m in body["messages"] if m["role"] == "user")
    blocks = _blocks(user)
    matches = [
        {"finding": f["index"], "golden": g["index"], "reason": f"{f['title']} at {f['path']}"}
        for f in blocks.get("Findings", [])
        for g in blocks.get("Golden items", [])
        if _describes(f, g)
    ]
    return Reply(content=json.dumps({"matches": matches}), reasoning="Comparing places.")


def is_judge_request(body: dict[str, Any]) -> bool:
    return any(
        m["role"] == "system" and "judge of a code review replay" in str(m["content"])
        for m in body["messages"]
    )

"""The K3 stub's walkthrough: what a model asked for one writes, read from the request.

The review prompt asks for the walkthrough at its end (``Also write `walkthrough```);
this writer answers as K3 would: a summary saying whether it covers the whole change or
only what changed since the last review, one line per file the prompt shows, a place to
look hardest, a verdict on every issue the prompt shows, and a sequence diagram when the
prompt asks for one. ``diagram`` replaces that diagram (a broken one, for a test that it
is left out).
"""

from __future__ import annotations

import json
import re
from typing import Any

ASKED = "Also write `walkthrough`"
LATER = "this is a later review"
DIAGRAM_ASKED = "Add `diagram`"
FIRST_SUMMARY = "The change tightens the adult check in people.py so that 18 no longer counts."
DELTA_SUMMARY = "Since the last review, the push changes people.py again."
DIAGRAM = """sequenceDiagram
    participant Web as Webhook
    participant P as people
    Web->>+P: is_adult(age)
    P-->>-Web: bool"""
_FILE = re.compile(r'^## File ("(?:[^"\\]|\\.)*")', re.MULTILINE)
_ISSUE = re.compile(r"^### Issue #(\d+)$", re.MULTILINE)


def user_message(body: dict[str, Any]) -> str:
    messages = body.get("messages") or []
    return str(messages[1]["content"]) if len(messages) > 1 else ""


def walkthrough_for(body: dict[str, Any], diagram: str | None = None) -> dict[str, Any] | None:
    """The ``walkthrough`` argument for the review request ``body``, or None if the
    prompt does not ask for one."""
    text = user_message(body)
    if ASKED not in text:
        return None
    paths = [json.loads(quoted) for quoted in _FILE.findall(text)]
    later = LATER in text
    found: dict[str, Any] = {
        "summary": DELTA_SUMMARY if later else FIRST_SUMMARY,
        "files": [{"path": p, "note": f"{p} | changed: the age check"} for p in paths],
        "focus": [f"{paths[0]}: the boundary at 18, @octocat"] if paths else [],
    }
    issues = [int(n) for n in _ISSUE.findall(text)]
    if issues:
        found["issues"] = [
            {"number": n, "verdict": "no", "why": "the change makes 18 a minor, not an adult"}
            for n in issues
        ]
    if DIAGRAM_ASKED in text:
        found["diagram"] = DIAGRAM if diagram is None else diagram
    return found

"""The bug the end-to-end tests plant, and the finding the stubbed model submits about it.

``is_adult`` stops counting 18-year-olds (``>=`` becomes ``>``): a one-character change on
line 2 of ``people.py`` whose suggestion, applied, restores ``ORIGINAL`` exactly. The hook,
the CLI and the App tests all review this same change. The finding quotes the planted
line as its evidence, as every finding must (``INVENTED_EVIDENCE`` is a quote of code
that is nowhere in the file).
"""

from __future__ import annotations

from typing import Any

ORIGINAL = (
    "def is_adult(age):\n    return age >= 18\n\n\ndef greet(name):\n    return 'hi ' + name\n"
)
PLANTED = ORIGINAL.replace("age >= 18", "age > 18")

PLANTED_BUG: dict[str, Any] = {
    "path": "people.py",
    "start_line": 2,
    "end_line": 2,
    "side": "RIGHT",
    "severity": "critical",
    "category": "bug",
    "title": "Off-by-one: 18-year-olds are no longer adults",
    "body": "`age > 18` excludes 18; the previous code said 18 is adult.",
    "suggestion": "    return age >= 18",
    "evidence": "    return age > 18",
}

#: Code that ``PLANTED`` does not contain: a finding quoting it is not shown.
INVENTED_EVIDENCE = "    return eval(age) > 18"

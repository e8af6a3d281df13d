"""A strict checker of the Mermaid sequence diagrams a walkthrough may carry.

GitHub renders a ```` ```mermaid ```` block as a diagram, or as an error box when Mermaid
cannot parse it. Rather than ship Mermaid's grammar, GitNeural accepts only a small
subset of ``sequenceDiagram`` that it knows Mermaid parses, line by line, and leaves out
any diagram with one line outside it (never posted broken):

- the header ``sequenceDiagram``, then ``autonumber`` at most once;
- ``participant ID`` / ``actor ID``, optionally ``as Label``;
- messages ``A->>B: text`` with the arrows ``->``, ``-->``, ``->>``, ``-->>``, ``-x``,
  ``--x``, ``-)``, ``--)``, optionally ``+`` (activate the target) or ``-`` (deactivate
  the sender) before the target (not before an id starting with ``x``: Mermaid reads
  ``-x`` as an arrow);
- ``activate ID`` / ``deactivate ID``, each balanced;
- ``Note left of|right of|over ID[,ID]: text``;
- blocks ``loop|alt|opt|par|critical|break text`` … ``end``, with ``else`` inside ``alt``
  and ``and`` inside ``par``, properly nested;
- blank lines and ``%%`` comments (but no ``%%{…}%%`` directive: it reconfigures Mermaid).

Statements are separated by ``\n`` alone: a diagram holding any other control character
or line separator (``\r``, ``\t``, U+0085, U+2028, U+2029, any other C0 or C1 control)
is left out, since GitHub's renderer splits lines on some of them and would see
statements this checker never read.

Ids are ``[A-Za-z_][A-Za-z0-9_]*`` and none of Mermaid's keywords (:data:`RESERVED`);
label and message text is one line without ``;``, ``#``, ``<``, ``>``, braces, backticks
or ``:`` in labels (Mermaid reads ``;`` as a line break and ``#…;`` as an entity, and
GitHub's sanitiser would mangle HTML), and at most :data:`MAX_TEXT` characters. A
diagram has at most :data:`MAX_LINES` lines, :data:`MAX_PARTICIPANTS` participants and
at least one message.
"""

from __future__ import annotations

import re
import unicodedata

MAX_LINES = 60
MAX_PARTICIPANTS = 12
MAX_TEXT = 120

_ID = r"[A-Za-z_][A-Za-z0-9_]*"
#: Words Mermaid's lexer reads as keywords wherever they stand: never an id (any case).
RESERVED = frozenset(
    {
        "participant",
        "actor",
        "as",
        "activate",
        "deactivate",
        "note",
        "end",
        "loop",
        "alt",
        "else",
        "opt",
        "par",
        "and",
        "critical",
        "option",
        "break",
        "rect",
        "autonumber",
        "title",
        "left",
        "right",
        "of",
        "over",
        "box",
        "create",
        "destroy",
        "links",
        "link",
        "properties",
        "details",
        "sequencediagram",
        "acctitle",
        "accdescr",
    }
)
_TEXT = r"[^;#<>{}`\n]*"
_ARROW = r"(?:-->>|->>|-->|->|--x|-x|--\)|-\))"
_PARTICIPANT = re.compile(rf"(participant|actor)\s+({_ID})(?:\s+as\s+([^;#<>{{}}`:\n]+))?")
_MESSAGE = re.compile(rf"({_ID})\s*{_ARROW}\s*([+-]?)\s*({_ID})\s*:\s*({_TEXT})")
_ACTIVATION = re.compile(rf"(activate|deactivate)\s+({_ID})")
_NOTE = re.compile(
    rf"[Nn]ote\s+(?:left of|right of|over)\s+({_ID})(?:\s*,\s*({_ID}))?\s*:\s*({_TEXT})"
)
_OPEN = re.compile(rf"(loop|alt|opt|par|critical|break)(?:\s+({_TEXT}))?")
_SPLIT = {"else": "alt", "and": "par", "option": "critical"}
_SPLIT_LINE = re.compile(rf"(else|and|option)(?:\s+({_TEXT}))?")


class DiagramError(ValueError):
    """Why a diagram is left out: one line, naming the first offending line."""


def check_sequence_diagram(text: str) -> str:
    """The diagram, normalised (trimmed lines, no fences), or :class:`DiagramError`."""
    body = _unfenced(text)
    control = _control(body)
    if control is not None:
        raise DiagramError(f"a control character or line separator (U+{ord(control):04X})")
    lines = [line.strip() for line in body.split("\n")]
    lines = [line for line in lines if line]
    if not lines or lines[0] != "sequenceDiagram":
        raise DiagramError("it does not start with sequenceDiagram")
    if len(lines) > MAX_LINES:
        raise DiagramError(f"over {MAX_LINES} lines")
    state = _State()
    for number, line in enumerate(lines[1:], 2):
        try:
            state.read(line)
        except DiagramError as exc:
            raise DiagramError(f"line {number} ({line[:60]!r}): {exc}") from None
    state.finish()
    return "\n".join([lines[0], *("    " + line for line in lines[1:])])


def _control(text: str) -> str | None:
    """The first character other than ``\n`` that is a control or a line separator."""
    for char in text:
        if char != "\n" and unicodedata.category(char) in ("Cc", "Zl", "Zp"):
            return char
    return None


def _unfenced(text: str) -> str:
    body = text.strip()
    if body.startswith("```"):
        first, _, rest = body.partition("\n")
        if first.strip() not in ("```", "```mermaid") or not rest.rstrip().endswith("```"):
            raise DiagramError("a fence other than ```mermaid")
        body = rest.rstrip()[:-3]
    if "```" in body:
        raise DiagramError("a fence inside the diagram")
    return body


class _State:
    def __init__(self) -> None:
        self.participants: set[str] = set()
        self.active: dict[str, int] = {}
        self.blocks: list[str] = []
        self.messages = 0
        self.autonumber = False

    def _use(self, name: str) -> None:
        if name.lower() in RESERVED:
            raise DiagramError(f"{name} is a Mermaid keyword, not an id")
        self.participants.add(name)
        if len(self.participants) > MAX_PARTICIPANTS:
            raise DiagramError(f"over {MAX_PARTICIPANTS} participants")

    @staticmethod
    def _text(text: str | None) -> None:
        if text is not None and len(text.strip()) > MAX_TEXT:
            raise DiagramError(f"text over {MAX_TEXT} characters")

    def read(self, line: str) -> None:
        if line.startswith("%%"):
            if line.startswith("%%{"):
                raise DiagramError("a directive")
            return
        if line == "autonumber":
            if self.autonumber:
                raise DiagramError("autonumber twice")
            self.autonumber = True
            return
        if line == "end":
            if not self.blocks:
                raise DiagramError("end without a block")
            self.blocks.pop()
            return
        if self._read_statement(line):
            return
        raise DiagramError("not in the accepted subset of sequenceDiagram")

    def _read_statement(self, line: str) -> bool:
        if m := _PARTICIPANT.fullmatch(line):
            if m.group(2) in self.participants:
                raise DiagramError(f"participant {m.group(2)} declared twice or after use")
            self._text(m.group(3))
            self._use(m.group(2))
            return True
        if m := _MESSAGE.fullmatch(line):
            if m.group(2) == "-" and m.group(3).startswith("x"):
                # Mermaid's lexer reads ``-x`` there as the cross arrow.
                raise DiagramError("a deactivation before an id starting with x")
            self._use(m.group(1))
            self._use(m.group(3))
            self._text(m.group(4))
            # Mermaid's ``+`` activates the target, ``-`` deactivates the sender.
            if m.group(2) == "+":
                self._activate(m.group(3), +1)
            elif m.group(2) == "-":
                self._activate(m.group(1), -1)
            self.messages += 1
            return True
        if m := _ACTIVATION.fullmatch(line):
            self._use(m.group(2))
            self._activate(m.group(2), +1 if m.group(1) == "activate" else -1)
            return True
        if m := _NOTE.fullmatch(line):
            self._use(m.group(1))
            if m.group(2):
                self._use(m.group(2))
            self._text(m.group(3))
            return True
        if m := _OPEN.fullmatch(line):
            self._text(m.group(2))
            self.blocks.append(m.group(1))
            return True
        if m := _SPLIT_LINE.fullmatch(line):
            if not self.blocks or self.blocks[-1] != _SPLIT[m.group(1)]:
                raise DiagramError(f"{m.group(1)} outside {_SPLIT[m.group(1)]}")
            self._text(m.group(2))
            return True
        return False

    def _activate(self, name: str, step: int) -> None:
        count = self.active.get(name, 0) + step
        if count < 0:
            raise DiagramError(f"{name} deactivated while inactive")
        self.active[name] = count

    def finish(self) -> None:
        if self.blocks:
            raise DiagramError(f"{self.blocks[-1]} without end")
        if not self.messages:
            raise DiagramError("no message")
        if any(self.active.values()):
            raise DiagramError("a participant left active")

"""Model text made safe to show: on GitHub (markdown) and in a terminal.

:func:`sanitize_markdown` applies, outside code:

- **mentions**: ``@user`` and ``@org/team`` get a zero-width joiner (U+200D) after the
  ``@``. It is invisible, so the text reads the same, and GitHub no longer sees a
  mention, whatever markdown surrounds it (backticks could be unbalanced by a crafted
  neighbour; a joiner cannot). HTML entities for ``@`` are decoded first so that
  ``&#64;user`` gets the same treatment. E-mail addresses are left alone (GitHub does
  not read ``a@b.org`` as a mention) and so are URLs GitHub turns into links.
- **HTML comments** (and declarations, processing instructions, CDATA) are removed, so
  nothing can imitate GitNeural's hidden ``<!-- gitneural ... -->`` markers; inside code,
  where they show as text, ``<!-- gitneural`` gets a zero-width joiner after ``<!``.
- **images** become links: ``![alt](url)`` -> ``[alt](url)``, ``<img src alt>`` ->
  ``[alt](src)``: GitHub would fetch an image for every reader (a tracking pixel).
- **raw HTML**: only :data:`SAFE_TAGS` stay (without attributes, and not alone on a line,
  where they would open an HTML block); other HTML elements are removed (their text
  stays); other tag-like text (``Vec<T>``) is escaped so that it reads literally.

Code is left alone: fenced blocks always, inline code spans when GitHub is sure to read
them as code. The result is then rendered with GitHub's own parser
(:mod:`bot.render.markdown_check`); if anything could still ping, load an image or hide
a comment, stricter passes follow (inline code treated as text, then everything), down
to a last resort that escapes every ``<`` and ``@``.

Finally the text is cut to ``limit`` characters with a visible note, never inside a code
span, and closing a fenced block cut short.
"""

from __future__ import annotations

import re
import unicodedata

from bot.render.markdown_check import markdown_problem
from bot.render.markdown_tokens import (
    AT_ENTITY,
    BANG_BRACKET,
    FENCE_OPEN,
    MARKER,
    SAFE_TAGS,
    ZWJ,
    Piece,
    fenced_blocks,
    inline_pieces,
    markdown_pieces,
)
from bot.review import replacement_lines
from bot.text import printable

__all__ = [
    "SAFE_TAGS",
    "ZWJ",
    "neutralise_markers",
    "sanitize_inline",
    "sanitize_markdown",
    "suggestion_fence",
    "terminal_text",
]

_BIDI = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def _cut_fence(body: str, room: int) -> tuple[str, int]:
    """The first lines of a fenced block that fit in ``room``, closed again; lines kept."""
    opener = FENCE_OPEN.match(body)
    closing = (body[: opener.end(1)] if opener else "```") + "\n"
    kept = ""
    for line in body.split("\n")[:-1]:
        if len(kept) + len(line) + 1 + len(closing) > room:
            break
        kept += line + "\n"
    return (kept + closing, len(kept)) if kept else ("", 0)


def _truncate(pieces: list[Piece], limit: int, one_line: bool = False) -> str:
    text = "".join(body for _, body in pieces)
    total = len(text)
    if total <= limit:
        return text

    def note(omitted: int) -> str:
        if one_line:
            return "…"
        return f"\n\n… (truncated by GitNeural: {omitted} of {total} characters not shown)"

    budget = limit - len(note(total))
    if budget <= 0:
        return text[:limit]
    out: list[str] = []
    used = 0  # characters written
    kept = 0  # characters of the input kept
    for kind, body in pieces:
        room = budget - used
        if len(body) <= room:
            out.append(body)
            used += len(body)
            kept += len(body)
            continue
        if kind == "text":
            cut = body[: max(room, 0)]
            if one_line and (len(cut) - len(cut.rstrip("\\"))) % 2:
                cut = cut[:-1]  # a backslash left last would escape what follows the text
            out.append(cut)
            kept += len(cut)
        elif kind == "fence":
            cut, length = _cut_fence(body, room)
            out.append(cut)
            kept += length
        break
    return "".join(out) + note(total - kept)


def _escape_all(text: str) -> str:
    """The last resort: no tag, mention, image or code span can survive in ``text``."""
    text = AT_ENTITY.sub("@", text).replace("<", "&lt;").replace("@", "@" + ZWJ)
    # Escaped backticks open no code fence, whatever is removed around them.
    return BANG_BRACKET.sub("[", text.replace("\\", "\\\\").replace("`", "\\`"))


def _fences_closed(text: str) -> str:
    """``text`` with a code fence it leaves open closed: removing markup can make one
    (``<!-- x -->```` `` becomes ````` ``` `````), and an open fence would turn everything
    posted after the text (other findings, GitNeural's marker) into code."""
    return "".join(body for _, body in fenced_blocks(text))


def sanitize_markdown(text: str, *, limit: int) -> str:
    """Model text made safe to post on GitHub, at most ``limit`` characters."""
    text = printable(text).replace("\r\n", "\n").replace("\r", "\n").replace("\0", "\ufffd")
    for level in (0, 1, 2):
        out = _fences_closed(_truncate(markdown_pieces(text, level), limit))
        if len(out) > limit:  # no room left for the closing fence: make some
            room = max(0, 2 * limit - len(out))
            out = _fences_closed(_truncate(markdown_pieces(text, level), room))
        if len(out) <= limit and markdown_problem(out, SAFE_TAGS) is None:
            return out
    return _truncate([("text", _escape_all(text))], limit)


def sanitize_inline(text: str, *, limit: int) -> str:
    """Model text for the middle of one line of GitNeural's own markdown (a title, a
    category, a note), at most ``limit`` characters.

    Unlike :func:`sanitize_markdown` the result is one line, read as inline text only
    (a leading code fence or ``#`` starts no block in the middle of a line), and
    closed: backticks that open no code span are escaped, so the text cannot pair with
    a code span next to it (a file name in backticks) and expose what that holds.
    """
    text = printable(" ".join(text.split())).replace("\0", "\ufffd")
    for code_spans in (True, False):
        out = _truncate(inline_pieces(text, code_spans, closed=True), limit, one_line=True)
        # Checked where it will sit: after other text on a line, before a code span.
        if markdown_problem(f"x {out} `x`", SAFE_TAGS) is None:
            return out
    return _truncate([("text", _escape_all(text))], limit, one_line=True)


def neutralise_markers(code: str) -> str:
    """``code`` shown in a fenced block of a review body: unchanged to the eye, but no
    ``<!-- gitneural`` in it can be read as GitNeural's marker."""
    return MARKER.sub("<!" + ZWJ, code)


def suggestion_fence(code: str) -> str:
    """A ```suggestion block replacing the commented lines with ``code``.

    The fence is longer than any run of backticks in ``code``, so code holding a fence
    of its own cannot end the block early.
    """
    lines = replacement_lines(code)
    longest = max((len(run) for run in re.findall(r"`+", code)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}suggestion\n" + "".join(line + "\n" for line in lines) + fence


def terminal_text(text: str) -> str:
    """Text safe to print to a terminal: no undecodable bytes, no control sequences.

    Model output is untrusted: an ESC sequence in it could rewrite the screen or the
    window title, and bidirectional overrides could make text read differently from
    what it is. Tabs and newlines stay; other control characters become U+FFFD.
    """
    clean = printable(text).replace("\r\n", "\n")
    return "".join(
        "\ufffd" if ch in _BIDI or (ch not in "\n\t" and unicodedata.category(ch) == "Cc") else ch
        for ch in clean
    )

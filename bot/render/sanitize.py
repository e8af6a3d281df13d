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

import bisect
import html
import re
import unicodedata
from urllib.parse import quote

from bot.render.markdown_check import markdown_problem
from bot.review.diff import printable
from bot.review.suggestions import replacement_lines

ZWJ = "\u200d"
_BIDI = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
#: Inline tags kept (attributes dropped): they format text and cannot load or hide anything.
SAFE_TAGS = frozenset({"b", "i", "em", "strong", "code", "kbd", "sub", "sup", "br", "s"})


#: Tag names removed as HTML; any other ``<name ...>`` is shown literally.
def _names(text: str) -> frozenset[str]:
    return frozenset(text.split())


_HTML_ELEMENTS = _names(
    "a abbr address article aside audio base bdi bdo blockquote body button canvas caption "
    "center cite col colgroup data datalist dd del details dfn dialog dir div dl dt "
    "embed fieldset figcaption figure font footer form frame frameset h1 h2 h3 h4 h5 h6 "
    "head header hr html iframe img input ins label legend li link main map mark marquee "
    "menu meta meter nav noembed noframes noscript object ol optgroup option output p "
    "param picture plaintext pre progress q rp rt ruby samp script search section select "
    "slot small source span strike style summary svg table tbody td template textarea "
    "tfoot th thead time title tr track tt u ul var video wbr xmp math"
)

_TAG = r"[A-Za-z][A-Za-z0-9-]*"
_ATTR = r"""(?:\s+[A-Za-z_:][A-Za-z0-9_.:-]*(?:\s*=\s*(?:[^\s"'=<>`]+|'[^']*'|"[^"]*"))?)"""
_INLINE_HTML = re.compile(
    rf"<!--(?:-?>|[\s\S]*?-->)|<\?[\s\S]*?\?>|<!\[CDATA\[[\s\S]*?\]\]>|<![A-Za-z][^>]*>"
    rf"|<(?P<open>{_TAG}){_ATTR}*\s*/?>|</(?P<close>{_TAG})\s*>"
)
_AUTOLINK = re.compile(
    r"<[A-Za-z][A-Za-z0-9+.-]{1,31}:[^\s<>]*>"
    r"|<[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?>"
)
_FENCE_OPEN = re.compile(r" {0,3}(`{3,}|~{3,})(.*)")
_TABLE_DELIMITER = re.compile(
    r"^ {0,3}\|?[ \t]*:?-+:?[ \t]*(\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*$", re.MULTILINE
)
_RUN = re.compile(r"`+")
_SHORT_COMMENT = re.compile(r"<!---?>")
_BANG_BRACKET = re.compile(r"!+\[")
#: Openers whose closer must follow somewhere, or scanning for it is wasted work.
_CLOSERS = {"<!--": "-->", "<?": "?>", "<![CDATA[": "]]>"}
_ASCII_PUNCT = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")
_AT_ENTITY = re.compile(r"&#0*64;|&#[xX]0*40;|&commat;")
# GitHub autolinks these (so a mention inside is link text): scheme or www., after a
# line start, a blank or one of * _ ~ (.
_URL = re.compile(r"(?<![^\s*_~(])(?:https?://|www\.)[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+[^\s<]*")
_MENTION_AT = re.compile(r"(?<![A-Za-z0-9_])@(?=[A-Za-z0-9])")
_MARKER = re.compile(r"<!(?=--\s*gitneural)", re.IGNORECASE)
_SRC = re.compile(r"""\ssrc\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'=<>`]+))""", re.IGNORECASE)
_ALT = re.compile(r"""\salt\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'=<>`]+))""", re.IGNORECASE)
_EMPTY_IMAGE = re.compile(r"!\[\s*\]\(")

# A piece of output: (kind, text); kind "text" (sanitised), "code" (a code span) or
# "fence" (a whole fenced block). Only "text" may be cut anywhere.
Piece = tuple[str, str]


def _neutralise_mentions(text: str) -> str:
    out: list[str] = []
    last = 0
    for url in _URL.finditer(text):
        out.append(_MENTION_AT.sub("@" + ZWJ, text[last : url.start()]))
        out.append(url.group())
        last = url.end()
    out.append(_MENTION_AT.sub("@" + ZWJ, text[last:]))
    return "".join(out)


def _text(text: str, urls: bool = True) -> str:
    """Plain text between code and tags: escape stray ``<``, un-image, de-mention.

    ``urls=False`` de-mentions inside URLs too: whether GitHub links a URL depends on
    what precedes it (not after an open ``[``), unknown for a piece of a line.
    """
    text = _AT_ENTITY.sub("@", text).replace("<", "&lt;")
    text = _BANG_BRACKET.sub("[", _EMPTY_IMAGE.sub("[image](", text))
    return _neutralise_mentions(text) if urls else _MENTION_AT.sub("@" + ZWJ, text)


def _attr(pattern: re.Pattern[str], tag: str) -> str | None:
    match = pattern.search(tag)
    return None if match is None else next(g for g in match.groups() if g is not None)


def _image_link(tag: str) -> str:
    src = _attr(_SRC, tag)
    if not src:
        return ""
    alt = html.unescape(_attr(_ALT, tag) or "").strip() or "image"
    alt = _text(alt.replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]"))
    url = quote(html.unescape(src), safe=":/?#@!$&'*+,;=%~")
    return f"[{alt}]({url})"


def _alone_on_line(source: str, start: int, end: int) -> bool:
    """Whether a tag fills its line (after at most 3 spaces): it would open an HTML block."""
    line_start = source.rfind("\n", 0, start) + 1
    line_end = source.find("\n", end)
    before = source[line_start:start]
    after = source[end:] if line_end < 0 else source[end:line_end]
    return len(before) <= 3 and not before.strip(" ") and not after.strip()


def _html(match: re.Match[str], source: str) -> Piece:
    token = match.group()
    groups = match.groupdict()
    name = (groups.get("open") or groups.get("close") or "").lower()
    if not name:
        return ("text", "")  # comment, declaration, processing instruction, CDATA
    if name == "img":
        return ("text", _image_link(token))
    if name in SAFE_TAGS:
        if _alone_on_line(source, match.start(), match.end()):
            return ("text", "")
        return ("text", f"</{name}>" if groups.get("close") else f"<{name}>")
    if name in _HTML_ELEMENTS:
        return ("text", "")
    return ("text", _text(token))


def _code_span_end(
    source: str, start: int, run: int, runs: dict[int, list[int]], tables: bool
) -> int | None:
    """Where the code span opened by ``run`` backticks at ``start`` ends, if it is one.

    ``runs`` maps a length to the starts of the backtick runs of exactly that length.
    Spans over a line break or (in a text with a table) holding a ``|`` are refused:
    a block boundary or a table cell may cut them in GitHub's reading.
    """
    starts = runs.get(run, [])
    k = bisect.bisect_right(starts, start)
    if k == len(starts):
        return None
    close = starts[k]
    if source.find("\n", start, close) >= 0 or (tables and source.find("|", start, close) >= 0):
        return None
    return close + run


def _html_at(source: str, i: int, last: dict[str, int]) -> re.Match[str] | None:
    """An autolink or raw HTML token at ``i``; ``last`` holds where closers last occur."""
    if i > last[">"]:
        return None
    for opener, closer in _CLOSERS.items():
        if source.startswith(opener, i) and last[closer] < i + len(opener):
            return _SHORT_COMMENT.match(source, i) if opener == "<!--" else None
    return _AUTOLINK.match(source, i) or _INLINE_HTML.match(source, i)


def _inline(source: str, code_spans: bool, closed: bool = False) -> list[Piece]:
    """Tokenise prose left to right as CommonMark does: escapes, code spans, HTML.

    ``closed``: a backtick run that opens no code span is escaped, so that it cannot
    pair with a backtick of the text the result is put next to, and mentions are
    neutralised inside URLs too.

    Linear in practice even on hostile input: closers are looked up, not searched for
    again from every opener.
    """
    pieces: list[Piece] = []
    plain: list[str] = []
    tables = bool(_TABLE_DELIMITER.search(source))
    runs: dict[int, list[int]] = {}
    for found in _RUN.finditer(source):
        runs.setdefault(len(found.group()), []).append(found.start())
    last = {c: source.rfind(c) for c in [">", *_CLOSERS.values()]}

    def flush() -> None:
        if plain:
            pieces.append(("text", _text("".join(plain), urls=not closed)))
            plain.clear()

    i, n = 0, len(source)
    while i < n:
        ch = source[i]
        if ch == "\\" and i + 1 < n and source[i + 1] in _ASCII_PUNCT:
            # "\<" reads as "<": keep that reading once "<" is escaped as an entity.
            plain.append("&lt;" if source[i + 1] == "<" else source[i : i + 2])
            i += 2
        elif ch == "`":
            run_match = _RUN.match(source, i)
            run = len(run_match.group()) if run_match else 1
            end = _code_span_end(source, i, run, runs, tables) if code_spans else None
            if end is None:
                plain.append("\\`" * run if closed else source[i : i + run])
                i += run
            else:
                flush()
                pieces.append(("code", _MARKER.sub("<!" + ZWJ, source[i:end])))
                i = end
        elif ch == "<" and (m := _html_at(source, i, last)):
            flush()
            if m.re is _AUTOLINK:
                pieces.append(("code", m.group()))
            else:
                pieces.append(_html(m, source))
            i = m.end()
        else:
            plain.append(ch)
            i += 1
    flush()
    return pieces


def _blocks(text: str) -> list[tuple[bool, str]]:
    """Split into (is_fenced_code, text) by CommonMark's fence rules."""
    blocks: list[tuple[bool, str]] = []
    current: list[str] = []
    fence: tuple[str, int] | None = None
    indent = ""
    lines = text.split("\n")
    for number, line in enumerate(lines):
        ending = "\n" if number < len(lines) - 1 else ""
        if fence is None:
            opened = _FENCE_OPEN.fullmatch(line)
            if opened and not (opened.group(1)[0] == "`" and "`" in opened.group(2)):
                blocks.append((False, "".join(current)))
                current = []
                fence = (opened.group(1)[0], len(opened.group(1)))
                indent = line[: opened.start(1)]
        elif re.fullmatch(rf" {{0,3}}{re.escape(fence[0])}{{{fence[1]},}}[ \t]*", line):
            current.append(line + ending)
            blocks.append((True, "".join(current)))
            current, fence = [], None
            continue
        current.append(line + ending)
    if fence is not None:
        # An unclosed fence runs to the end of the document: everything GitNeural puts
        # after this text (other findings, coverage, the marker) would show as code. The
        # opener's indentation keeps the closer in the same list item, if any.
        ended = "".join(current).endswith("\n")
        current.append(("" if ended else "\n") + indent + fence[0] * fence[1])
    blocks.append((fence is not None, "".join(current)))
    return [(code, body) for code, body in blocks if body]


def _pieces(text: str, level: int) -> list[Piece]:
    """Level 0: code left alone; 1: inline code treated as text; 2: all treated as text."""
    pieces: list[Piece] = []
    for is_fence, body in _blocks(text):
        if is_fence and level < 2:
            pieces.append(("fence", _MARKER.sub("<!" + ZWJ, body)))
        else:
            pieces.extend(_inline(body, code_spans=level == 0))
    return pieces


def _cut_fence(body: str, room: int) -> tuple[str, int]:
    """The first lines of a fenced block that fit in ``room``, closed again; lines kept."""
    opener = _FENCE_OPEN.match(body)
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


def _last_resort(text: str, limit: int) -> str:
    text = _AT_ENTITY.sub("@", text).replace("<", "&lt;").replace("@", "@" + ZWJ)
    # Escaped backticks open no code fence, whatever is removed around them.
    text = _BANG_BRACKET.sub("[", text.replace("\\", "\\\\").replace("`", "\\`"))
    return _truncate([("text", text)], limit)


def _fences_closed(text: str) -> str:
    """``text`` with a code fence it leaves open closed: removing markup can make one
    (``<!-- x -->```` `` becomes ````` ``` `````), and an open fence would turn everything
    posted after the text (other findings, GitNeural's marker) into code."""
    return "".join(body for _, body in _blocks(text))


def sanitize_markdown(text: str, *, limit: int) -> str:
    """Model text made safe to post on GitHub, at most ``limit`` characters."""
    text = printable(text).replace("\r\n", "\n").replace("\r", "\n").replace("\0", "\ufffd")
    for level in (0, 1, 2):
        out = _fences_closed(_truncate(_pieces(text, level), limit))
        if len(out) > limit:  # no room left for the closing fence: make some
            out = _fences_closed(_truncate(_pieces(text, level), max(0, 2 * limit - len(out))))
        if len(out) <= limit and markdown_problem(out, SAFE_TAGS) is None:
            return out
    return _last_resort(text, limit)


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
        out = _truncate(_inline(text, code_spans, closed=True), limit, one_line=True)
        # Checked where it will sit: after other text on a line, before a code span.
        if markdown_problem(f"x {out} `x`", SAFE_TAGS) is None:
            return out
    escaped = _AT_ENTITY.sub("@", text).replace("\\", "\\\\").replace("`", "\\`")
    escaped = _BANG_BRACKET.sub("[", escaped.replace("<", "&lt;").replace("@", "@" + ZWJ))
    return _truncate([("text", escaped)], limit, one_line=True)


def neutralise_markers(code: str) -> str:
    """``code`` shown in a fenced block of a review body: unchanged to the eye, but no
    ``<!-- gitneural`` in it can be read as GitNeural's marker."""
    return _MARKER.sub("<!" + ZWJ, code)


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

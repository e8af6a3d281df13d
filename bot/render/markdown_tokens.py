"""Model markdown read the way GitHub reads it, into pieces already made safe.

:func:`markdown_pieces` splits a text into fenced blocks (CommonMark's fence rules) and
tokenises the prose between them left to right, as CommonMark does (escapes, code spans,
autolinks, raw HTML). Code is kept as it is; text, tags and images come out with the
treatment :mod:`bot.render.sanitize` describes (mentions, HTML comments, images, raw HTML).
Cutting the pieces to a length and checking the result are left to that module.
"""

from __future__ import annotations

import bisect
import html
import re
from urllib.parse import quote

ZWJ = "\u200d"
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
FENCE_OPEN = re.compile(r" {0,3}(`{3,}|~{3,})(.*)")
_TABLE_DELIMITER = re.compile(
    r"^ {0,3}\|?[ \t]*:?-+:?[ \t]*(\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*$", re.MULTILINE
)
_RUN = re.compile(r"`+")
_SHORT_COMMENT = re.compile(r"<!---?>")
BANG_BRACKET = re.compile(r"!+\[")
#: Openers whose closer must follow somewhere, or scanning for it is wasted work.
_CLOSERS = {"<!--": "-->", "<?": "?>", "<![CDATA[": "]]>"}
_ASCII_PUNCT = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")
AT_ENTITY = re.compile(r"&#0*64;|&#[xX]0*40;|&commat;")
# GitHub autolinks these (so a mention inside is link text): scheme or www., after a
# line start, a blank or one of * _ ~ (.
_URL = re.compile(r"(?<![^\s*_~(])(?:https?://|www\.)[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+[^\s<]*")
_MENTION_AT = re.compile(r"(?<![A-Za-z0-9_])@(?=[A-Za-z0-9])")
MARKER = re.compile(r"<!(?=--\s*gitneural)", re.IGNORECASE)
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
    text = AT_ENTITY.sub("@", text).replace("<", "&lt;")
    text = BANG_BRACKET.sub("[", _EMPTY_IMAGE.sub("[image](", text))
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


def inline_pieces(source: str, code_spans: bool, closed: bool = False) -> list[Piece]:
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
                pieces.append(("code", MARKER.sub("<!" + ZWJ, source[i:end])))
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


def fenced_blocks(text: str) -> list[tuple[bool, str]]:
    """Split into (is_fenced_code, text) by CommonMark's fence rules."""
    blocks: list[tuple[bool, str]] = []
    current: list[str] = []
    fence: tuple[str, int] | None = None
    indent = ""
    lines = text.split("\n")
    for number, line in enumerate(lines):
        ending = "\n" if number < len(lines) - 1 else ""
        if fence is None:
            opened = FENCE_OPEN.fullmatch(line)
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


def markdown_pieces(text: str, level: int) -> list[Piece]:
    """Level 0: code left alone; 1: inline code treated as text; 2: all treated as text."""
    pieces: list[Piece] = []
    for is_fence, body in fenced_blocks(text):
        if is_fence and level < 2:
            pieces.append(("fence", MARKER.sub("<!" + ZWJ, body)))
        else:
            pieces.extend(inline_pieces(body, code_spans=level == 0))
    return pieces

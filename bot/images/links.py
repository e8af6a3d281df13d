"""The images and videos a pull request's description (or a comment) shows, found in
the HTML GitHub renders for it (the ``full`` media type's ``body_html``), where private
repositories' attachments appear as signed ``private-user-images`` links; or, without
it, in the Markdown as written.

Each image keeps the words just before it (and its alt text) as its label, so K3 and
the reader know which "before" or "after" it is.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from html.parser import HTMLParser

from bot.images.hosts import is_video

#: How much of the text before an image its label keeps.
LABEL_CHARS = 160
_SPACE = re.compile(r"\s+")
_PARAGRAPH = re.compile(r"\n\s*\n")
_MD_IMAGE = re.compile(r"!\[([^\]]*)\]\(\s*<?([^)\s>]+)>?[^)]*\)")
_MD_TAG = re.compile(r"<(img|video)\b[^>]*\bsrc\s*=\s*[\"']([^\"']+)[\"']", re.IGNORECASE)
_MD_BARE = re.compile(r"(?<![(\"'<])https://github\.com/user-attachments/assets/[\w-]+")


@dataclass(frozen=True)
class Link:
    url: str
    #: The text before it and its alt text, whitespace collapsed.
    label: str
    video: bool = False


#: Tags that start a block of text: an image's label is the text of its own block so
#: far, or the block before when its own has none ("Before:" on a line above it).
_BLOCKS = frozenset(
    {"p", "li", "div", "br", "tr", "td", "th", "h1", "h2", "h3", "h4", "h5", "h6", "blockquote"}
)


class _Collector(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.blocks: list[list[str]] = [[]]
        self.links: list[Link] = []

    def _before(self) -> str:
        for block in reversed(self.blocks[-2:]):
            text = _SPACE.sub(" ", "".join(block)).strip()
            if text:
                return text[-LABEL_CHARS:]
        return ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {k: v or "" for k, v in attrs}
        if tag in _BLOCKS:
            self.blocks.append([])
        if tag == "img" and values.get("src"):
            self._add(values["src"], values.get("alt", "").strip())
        elif tag in ("video", "source") and values.get("src"):
            self._add(values["src"], "", video=True)
        elif tag == "a" and is_video(values.get("href", "")):
            self._add(values["href"], "", video=True)

    def _add(self, url: str, alt: str, *, video: bool = False) -> None:
        url = url.strip()
        if any(link.url == url for link in self.links):
            return
        before = self._before()
        label = " ".join(p for p in (before, f"[{alt}]" if alt else "") if p)
        self.links.append(Link(url, label, video=video or is_video(url)))
        # The next image's label starts after this one.
        self.blocks.append([])

    def handle_data(self, data: str) -> None:
        self.blocks[-1].append(data)


def html_links(html: str) -> list[Link]:
    """The images and videos of rendered HTML, in order, each once."""
    collector = _Collector()
    collector.feed(html)
    collector.close()
    return collector.links


def markdown_links(text: str) -> list[Link]:
    """The images and videos of Markdown as written, when no HTML rendering is at hand."""
    found: list[tuple[int, int, str, str]] = []
    found += [(m.start(), m.end(), m.group(2), m.group(1)) for m in _MD_IMAGE.finditer(text)]
    found += [(m.start(), m.end(), m.group(2), "") for m in _MD_TAG.finditer(text)]
    found += [(m.start(), m.end(), m.group(0), "") for m in _MD_BARE.finditer(text)]
    links: list[Link] = []
    after = 0
    for start, end, url, alt in sorted(found):
        if start < after or any(link.url == url for link in links):
            continue
        paragraphs = [p for p in _PARAGRAPH.split(text[after:start]) if p.strip()]
        before = _SPACE.sub(" ", paragraphs[-1]).strip()[-LABEL_CHARS:] if paragraphs else ""
        label = " ".join(p for p in (before, f"[{alt}]" if alt else "") if p)
        links.append(Link(url, label, video=is_video(url)))
        after = end
    return links

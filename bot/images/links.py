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
_MD_IMAGE = re.compile(r"!\[([^\]]*)\]\(\s*<?([^)\s>]+)>?[^)]*\)")
_MD_TAG = re.compile(r"<(img|video)\b[^>]*\bsrc\s*=\s*[\"']([^\"']+)[\"']", re.IGNORECASE)
_MD_BARE = re.compile(r"(?<![(\"'<])https://github\.com/user-attachments/assets/[\w-]+")


@dataclass(frozen=True)
class Link:
    url: str
    #: The text before it and its alt text, whitespace collapsed.
    label: str
    video: bool = False


class _Collector(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.text: list[str] = []
        self.links: list[Link] = []

    def _before(self) -> str:
        return _SPACE.sub(" ", "".join(self.text)).strip()[-LABEL_CHARS:]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {k: v or "" for k, v in attrs}
        if tag == "img" and values.get("src"):
            alt = values.get("alt", "").strip()
            self._add(values["src"], alt)
        elif tag in ("video", "source") and values.get("src"):
            self._add(values["src"], "", video=True)
        elif tag == "a" and is_video(values.get("href", "")):
            self._add(values["href"], "", video=True)

    def _add(self, url: str, alt: str, *, video: bool = False) -> None:
        url = url.strip()
        if any(link.url == url for link in self.links):
            return
        before = self._before()
        label = f"{before} [{alt}]" if alt and before else before or (f"[{alt}]" if alt else "")
        self.links.append(Link(url, label, video=video or is_video(url)))

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def html_links(html: str) -> list[Link]:
    """The images and videos of rendered HTML, in order, each once."""
    collector = _Collector()
    collector.feed(html)
    collector.close()
    return collector.links


def markdown_links(text: str) -> list[Link]:
    """The images and videos of Markdown as written, when no HTML rendering is at hand."""
    found: list[tuple[int, str, str]] = []
    found += [(m.start(), m.group(2), m.group(1)) for m in _MD_IMAGE.finditer(text)]
    found += [(m.start(), m.group(2), "") for m in _MD_TAG.finditer(text)]
    found += [(m.start(), m.group(0), "") for m in _MD_BARE.finditer(text)]
    links: list[Link] = []
    for start, url, alt in sorted(found):
        if any(link.url == url for link in links):
            continue
        before = _SPACE.sub(" ", text[max(0, start - LABEL_CHARS * 2) : start]).strip()
        before = before[-LABEL_CHARS:]
        label = " ".join(p for p in (before, f"[{alt}]" if alt else "") if p)
        links.append(Link(url, label, video=is_video(url)))
    return links

"""Whether markdown is safe to post, judged by GitHub's own parser.

:mod:`bot.render.sanitize` rewrites model text with its own reading of markdown; where
that reading and GitHub's differ (a code span split by a table's pipe, a block that ends
a code span early), a mention could still ping. So the result is rendered with
``cmarkgfm`` (bindings to cmark-gfm, GitHub's fork of cmark, with its extensions) and
the HTML is inspected the way GitHub's filters would see it:

- no ``<img>``, no HTML comment, declaration or processing instruction;
- no element beyond those markdown itself produces and the sanitiser's safe few;
- no text node outside ``a``, ``code`` and ``pre`` (where GitHub never links mentions)
  holding ``@`` + a letter or digit that is not preceded by a letter, digit or ``_``.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

import cmarkgfm
from cmarkgfm.cmark import Options, core_extensions_ensure_registered

# cmark-gfm registers its extensions on the first render, unlocked, and the binding lets go
# of the GIL: two threads rendering first at once both register, and the second aborts the
# whole process ("flag initialization error in cmark_register_node_flag"; a threaded
# worker died so). Done here, under the import lock, it is done once.
core_extensions_ensure_registered()

#: Elements cmark-gfm produces from markdown (tables, task lists, footnotes included).
_MARKDOWN_ELEMENTS = frozenset(
    {"p", "a", "code", "pre", "em", "strong", "del", "ul", "ol", "li", "blockquote", "hr"}
    | {"br", "table", "thead", "tbody", "tr", "th", "td", "input", "section", "sup"}
    | {"h1", "h2", "h3", "h4", "h5", "h6"}
)
#: Where GitHub does not turn ``@name`` into a mention.
_NO_MENTIONS = frozenset({"a", "code", "pre"})
_VOID = frozenset({"br", "hr", "input", "img"})
MENTION = re.compile(r"(?<![A-Za-z0-9_])@[A-Za-z0-9]")


class _Inspector(HTMLParser):
    def __init__(self, allowed: frozenset[str]) -> None:
        super().__init__(convert_charrefs=True)
        self.allowed = allowed
        self.quiet = 0  # depth inside elements where mentions do not ping
        self.problem: str | None = None

    def _flag(self, problem: str) -> None:
        self.problem = self.problem or problem

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "img":
            self._flag("an image")
        elif tag not in self.allowed:
            self._flag(f"an HTML element <{tag}>")
        if tag in _NO_MENTIONS:
            self.quiet += 1

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)
        if tag in _NO_MENTIONS:
            self.quiet -= 1

    def handle_endtag(self, tag: str) -> None:
        if tag in _NO_MENTIONS and tag not in _VOID:
            self.quiet = max(0, self.quiet - 1)

    def handle_data(self, data: str) -> None:
        if not self.quiet and MENTION.search(data):
            self._flag("a mention")

    def handle_comment(self, data: str) -> None:
        self._flag("an HTML comment")

    def handle_decl(self, decl: str) -> None:
        self._flag("an HTML declaration")

    def handle_pi(self, data: str) -> None:
        self._flag("a processing instruction")

    def unknown_decl(self, data: str) -> None:
        self._flag("an HTML declaration")


def render_github(markdown: str) -> str:
    """HTML as cmark-gfm renders ``markdown`` with raw HTML kept (before GitHub's filters)."""
    options = Options.CMARK_OPT_UNSAFE | Options.CMARK_OPT_FOOTNOTES
    html: str = cmarkgfm.github_flavored_markdown_to_html(markdown, options=options)
    return html


def markdown_problem(markdown: str, safe_tags: frozenset[str] = frozenset()) -> str | None:
    """What would make ``markdown`` unsafe to post on GitHub, or ``None``."""
    inspector = _Inspector(_MARKDOWN_ELEMENTS | safe_tags)
    inspector.feed(render_github(markdown))
    inspector.close()
    return inspector.problem

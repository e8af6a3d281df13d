"""The images of a pull request's review: its description's, fetched from GitHub's
attachment hosts only, before the review core adds those the change's files hold.

``KIMI_IMAGES=0`` and ``[review] images = false`` turn them off; at most ``images_max``
are fetched (the rest are named without a request), each refused past
``image_max_bytes``. ``GITNEURAL_ATTACHMENTS_URL`` adds the origins (comma-separated) a
GitHub Enterprise Server serves its attachments from; tests point it at the fake.
Without Pillow (the ``images`` extra) none is fetched: each is named, and the summary
counts them with the command that installs it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import Literal

from bot.domain.images import ChangeImages, NamedImage, PreparedImage
from bot.gh.attachments import fetch_attachment
from bot.images.hosts import Hosts, shown_link
from bot.images.links import Link, html_links, markdown_links
from bot.images.prepare import not_prepared, pillow_missing, prepare
from bot.images.switch import images_for
from bot.settings.repository import Config

Fetch = Callable[[str, Hosts, int], "bytes | str"]
Source = Literal["description", "comment"]


def deployment_hosts(env: Mapping[str, str] | None = None) -> Hosts:
    env = os.environ if env is None else env
    return Hosts.with_extra(env.get("GITNEURAL_ATTACHMENTS_URL", "").split(","))


def images_wanted(config: Config, env: Mapping[str, str] | None = None) -> bool:
    """Whether a review under ``config`` shows images at all (worth reading a comment for)."""
    return images_for(config, env) is not None


def pull_images(
    body_html: str,
    body: str,
    config: Config,
    env: Mapping[str, str] | None = None,
    *,
    comment: tuple[str, str] | None = None,
    command: Literal["/review", "/ask"] = "/review",
    fetch: Fetch = fetch_attachment,
) -> ChangeImages | None:
    """The description's images under ``config`` (None when images are off), and those
    of the ``command`` comment that asked (its body and ``body_html``): after the
    description's for ``/review``, before them for ``/ask``, whose question they are
    likely about (the cap keeps the first)."""
    wanted = images_for(config, env)
    if wanted is None:
        return None
    hosts = deployment_hosts(env)
    lacking = pillow_missing()
    found: list[tuple[list[Link], Source, str]] = [
        (_links(body_html, body), "description", "the description's")
    ]
    if comment is not None:
        asked: tuple[list[Link], Source, str] = (
            _links(comment[1], comment[0]),
            "comment",
            f"the {command} comment's",
        )
        found.insert(len(found) if command == "/review" else 0, asked)
    for links, source, whose in found:
        _described(links, wanted, hosts, fetch, source, whose, lacking)
    return wanted


def worth_reading(body: str) -> bool:
    """Whether a comment as written may show an image (any link at all): else its
    rendered HTML, one more request, is not worth reading."""
    return "://" in body


def _links(html: str, markdown: str) -> list[Link]:
    return html_links(html) if html.strip() else markdown_links(markdown)


def _described(
    links: list[Link],
    wanted: ChangeImages,
    hosts: Hosts,
    fetch: Fetch,
    source: Source,
    whose: str,
    lacking: str | None,
) -> None:
    """Each link fetched and prepared, or named with why not; none is fetched when
    ``lacking`` says Pillow is missing (nothing could prepare the bytes)."""
    for number, link in enumerate(links, 1):
        name = f"{whose} {_ordinal(number)} link ({shown_link(link.url)})"
        if link.video:
            wanted.named.append(NamedImage(name, "a video: videos are not sent"))
            continue
        why = hosts.refusal(link.url)
        if why is not None:
            wanted.named.append(NamedImage(name, f"not fetched: {why}"))
            continue
        if lacking is not None:
            wanted.named.append(not_prepared(name, lacking))
            continue
        if len(wanted.described) >= wanted.max_images:
            over = f"over the {wanted.max_images} images a review sends"
            wanted.named.append(NamedImage(name, over))
            continue
        got = fetch(link.url, hosts, wanted.max_bytes)
        if isinstance(got, str):
            wanted.named.append(NamedImage(name, got))
            continue
        label = link.label or "(no text before it)"
        prepared = prepare(got, label, name, wanted.max_bytes, source=source)
        if isinstance(prepared, PreparedImage):
            wanted.described.append(prepared)
        else:
            wanted.named.append(prepared)


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"

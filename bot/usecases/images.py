"""The images of a pull request's review: its description's, fetched from GitHub's
attachment hosts only, before the review core adds those the change's files hold.

``KIMI_IMAGES=0`` and ``[review] images = false`` turn them off; at most ``images_max``
are fetched (the rest are named without a request), each refused past
``image_max_bytes``. ``GITNEURAL_ATTACHMENTS_URL`` adds the origins (comma-separated) a
GitHub Enterprise Server serves its attachments from; tests point it at the fake.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping

from bot.domain.images import ChangeImages, NamedImage, PreparedImage
from bot.gh.attachments import fetch_attachment
from bot.images.hosts import Hosts, shown_link
from bot.images.links import Link, html_links, markdown_links
from bot.images.prepare import prepare
from bot.images.switch import images_for
from bot.settings.repository import Config

Fetch = Callable[[str, Hosts, int], "bytes | str"]


def deployment_hosts(env: Mapping[str, str] | None = None) -> Hosts:
    env = os.environ if env is None else env
    return Hosts.with_extra(env.get("GITNEURAL_ATTACHMENTS_URL", "").split(","))


def pull_images(
    body_html: str,
    body: str,
    config: Config,
    env: Mapping[str, str] | None = None,
    *,
    fetch: Fetch = fetch_attachment,
) -> ChangeImages | None:
    """The description's images under ``config`` (None when images are off)."""
    wanted = images_for(config, env)
    if wanted is None:
        return None
    links = html_links(body_html) if body_html.strip() else markdown_links(body)
    _described(links, wanted, deployment_hosts(env), fetch)
    return wanted


def _described(links: list[Link], wanted: ChangeImages, hosts: Hosts, fetch: Fetch) -> None:
    for number, link in enumerate(links, 1):
        name = f"the description's {_ordinal(number)} link ({shown_link(link.url)})"
        if link.video:
            wanted.named.append(NamedImage(name, "a video: videos are not sent"))
            continue
        why = hosts.refusal(link.url)
        if why is not None:
            wanted.named.append(NamedImage(name, f"not fetched: {why}"))
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
        prepared = prepare(got, label, name, wanted.max_bytes)
        if isinstance(prepared, PreparedImage):
            wanted.described.append(prepared)
        else:
            wanted.named.append(prepared)


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"

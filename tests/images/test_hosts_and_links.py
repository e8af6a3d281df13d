"""The allow-list and the links, on their own: what may be fetched is GitHub's
attachment hosts over https and nothing that merely looks like them; the links of a
rendered body come in order, each with the words before it."""

from __future__ import annotations

import pytest

from bot.images.hosts import Hosts, shown_link
from bot.images.links import html_links, markdown_links
from bot.images.prepare import prepare, sniff
from tests.support.images import photo_png

ASSET = "https://github.com/user-attachments/assets/0a8f1fc7-18b8-87cf-a760-3cb0306df473"


@pytest.mark.parametrize(
    "url",
    [
        ASSET,
        "https://private-user-images.githubusercontent.com/1/2-3.png?jwt=eyJhbGciOi.x.y",
        "https://user-images.githubusercontent.com/1/2.png",
    ],
)
def test_githubs_attachment_hosts_may_be_fetched(url: str) -> None:
    assert Hosts().refusal(url) is None


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("https://evil.example/shot.png", "evil.example is not GitHub's attachment host"),
        ("https://github.com/octo/app/raw/main/a.png", "github.com is not GitHub's"),
        ("http://private-user-images.githubusercontent.com/1/2.png", "not https"),
        ("https://10.0.0.7/shot.png", "an IP address"),
        ("https://[::1]/shot.png", "an IP address"),
        ("https://user-images.githubusercontent.com:8443/1.png", "credentials or a port"),
        ("https://user-images.githubusercontent.com@evil.example/1.png", "evil.example is not"),
        ("https://a:b@user-images.githubusercontent.com/1.png", "credentials or a port"),
        ("https://githubusercontent.com.evil.example/1.png", "is not GitHub's"),
    ],
)
def test_anything_else_is_refused_with_its_reason(url: str, why: str) -> None:
    refusal = Hosts().refusal(url)
    assert refusal is not None and why in refusal


def test_an_extra_origin_is_one_exact_scheme_host_and_port() -> None:
    hosts = Hosts.with_extra(["http://127.0.0.1:8080/", " "])
    assert hosts.refusal("http://127.0.0.1:8080/private-user-images/1/a.png") is None
    assert hosts.refusal("http://127.0.0.1:8081/a.png") is not None
    assert hosts.refusal("https://127.0.0.1:8080/a.png") is not None
    assert hosts.refusal("http://x@127.0.0.1:8080/a.png") is not None


def test_a_shown_link_never_carries_its_signature() -> None:
    url = "https://private-user-images.githubusercontent.com/1/2/3.png?jwt=eyJabc.def.ghi"
    assert shown_link(url) == "private-user-images.githubusercontent.com/…/3.png"


def test_rendered_links_keep_the_words_before_them_and_name_videos() -> None:
    html = (
        "<p>Intro.</p><p>Before:</p><p><a href='x'><img src='https://a/1.png' alt='old'></a></p>"
        "<p>After: <img src='https://a/2.png'> and <img src='https://a/2.png'></p>"
        "<video src='https://a/clip.mp4'></video>"
    )
    links = html_links(html)
    assert [(link.url, link.label, link.video) for link in links] == [
        ("https://a/1.png", "Before: [old]", False),
        ("https://a/2.png", "After:", False),
        ("https://a/clip.mp4", "and", True),
    ]


def test_markdown_links_without_a_rendering() -> None:
    text = f'Intro.\n\nBefore:\n\n![old]({ASSET})\n\nAfter: <img src="https://a/2.png">'
    assert [(link.url, link.label) for link in markdown_links(text)] == [
        (ASSET, "Before: [old]"),
        ("https://a/2.png", "After:"),
    ]


def test_the_type_is_sniffed_from_the_bytes_not_the_name() -> None:
    assert sniff(photo_png(8, 8)) == "png"
    assert sniff(b"<svg xmlns='http://www.w3.org/2000/svg'/>") is None
    named = prepare(b"GIF89a" + b"\0" * 20, "x", "shot.gif", 1000)
    assert getattr(named, "reason", "").startswith("unreadable GIF")
    assert getattr(prepare(photo_png(8, 8), "x", "a.png", 100), "reason", "") == (
        "larger than 0.0001 MB"
    )

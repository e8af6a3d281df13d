"""A pull request's screenshots reach K3, in process: the App's review job on the fake
GitHub (its ``body_html`` signs each pasted image as GitHub does for a private
repository, and it serves the bytes there), the K3 stub, real git.

Only the attachment host is ever asked: a link to another host in the same description
is named in the review and has no hit; beyond six images, or past 5 MB, an image is
named, not sent; a text-only server's 400 gives a review without them, saying so. The
walkthrough lists the images K3 was shown and those it was not.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PIL import Image, ImageChops

from bot.usecases.review.run import run_review_job
from tests.fakes.k3.handler import image_urls
from tests.support.images import decoded, has_metadata, photo_png
from tests.support.job_world import REPO, World, job_world, submit

EIGHT_MB = b"\x89PNG\r\n\x1a\n" + bytes(8_000_000)
WALKTHROUGH = {
    "summary": "Fixes the save button; the screenshot shows it below the title.",
    "files": [{"path": "people.py", "note": "The age check."}],
}


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[World]:
    with job_world(tmp_path) as w:
        # The fake stands in for GitHub's attachment host (as a GitHub Enterprise
        # Server's own host would); every other host stays refused.
        monkeypatch.setenv("GITNEURAL_ATTACHMENTS_URL", w.gh.store.web_url)
        monkeypatch.delenv("KIMI_IMAGES", raising=False)
        yield w


def _review_body(w: World, body: str) -> str:
    w.gh.edit_pull(REPO, w.number, body=body)
    w.stub.push(submit(summary="Looked at the change."))
    outcome = run_review_job(w.job("opened"), w.ctx)
    assert outcome.status == "posted", outcome.detail
    [review] = w.reviews()
    return str(review["body"])


def _texts(body: dict[str, Any]) -> list[str]:
    return [
        str(part["text"])
        for m in body["messages"]
        if isinstance(m["content"], list)
        for part in m["content"]
        if part["type"] == "text"
    ]


def _hits(w: World, pattern: str) -> int:
    return len(w.gh.requests(path=pattern))


def test_the_signed_screenshot_reaches_k3_downscaled_and_no_other_host_is_asked(
    world: World,
) -> None:
    shot = photo_png(3000, 1200)
    link = world.gh.attach(REPO, shot)
    other = world.gh.serve_elsewhere("tracker.png", photo_png(64, 64))
    bounce = world.gh.attach(REPO, photo_png(64, 64), redirect_to=other)
    body = (
        "The save button overlapped the title; after the fix:\n\n"
        f'![after]({link})\n\nA tracking pixel: <img src="{other}">\n\n'
        f"Redirected: ![away]({bounce}) and an address: ![ip](https://10.0.0.7/shot.png)\n"
    )
    posted = _review_body(world, body)
    [chat] = world.stub.chat_requests
    [uri] = image_urls(chat.body)
    picture = decoded(uri)
    served = Image.open(io.BytesIO(shot)).convert("RGB")
    served.thumbnail((2048, 2048), Image.Resampling.LANCZOS)
    assert picture.size == served.size == (2048, 819)
    assert ImageChops.difference(picture.convert("RGB"), served).getbbox() is None
    assert not has_metadata(picture)
    label = _texts(chat.body)[1]
    assert "overlapped the title; after the fix: [after]" in label
    assert "<untrusted-" in label  # the description's words, fenced
    assert _hits(world, "/private-user-images/*") == 1  # the signed link, once
    # The signed link straight away; the unsigned one met its redirect and stopped there.
    assert _hits(world, "/user-attachments/*") == 1
    assert _hits(world, "/elsewhere/*") == 0  # never requested, linked or redirected to
    assert "Images looked at: the description's 1st link (127.0.0.1:" in posted
    assert "(not fetched: localhost is not GitHub's attachment host)" in posted
    assert "(not fetched: redirected to localhost:" in posted
    assert "10.0.0.7/shot.png) (not fetched: an IP address" in posted


def test_a_seventh_image_and_an_8_mb_one_are_named_not_sent(world: World) -> None:
    big = world.gh.attach(REPO, EIGHT_MB)
    small = [world.gh.attach(REPO, photo_png(300, 200, color=10 * i)) for i in range(7)]
    body = f"Huge: ![huge]({big})\n\n" + "\n\n".join(
        f"Step {i}: ![step {i}]({link})" for i, link in enumerate(small, 1)
    )
    posted = _review_body(world, body)
    [chat] = world.stub.chat_requests
    assert len(image_urls(chat.body)) == 6
    assert "Step 6: [step 6]" in _texts(chat.body)[-1]
    assert "larger than 5 MB" in posted
    assert "over the 6 images a review sends" in posted
    # The seventh was not even fetched; the 8 MB one was refused on its length.
    assert _hits(world, "/private-user-images/*") == 7


def test_a_text_only_server_gets_a_review_without_the_images_and_a_note(world: World) -> None:
    world.stub.images = False  # vLLM serving K3 without its vision tower
    link = world.gh.attach(REPO, photo_png(400, 300))
    posted = _review_body(world, f"After: ![after]({link})")
    first, second = world.stub.chat_requests
    assert first.status == 400 and len(image_urls(first.body)) == 1
    assert second.status == 200 and image_urls(second.body) == []
    assert "the model server does not accept images" in posted


def test_kimi_images_0_fetches_nothing(world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KIMI_IMAGES", "0")
    link = world.gh.attach(REPO, photo_png(400, 300))
    posted = _review_body(world, f"After: ![after]({link})")
    [chat] = world.stub.chat_requests
    assert image_urls(chat.body) == []
    assert _hits(world, "/private-user-images/*") == 0
    assert "Images" not in posted


def test_the_review_comments_screenshot_comes_after_the_descriptions(world: World) -> None:
    first = world.gh.attach(REPO, photo_png(400, 300, color=0))
    second = world.gh.attach(REPO, photo_png(300, 400, color=200))
    world.gh.edit_pull(REPO, world.number, body=f"Before: ![before]({first})")
    asked = world.gh.add_issue_comment(
        REPO, world.number, f"/review\n\nThe form after the fix: ![after]({second})"
    )
    world.stub.push(submit(summary="Looked at the change."))
    job = world.job("command", comment_id=asked["id"], requested_by="alice")
    outcome = run_review_job(job, world.ctx)
    assert outcome.status == "posted", outcome.detail
    [chat] = world.stub.chat_requests
    sizes = [decoded(uri).size for uri in image_urls(chat.body)]
    assert sizes == [(400, 300), (300, 400)]
    labels = _texts(chat.body)[1:]
    assert labels[0].startswith("Image 1: from the description, after the words <untrusted-")
    assert labels[1].startswith("Image 2: from the /review comment, after the words <untrusted-")
    assert "The form after the fix: [after]" in labels[1]
    [review] = world.reviews()
    assert "the /review comment's 1st link" in str(review["body"])


def _walkthrough_of(posted: str) -> str:
    start = posted.index("<details open>\n<summary>Walkthrough</summary>")
    return posted[start : posted.index("</details>", start)]


def test_the_walkthrough_names_the_images_looked_at_and_those_not_sent(world: World) -> None:
    link = world.gh.attach(REPO, photo_png(400, 300))
    other = world.gh.serve_elsewhere("tracker.png", photo_png(64, 64))
    world.gh.edit_pull(REPO, world.number, body=f"After: ![after]({link})\n\n![pixel]({other})")
    world.stub.push(submit(summary="Looked at the change.", walkthrough=WALKTHROUGH))
    outcome = run_review_job(world.job("opened"), world.ctx)
    assert outcome.status == "posted", outcome.detail
    [chat] = world.stub.chat_requests
    assert "In the walkthrough, say which of the images you looked at" in _texts(chat.body)[0]
    [review] = world.reviews()
    shown = _walkthrough_of(str(review["body"]))
    assert "**Images**\n\n- looked at: `the description's 1st link (127.0.0.1:" in shown
    assert "jwt=" not in shown  # the link's host and path, never its signature
    assert (
        "- not sent: `the description's 2nd link (localhost:" in shown.split("- looked at:", 1)[1]
    )
    assert "(not fetched: localhost is not GitHub's attachment host)" in shown


def test_a_text_only_servers_walkthrough_says_the_images_were_not_sent(world: World) -> None:
    world.stub.images = False
    link = world.gh.attach(REPO, photo_png(400, 300))
    world.gh.edit_pull(REPO, world.number, body=f"After: ![after]({link})")
    world.stub.push(submit(summary="Looked at the change.", walkthrough=WALKTHROUGH))
    assert run_review_job(world.job("opened"), world.ctx).status == "posted"
    [review] = world.reviews()
    shown = _walkthrough_of(str(review["body"]))
    assert "- not sent: `the description's 1st link (127.0.0.1:" in shown
    assert "(the model server does not accept images)" in shown and "looked at" not in shown

"""An ``/ask`` comment's screenshots reach K3, in process: the App's conversation job on
the fake GitHub (it renders the comment's ``body_html`` with signed image links, as for
a private repository, and serves the bytes), the K3 stub, real git.

The question's images come first, labelled as the ``/ask`` comment's, then the
description's; a link to another host is named in the answer and has no hit; a
text-only server's 400 gives an answer without them, saying so; ``KIMI_IMAGES=0``
fetches nothing and reads the comment no second time.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bot.commands.dispatch import run_conversation
from bot.jobs import ConversationJob
from tests.fakes.k3.handler import image_urls
from tests.support.conversation import ASK_ANSWER, conversation_reply
from tests.support.images import decoded, has_metadata, photo_png
from tests.support.job_world import REPO, World, job_world


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[World]:
    with job_world(tmp_path) as w:
        # The fake stands in for GitHub's attachment host; every other host stays refused.
        monkeypatch.setenv("GITNEURAL_ATTACHMENTS_URL", w.gh.store.web_url)
        monkeypatch.delenv("KIMI_IMAGES", raising=False)
        w.stub.brain = conversation_reply
        yield w
        assert w.stub.brain_errors == []


def _ask(w: World, text: str) -> tuple[dict[str, Any], str]:
    """The ``/ask`` comment and GitNeural's answer to it."""
    comment = w.gh.add_issue_comment(REPO, w.number, text)
    job = ConversationJob(
        installation_id=1,
        repo=REPO,
        pr_number=w.number,
        trigger="ask",
        comment_id=comment["id"],
        delivery_id=f"delivery-ask-{comment['id']}",
        requested_by=comment["user"]["login"],
        author_association=comment["author_association"],
        created_at=comment["created_at"],
    )
    outcome = run_conversation(job, w.ctx)
    assert outcome.status == "answered", outcome.detail
    [answer] = [c for c in w.gh.issue_comments(REPO, w.number) if c["id"] != comment["id"]]
    return comment, str(answer["body"])


def _labels(body: dict[str, Any]) -> list[str]:
    return [
        str(part["text"])
        for m in body["messages"]
        if isinstance(m["content"], list)
        for part in m["content"]
        if part["type"] == "text" and str(part["text"]).startswith("Image ")
    ]


def _hits(w: World, pattern: str) -> int:
    return len(w.gh.requests(path=pattern))


def test_the_ask_comments_screenshot_reaches_k3_before_the_descriptions(world: World) -> None:
    described = world.gh.attach(REPO, photo_png(300, 400, color=200))
    world.gh.edit_pull(REPO, world.number, body=f"Before: ![before]({described})")
    asked = world.gh.attach(REPO, photo_png(3000, 1200))
    other = world.gh.serve_elsewhere("tracker.png", photo_png(64, 64))
    comment, answer = _ask(
        world,
        f"/ask Does the form look like this after the change?\n\n![form]({asked})\n\n"
        f'<img src="{other}">',
    )
    first, second = world.stub.chat_requests  # a tool turn, then the answer
    sizes = [decoded(uri).size for uri in image_urls(first.body)]
    assert sizes == [(2048, 819), (300, 400)]  # the question's downscaled, then the PR's
    assert not any(has_metadata(decoded(uri)) for uri in image_urls(first.body))
    assert image_urls(second.body) == image_urls(first.body)  # the same prefix each turn
    labels = _labels(first.body)
    assert labels[0].startswith("Image 1: from the /ask comment, after the words <untrusted-")
    assert "Does the form look like this after the change?" in labels[0]
    assert labels[1].startswith("Image 2: from the description, after the words <untrusted-")
    user = next(m for m in first.body["messages"] if m["role"] == "user")
    assert "The question may be about them" in user["content"][0]["text"]
    assert _hits(world, "/private-user-images/*") == 2
    # Read once more as GitHub renders it, for the signed links.
    assert _hits(world, f"/repos/{REPO}/issues/comments/{comment['id']}") == 1
    assert _hits(world, "/elsewhere/*") == 0
    assert answer.startswith("> Does the form look like this after the change?\n\n" + ASK_ANSWER)
    assert "Images looked at: the /ask comment's 1st link (127.0.0.1:" in answer
    assert "; the description's 1st link (127.0.0.1:" in answer
    assert "the /ask comment's 2nd link (localhost:" in answer
    assert "(not fetched: localhost is not GitHub's attachment host)" in answer


def test_the_ask_comments_images_count_against_the_cap_first(world: World) -> None:
    described = world.gh.attach(REPO, photo_png(300, 400, color=200))
    world.gh.edit_pull(REPO, world.number, body=f"Before: ![before]({described})")
    links = [world.gh.attach(REPO, photo_png(200, 100, color=10 * i)) for i in range(6)]
    _, answer = _ask(
        world,
        "/ask Which step is wrong?\n\n" + "\n\n".join(f"![s{i}]({u})" for i, u in enumerate(links)),
    )
    first = world.stub.chat_requests[0]
    assert [decoded(u).size for u in image_urls(first.body)] == [(200, 100)] * 6
    assert "the description's 1st link" in answer and "over the 6 images a review sends" in answer
    assert _hits(world, "/private-user-images/*") == 6  # the seventh was not fetched


def test_a_text_only_server_gets_the_question_without_its_images_and_a_note(
    world: World,
) -> None:
    world.stub.images = False  # vLLM serving K3 without its vision tower
    link = world.gh.attach(REPO, photo_png(400, 300))
    _, answer = _ask(world, f"/ask Is this right? ![shot]({link})")
    refused, *answered = world.stub.chat_requests
    assert refused.status == 400 and len(image_urls(refused.body)) == 1
    assert answered and all(r.status == 200 and image_urls(r.body) == [] for r in answered)
    assert ASK_ANSWER in answer
    assert "the model server does not accept images, so the answer was made without" in answer


def test_kimi_images_0_fetches_nothing_and_reads_the_question_once(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KIMI_IMAGES", "0")
    link = world.gh.attach(REPO, photo_png(400, 300))
    comment, answer = _ask(world, f"/ask Is this right? ![shot]({link})")
    assert all(image_urls(r.body) == [] for r in world.stub.chat_requests)
    assert _hits(world, "/private-user-images/*") == 0
    assert _hits(world, f"/repos/{REPO}/issues/comments/{comment['id']}") == 0
    assert "Images" not in answer


def test_a_question_without_a_link_costs_no_second_read(world: World) -> None:
    comment, answer = _ask(world, "/ask What does this change do?")
    assert _hits(world, f"/repos/{REPO}/issues/comments/{comment['id']}") == 0
    assert "Images" not in answer and ASK_ANSWER in answer

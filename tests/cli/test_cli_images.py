"""Images through ``gitneural review`` (the installed command, as a subprocess) against
the K3 stub: a commit that adds a PNG sends it as an image part, downscaled and without
its EXIF; with ``KIMI_IMAGES=0`` it sends none."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.test_cli_review import run_cli, stub_env, submit
from tests.fakes.k3 import K3Stub
from tests.fakes.k3.brain import call, tools_reply
from tests.fakes.k3.handler import image_urls
from tests.support.images import decoded, has_metadata, photo_png
from tests.support.repos import commit, make_repo

ARGS = ["review", "--base", "HEAD~1", "--effort", "low", "--format", "json"]


def _repo(root: Path) -> Path:
    repo = make_repo(root / "repo")
    commit(repo, {"app.py": "TITLE = 'old'\n"}, "base")
    commit(repo, {"app.py": "TITLE = 'new'\n", "docs/screen.png": photo_png()}, "new title")
    return root / "repo"


def _user_parts(body: dict[str, object]) -> list[dict[str, object]]:
    messages = body["messages"]
    assert isinstance(messages, list)
    content = next(m["content"] for m in messages if m["role"] == "user")
    assert isinstance(content, list)
    return content


def test_a_commit_adding_a_png_sends_it_downscaled_without_exif(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    with K3Stub([submit({"summary": "Looked.", "findings": []})]) as stub:
        result = run_cli(ARGS, repo, stub_env(stub))
        [request] = stub.chat_requests
    assert result.returncode == 0, result.stderr
    [uri] = image_urls(request.body)
    picture = decoded(uri)
    assert picture.size == (2048, 819)  # 3000 x 1200, the long side brought to 2,048
    assert not has_metadata(picture)
    parts = _user_parts(request.body)
    # The change's text first (the cached prefix), then a label, then the image.
    assert [p["type"] for p in parts] == ["text", "text", "image_url"]
    assert "Check what each shows against what the change does" in str(parts[0]["text"])
    assert '"docs/screen.png", after the change' in str(parts[1]["text"])
    summary = json.loads(result.stdout)["summary"]
    assert "Images looked at: docs/screen.png (after)." in summary


def test_kimi_images_0_sends_none(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    with K3Stub([submit({"summary": "Looked.", "findings": []})]) as stub:
        result = run_cli(ARGS, repo, {**stub_env(stub), "KIMI_IMAGES": "0"})
        [request] = stub.chat_requests
    assert result.returncode == 0, result.stderr
    assert image_urls(request.body) == []
    user = next(m for m in request.body["messages"] if m["role"] == "user")
    assert isinstance(user["content"], str) and "## Images" not in user["content"]


def test_a_text_only_server_gets_the_review_without_images_and_it_says_so(
    tmp_path: Path,
) -> None:
    repo = _repo(tmp_path)
    with K3Stub([submit({"summary": "Looked.", "findings": []})], images=False) as stub:
        result = run_cli(ARGS, repo, stub_env(stub))
        first, second = stub.chat_requests
    assert result.returncode == 0, result.stderr
    assert first.status == 400 and image_urls(first.body)
    assert second.status == 200 and image_urls(second.body) == []
    summary = json.loads(result.stdout)["summary"]
    assert "the model server does not accept images" in summary


def test_the_dry_run_lists_the_image_and_its_estimate(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    result = run_cli([*ARGS[:-2], "--dry-run"], repo)
    assert result.returncode == 0, result.stderr
    # 2048 x 819 pixels: 74 x 30 patches of 28 pixels.
    assert "Images in the prompt (1):\n  docs/screen.png (after)  2048x819, ~2,220 tokens" in (
        result.stdout
    )


def test_the_estimate_counts_the_image_by_its_pixels(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    args = [*ARGS, "--dry-run"]
    with_image = json.loads(run_cli(args, repo).stdout)
    without = json.loads(run_cli(args, repo, {"KIMI_IMAGES": "0"}).stdout)
    [image] = with_image["images"]
    assert image == {
        "name": "docs/screen.png (after)",
        "width": 2048,
        "height": 819,
        "tokens": 2220,
    }
    # The image's tokens, and its label and the task's lines: never its data URI's length
    # (its 9,800 characters of base64 would count about 3,300).
    added = with_image["estimated_prompt_tokens"] - without["estimated_prompt_tokens"]
    assert 2220 < added < 2220 + 300


def test_the_images_come_after_the_same_text_a_review_without_them_sends(tmp_path: Path) -> None:
    """So K3's prefix cache serves a re-review with images as it does one without."""
    repo = _repo(tmp_path)
    with K3Stub([submit({"summary": "Looked.", "findings": []})] * 2) as stub:
        run_cli(ARGS, repo, {**stub_env(stub), "KIMI_IMAGES": "0"})
        run_cli(ARGS, repo, stub_env(stub))
        plain, pictured = stub.chat_requests
    text = next(m["content"] for m in plain.body["messages"] if m["role"] == "user")
    assert str(_user_parts(pictured.body)[0]["text"]).startswith(text)
    assert plain.body["messages"][0] == pictured.body["messages"][0]  # the system message
    assert pictured.usage is not None and pictured.usage["cached_tokens"] > 0


def test_a_text_only_server_is_refused_once_in_an_agentic_review(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    replies = [
        tools_reply(call("read_file", path="app.py")),
        submit({"summary": "Looked.", "findings": []}),
    ]
    with K3Stub(replies, images=False) as stub:
        result = run_cli([*ARGS[:3], "--effort", "high", *ARGS[5:]], repo, stub_env(stub))
        statuses = [(r.status, len(image_urls(r.body))) for r in stub.chat_requests]
    assert result.returncode == 0, result.stderr
    # Refused once; every later turn sent without the image.
    assert statuses == [(400, 1), (200, 0), (200, 0)]
    assert "the model server does not accept images" in json.loads(result.stdout)["summary"]

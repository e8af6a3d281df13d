"""Images through ``gitneural review`` (the installed command, as a subprocess) against
the K3 stub: a commit that adds a PNG sends it as an image part, downscaled and without
its EXIF; with ``KIMI_IMAGES=0`` it sends none; without Pillow (the ``images`` extra) it
sends none and the summary says so in one line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.cli.test_cli_review import run_cli, stub_env, submit
from tests.fakes.k3 import K3Stub
from tests.fakes.k3.brain import call, tools_reply
from tests.fakes.k3.handler import image_urls
from tests.support.images import decoded, has_metadata, photo_png
from tests.support.repos import commit, make_repo

ARGS = ["review", "--base", "HEAD~1", "--effort", "low", "--format", "json"]
#: ``gitneural ARGS…`` in a process where Pillow cannot be found, as in an install
#: without the ``images`` extra (``tests/cli/test_light_install.py`` runs a real one).
NO_PILLOW = (
    "import sys\n"
    "sys.modules['PIL'] = None  # find_spec says None, import raises ImportError\n"
    "from bot.cli.main import main\n"
    "raise SystemExit(main(sys.argv[1:]))\n"
)


def run_without_pillow(
    args: list[str], cwd: Path, env: dict[str, str]
) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("KIMI_", "MOONSHOT_"))}
    return subprocess.run(
        [sys.executable, "-c", NO_PILLOW, *args],
        cwd=cwd,
        env={**base, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


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


def test_without_pillow_no_image_is_sent_and_the_summary_counts_them(tmp_path: Path) -> None:
    git = make_repo(tmp_path / "repo")
    commit(git, {"app.py": "TITLE = 'old'\n", "docs/old.png": photo_png(64, 64)}, "base")
    change = {"app.py": "TITLE = 'new'\n", "docs/old.png": photo_png(80, 80)}
    commit(git, {**change, "docs/new.png": photo_png()}, "new title")
    repo = tmp_path / "repo"
    with K3Stub([submit({"summary": "Looked.", "findings": []})] * 2) as stub:
        result = run_without_pillow(ARGS, repo, stub_env(stub))
        text = run_without_pillow([*ARGS[:-2], "--quiet"], repo, stub_env(stub))
        requests = stub.chat_requests
    assert result.returncode == 0, result.stderr
    assert [image_urls(r.body) for r in requests] == [[], []]
    user = next(m for m in requests[0].body["messages"] if m["role"] == "user")
    assert isinstance(user["content"], str) and "## Images" not in user["content"]
    # The new PNG, and both sides of the modified one: one line, with the command that
    # installs the extra into this very environment.
    line = f"3 images not sent: Pillow is not installed ({sys.executable} -m pip install "
    summary = json.loads(result.stdout)["summary"]
    assert line in summary and "[images]')." in summary
    assert "docs/new.png" not in summary and "Images looked at" not in summary
    assert text.returncode == 0, text.stderr
    [said] = [ln for ln in text.stdout.splitlines() if "images not sent" in ln]
    assert said.strip().startswith("3 images not sent: Pillow is not installed (")
    # The dry run names each, with the same reason.
    dry = run_without_pillow([*ARGS, "--dry-run"], repo, {})
    assert dry.returncode == 0, dry.stderr
    listed = json.loads(dry.stdout)
    assert listed["images"] == []
    assert [n["name"] for n in listed["images_not_sent"]] == [
        "docs/new.png (after)",
        "docs/old.png (after)",
        "docs/old.png (before)",
    ]
    assert all("Pillow is not installed" in n["reason"] for n in listed["images_not_sent"])


def test_the_walkthrough_names_the_image_sent_in_json_and_text(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    said = {
        "summary": "Looked.",
        "findings": [],
        "walkthrough": {
            "summary": "Renames the title; the screenshot shows the new one.",
            "files": [{"path": "app.py", "note": "The title."}],
        },
    }
    text_args = [a if a != "json" else "text" for a in ARGS]
    with K3Stub([submit(said), submit(said)]) as stub:
        report = run_cli(ARGS, repo, stub_env(stub))
        text = run_cli(text_args, repo, stub_env(stub))
    assert report.returncode == 0 and text.returncode == 0, report.stderr + text.stderr
    walkthrough = json.loads(report.stdout)["walkthrough"]
    assert walkthrough["images"] == [{"what": "docs/screen.png (after)", "not_sent": ""}]
    assert "    Images:\n    - looked at: docs/screen.png (after)\n" in text.stdout


def test_without_pillow_the_walkthrough_says_the_extra_is_missing(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    said = {
        "summary": "Looked.",
        "findings": [],
        "walkthrough": {"summary": "Renames the title.", "files": []},
    }
    with K3Stub([submit(said)]) as stub:
        result = run_without_pillow(ARGS, repo, stub_env(stub))
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["walkthrough"]["images"] == [
        {"what": "docs/screen.png (after)", "not_sent": "the images extra is not installed"}
    ]

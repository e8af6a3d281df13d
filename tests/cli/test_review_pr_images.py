"""``gitneural review --pr`` shows K3 the description's screenshot (the installed
command, as a subprocess, against the fake GitHub and the K3 stub); ``--dry-run`` names
it without a key, and nothing is written to GitHub either way. Without Pillow it fetches
none and says so in one line."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.test_cli_images import run_without_pillow
from tests.cli.test_cli_review import run_cli
from tests.cli.test_review_pr import pr_env
from tests.fakes.k3.handler import image_urls
from tests.support.images import decoded, has_metadata, photo_png
from tests.support.job_world import REPO, job_world, submit


def test_review_pr_sends_the_descriptions_screenshot(tmp_path: Path) -> None:
    with job_world(tmp_path) as w:
        link = w.gh.attach(REPO, photo_png(1200, 900))
        w.gh.edit_pull(REPO, w.number, body=f"The new age check, in the form:\n\n![form]({link})")
        env = pr_env(w, tmp_path, GITNEURAL_ATTACHMENTS_URL=w.gh.web_url)
        dry = run_cli(["review", "--pr", f"{REPO}#{w.number}", "--dry-run"], tmp_path, env)
        w.stub.push(submit(summary="Looked."))
        args = ["review", "--pr", f"{REPO}#{w.number}", "--format", "json", "--quiet"]
        done = run_cli(args, tmp_path, env)
        [chat] = w.stub.chat_requests
        assert w.reviews() == [] and w.gh.forbidden_requests() == []
    assert dry.returncode == 0, dry.stderr
    assert "Images in the prompt (1):\n  the description's 1st link (127.0.0.1:" in dry.stdout
    assert done.returncode == 0, done.stderr
    [uri] = image_urls(chat.body)
    picture = decoded(uri)
    assert picture.size == (1200, 900) and not has_metadata(picture)
    assert "Images looked at: the description's 1st link" in json.loads(done.stdout)["summary"]


def test_review_pr_without_pillow_fetches_no_screenshot(tmp_path: Path) -> None:
    with job_world(tmp_path) as w:
        first = w.gh.attach(REPO, photo_png(1200, 900))
        second = w.gh.attach(REPO, photo_png(64, 64))
        body = f"Before:\n\n![old]({first})\n\nAfter:\n\n![new]({second})"
        w.gh.edit_pull(REPO, w.number, body=body)
        env = pr_env(w, tmp_path, GITNEURAL_ATTACHMENTS_URL=w.gh.web_url)
        w.stub.push(submit(summary="Looked."))
        args = ["review", "--pr", f"{REPO}#{w.number}", "--format", "json", "--quiet"]
        done = run_without_pillow(args, tmp_path, env)
        [chat] = w.stub.chat_requests
        fetched = w.gh.requests(path="*/user-attachments/*")
        assert w.reviews() == [] and w.gh.forbidden_requests() == []
    assert done.returncode == 0, done.stderr
    assert image_urls(chat.body) == [] and fetched == []
    summary = json.loads(done.stdout)["summary"]
    assert "2 images not sent: Pillow is not installed (" in summary
    assert "Images looked at" not in summary

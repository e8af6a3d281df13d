"""``/status``: off without ``GITNEURAL_ADMIN_TOKEN`` (404), 401 with nothing in it for a
missing or wrong token, and with the token a self-contained page that headless Chromium
renders: queue depths, the last day's jobs by outcome, the slowest and the failed ones
with their reasons, this month's usage against budget with its chart, the mirror cache.
The screenshot is kept in ``test-artifacts/status-page.png``."""

from __future__ import annotations

import http.client
import uuid
from pathlib import Path

from bot.web.app import create_app
from bot.web.operations import Operations
from bot.web.settings import WebSettings
from tests.fakes.k3 import Reply
from tests.support.browser import artifacts_dir, chromium
from tests.support.ops import deliver, served, spent_tokens
from tests.support.services import REPO, app_world, outcomes, worker_ready
from tests.support.webhooks import RecordingQueue, serve

TOKEN = "adm-" + uuid.uuid4().hex


def get(address: str, path: str, headers: dict[str, str] | None = None) -> tuple[int, str]:
    conn = http.client.HTTPConnection(address, timeout=10)
    try:
        conn.request("GET", path, headers=headers or {})
        response = conn.getresponse()
        return response.status, response.read().decode()
    finally:
        conn.close()


def test_the_status_page_is_off_without_a_token_and_closed_without_the_right_one(
    tmp_path: Path,
) -> None:
    web = WebSettings(webhook_secret="s", data_dir=tmp_path)
    with serve(create_app(web, RecordingQueue())) as address:
        assert get(address, "/status", {"Authorization": f"Bearer {TOKEN}"})[0] == 404
    app = create_app(web, RecordingQueue(), operations=Operations(admin_token=TOKEN))
    with serve(app) as address:
        for headers in (
            {},
            {"Authorization": "Bearer wrong"},
            {"Authorization": TOKEN},
            {"Authorization": f"Basic {TOKEN}"},
        ):
            status, body = get(address, "/status", headers)
            # The same one line, whatever was sent: nothing of the page.
            assert status == 401 and body.startswith("401 Unauthorized") and len(body) < 100
            assert "<html" not in body and "queue" not in body.lower()
        status, body = get(address, "/status", {"Authorization": f"Bearer {TOKEN}"})
        assert status == 200 and "GitNeural status" in body


def test_the_status_page_renders_in_headless_chromium(tmp_path: Path) -> None:
    with app_world(tmp_path) as w:
        budgets = tmp_path / "budgets.toml"
        budgets.write_text("[installation.1]\nmonthly_tokens = 1_000_000\n")
        env = w.env(
            tmp_path / "data", GITNEURAL_ADMIN_TOKEN=TOKEN, GITNEURAL_BUDGETS_FILE=str(budgets)
        )
        with served(env, tmp_path / "serve.log") as (proc, address):
            worker_ready(proc)
            done = []
            for _ in range(2):
                delivery = str(uuid.uuid4())
                assert deliver(address, "pull_request", w.opened(w.new_pull()), delivery) == 202
                done.append(delivery)
            assert [outcomes(proc, d)[0][0] for d in done] == ["posted", "posted"]
            w.stub.push(Reply.http_error(400, "invalid_request_error", "refused by the stub"))
            failing = str(uuid.uuid4())
            assert deliver(address, "pull_request", w.opened(w.new_pull()), failing) == 202
            assert outcomes(proc, failing)[0][0] == "failed"

            status, body = get(address, "/status")
            assert status == 401 and REPO not in body and "<html" not in body

            with chromium({"Authorization": f"Bearer {TOKEN}"}) as browser:
                browser.get(f"http://{address}/status")
                assert browser.title == "GitNeural status"
                text = {
                    name: browser.find_element("id", name).text
                    for name in ("queues", "jobs", "slowest", "failed", "usage", "mirrors")
                }
                bars = browser.find_elements("css selector", "#usage-chart rect.bar")
                widths = [float(bar.get_attribute("width") or 0) for bar in bars]
                loaded = browser.execute_script(
                    "return performance.getEntriesByType('resource').length"
                )
                browser.save_screenshot(str(artifacts_dir() / "status-page.png"))
    assert "reviews 0" in text["queues"] and "fast 0" in text["queues"]
    assert "review posted 2" in text["jobs"] and "review failed 1" in text["jobs"]
    assert text["slowest"].count(f"{REPO}#") == 3
    assert "refused by the stub" in text["failed"]
    spent = spent_tokens(w.stub)
    share = f"{100 * spent / 1_000_000:.1f}%"
    assert f"1 1 {spent:,} 1,000,000 (installation 1) {share}" in text["usage"]
    assert len(widths) == 1 and 0 < widths[0] < 360
    assert "KiB" in text["mirrors"] or "MiB" in text["mirrors"]
    assert loaded == 0  # nothing fetched beyond the page itself

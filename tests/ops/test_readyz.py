"""``/readyz``: 200 only while the broker, the state store and the database answer; 503
with the reasons otherwise, and 200 again once they are back. ``/healthz`` stays a
liveness check throughout. Redis here is a server of the test's own, on a port of its
own (the machine's shared Redis is never stopped)."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from bot.cli.server.ops_wiring import web_operations
from bot.web.app import create_app
from bot.web.settings import WebSettings
from tests.support.ops import served
from tests.support.services import app_world, free_port, require_redis, wait_for
from tests.support.webhooks import RecordingQueue, http_get, serve
from workers.celeryapp.app import create_publisher
from workers.settings import WorkerSettings


class OwnRedis:
    """``redis-server`` on ``port``, no persistence; stopped and started at will."""

    def __init__(self, port: int, root: Path) -> None:
        self.port, self.root = port, root
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            require_redis()  # skips (fails under CI) with the reason how to get Redis
            pytest.skip("redis-server is not on PATH")
        self.proc = subprocess.Popen(
            [
                binary,
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                str(self.root),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        client = redis.Redis(port=self.port, socket_connect_timeout=0.5)

        def up() -> bool:
            try:
                return bool(client.ping())
            except redis.RedisError:
                return False

        wait_for(up, f"redis-server on port {self.port}", 30)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(timeout=30)


@pytest.fixture
def own_redis(tmp_path: Path) -> Iterator[OwnRedis]:
    server = OwnRedis(free_port(), tmp_path)
    server.start()
    try:
        yield server
    finally:
        server.stop()


def test_readyz_is_503_while_redis_is_down_and_200_once_it_is_back(
    own_redis: OwnRedis, tmp_path: Path
) -> None:
    with app_world(tmp_path) as w:
        url = f"redis://127.0.0.1:{own_redis.port}/0"
        env = w.env(tmp_path / "data", GITNEURAL_BROKER_URL=url)
        with served(env, tmp_path / "serve.log") as (_proc, address):
            ready = http_get(address, "/readyz")
            assert (ready.status, ready.json["status"]) == (200, "ready")
            assert ready.json["checks"] == {"broker": "ok", "state store": "ok", "database": "ok"}

            own_redis.stop()
            down = wait_for(
                lambda: (r := http_get(address, "/readyz")).status == 503 and r,
                "/readyz to say 503",
            )
            checks = down.json["checks"]
            assert down.json["status"] == "unavailable" and checks["database"] == "ok"
            assert checks["broker"].startswith("the broker does not answer")
            assert checks["state store"].startswith("the state store (GITNEURAL_STATE_URL) on")
            assert url not in str(down.json)
            assert http_get(address, "/healthz").status == 200  # alive, only not ready

            own_redis.start()
            wait_for(lambda: http_get(address, "/readyz").status == 200, "/readyz to say 200")


def test_readyz_names_an_unreachable_database(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = {"GITNEURAL_DATA_DIR": str(tmp_path / "data"), "GITHUB_WEBHOOK_SECRET": "s"}
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("GITNEURAL_DATABASE_URL", "postgresql+psycopg://gn:pw-secret@127.0.0.1:1/x")
    web, settings = WebSettings.from_env(), WorkerSettings.from_env()
    operations = web_operations(web, settings, create_publisher(settings))
    with serve(create_app(web, RecordingQueue(), operations=operations)) as address:
        reply = http_get(address, "/readyz")
    assert reply.status == 503
    assert reply.json["checks"]["broker"] == "ok" and reply.json["checks"]["state store"] == "ok"
    reason = reply.json["checks"]["database"]
    assert reason.startswith("cannot reach the store at postgresql+psycopg://gn:***@127.0.0.1:1")
    assert "pw-secret" not in str(reply.json)

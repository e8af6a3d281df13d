"""``gitneural doctor`` against the fake GitHub, the K3 stub, and the machine's Redis and
PostgreSQL ports: every check passes when all is well, and each kind of failure is a
FAIL row with its own fix, the other rows still checked."""

from __future__ import annotations

import re
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.fakes.keys import new_rsa_pem
from tests.support.services import GITNEURAL, AppWorld, app_world, free_port


@dataclass
class Doctor:
    code: int
    out: str

    def row(self, check: str) -> tuple[str, str]:
        """(result, detail and fix) of the row named ``check``."""
        match = re.search(
            rf"^{re.escape(check)} +(ok|FAIL) +(.*(?:\n +fix: .*)?)", self.out, re.MULTILINE
        )
        assert match, f"no {check!r} row in:\n{self.out}"
        return match.group(1), match.group(2)


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AppWorld]:
    with app_world(tmp_path_factory.mktemp("doctor")) as w:
        yield w


def doctor(world: AppWorld, tmp: Path, **changes: str | None) -> Doctor:
    env = world.env(tmp / "data", GITHUB_WEBHOOK_SECRET="a-webhook-secret-" + "x" * 16)
    for name, value in changes.items():
        if value is None:
            env.pop(name, None)
        else:
            env[name] = value
    done = subprocess.run(
        [*GITNEURAL, "doctor"],
        env=env,
        cwd=tmp,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert "Traceback" not in done.stderr, done.stderr
    return Doctor(done.returncode, done.stdout)


def test_every_check_passes_when_all_is_well(world: AppWorld, tmp_path: Path) -> None:
    result = doctor(world, tmp_path)
    assert result.code == 0, result.out
    for check in (
        "settings",
        "model key",
        "model",
        "GitHub App",
        "installations",
        "webhook secret",
        "broker",
        "state store",
        "store",
    ):
        assert result.row(check)[0] == "ok", result.out
    assert "gitneural (id " in result.row("GitHub App")[1]
    assert result.out.rstrip().endswith("every check passed")
    assert world.stub.api_key not in result.out and "PRIVATE KEY" not in result.out


def _another_key() -> str:
    return new_rsa_pem()


def _closed_port_url(template: str) -> str:
    return template.format(port=free_port())


#: (id, the row that fails, what its detail says, what its fix says, the changes)
CASES: list[tuple[str, str, str, str, Callable[[], dict[str, str | None]]]] = [
    ("bad setting", "settings", "GITNEURAL_WORKER_CONCURRENCY must be a whole number",
     "set it in the environment", lambda: {"GITNEURAL_WORKER_CONCURRENCY": "many"}),
    ("no model key", "model key", "KIMI_API_KEY is not set", "set KIMI_API_KEY",
     lambda: {"KIMI_API_KEY": None}),
    ("model key rejected", "model", "rejected", "KIMI_API_KEY to a valid key",
     lambda: {"KIMI_API_KEY": "sk-not-the-stub-key"}),
    ("model server unreachable", "model", "cannot reach", "check KIMI_BASE_URL",
     lambda: {"KIMI_BASE_URL": _closed_port_url("http://127.0.0.1:{port}/v1")}),
    ("unknown model", "model", "kimi-k9", "check GITNEURAL_MODEL",
     lambda: {"GITNEURAL_MODEL": "kimi-k9"}),
    ("App key does not match", "GitHub App", "HTTP 401", "download a new key",
     lambda: {"GITHUB_PRIVATE_KEY": _another_key()}),
    ("no App id", "GitHub App", "GITHUB_APP_ID is not set", "gitneural setup",
     lambda: {"GITHUB_APP_ID": None}),
    ("no webhook secret", "webhook secret", "GITHUB_WEBHOOK_SECRET is not set",
     "gitneural setup writes it", lambda: {"GITHUB_WEBHOOK_SECRET": None}),
    ("short webhook secret", "webhook secret", "shorter than 16", "long random secret",
     lambda: {"GITHUB_WEBHOOK_SECRET": "short"}),
    ("broker down", "broker", "redis://127.0.0.1", "start the broker",
     lambda: {"GITNEURAL_BROKER_URL": _closed_port_url("redis://127.0.0.1:{port}/0")}),
    ("state store down", "state store", "does not answer", "start Redis",
     lambda: {"GITNEURAL_STATE_URL": _closed_port_url("redis://127.0.0.1:{port}/0")}),
    ("store down", "store", "127.0.0.1", "start the database",
     lambda: {"GITNEURAL_DATABASE_URL":
              _closed_port_url("postgresql+psycopg://gitneural@127.0.0.1:{port}/gitneural")}),
]  # fmt: skip  # a table, kept compact


@pytest.mark.parametrize(
    ("row", "detail", "fix", "changes"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_each_failure_is_reported_with_its_fix(
    world: AppWorld,
    tmp_path: Path,
    row: str,
    detail: str,
    fix: str,
    changes: Callable[[], dict[str, str | None]],
) -> None:
    result = doctor(world, tmp_path, **changes())
    assert result.code == 1, result.out
    result_of_row, text = result.row(row)
    assert result_of_row == "FAIL" and detail in text and "fix: " in text, result.out
    assert fix in text.split("fix: ", 1)[1], result.out
    # One failure does not hide the others' checks.
    assert result.row("store")[0] == ("FAIL" if row == "store" else "ok"), result.out
    assert result.out.rstrip().endswith("check(s) failed")


def test_an_app_installed_nowhere_is_told_where_to_install_it(
    world: AppWorld, tmp_path: Path
) -> None:
    store = world.gh.store
    with store.lock:
        saved = dict(store.installations)
        store.installations.clear()
    try:
        result = doctor(world, tmp_path)
    finally:
        with store.lock:
            store.installations.update(saved)
    verdict, text = result.row("installations")
    assert (result.code, verdict) == (1, "FAIL")
    assert "installed on no account" in text and "/installations/new" in text


def test_an_app_without_a_webhook_secret_on_github_is_told_to_set_one(
    world: AppWorld, tmp_path: Path
) -> None:
    world.gh.set_webhook_secret("")
    try:
        result = doctor(world, tmp_path)
    finally:
        world.gh.set_webhook_secret(None)
    verdict, text = result.row("webhook secret")
    assert (result.code, verdict) == (1, "FAIL")
    assert "unsigned" in text and "Webhook secret" in text


def test_doctor_reads_the_settings_file(world: AppWorld, tmp_path: Path) -> None:
    (tmp_path / "gitneural.env").write_text("GITNEURAL_MODEL=kimi-k9\n")
    assert "kimi-k9" in doctor(world, tmp_path).row("model")[1]


@pytest.mark.parametrize(
    "url",
    [
        # redis-py reads a password from the query string too.
        "redis://127.0.0.1:6379/0?password=pw-in-the-query-qzx",
        # A password holding '#', '/' or '?' breaks a URL parser (the old row crashed with
        # the password's first characters in its error).
        "redis://user:pw#in/the?pass-qzx@127.0.0.1:6379/0",
        "redis://:pw#in-qzx@127.0.0.1:6379/0",
    ],
    ids=["query", "reserved-characters", "no-user"],
)
def test_the_broker_row_never_shows_a_password(world: AppWorld, tmp_path: Path, url: str) -> None:
    result = doctor(world, tmp_path, GITNEURAL_BROKER_URL=url)  # no traceback: see doctor()
    _, text = result.row("broker")
    # The host is shown when it can be told from the password, never a guess at it.
    assert "127.0.0.1:6379/0" in text or "(hidden" in text, result.out
    # Letters, not digits: a random port of the fakes may hold any two digits.
    assert "pw" not in result.out and "qzx" not in result.out, result.out


def test_doctor_reads_the_settings_file_it_is_given(world: AppWorld, tmp_path: Path) -> None:
    elsewhere = tmp_path / "etc" / "app.env"
    elsewhere.parent.mkdir()
    elsewhere.write_text("GITNEURAL_MODEL=kimi-k8\n")
    env = world.env(tmp_path / "data", GITHUB_WEBHOOK_SECRET="a-webhook-secret-" + "x" * 16)
    done = subprocess.run(
        [*GITNEURAL, "doctor", "--settings-file", str(elsewhere)],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert "Traceback" not in done.stderr, done.stderr
    assert "kimi-k8" in Doctor(done.returncode, done.stdout).row("model")[1]


@pytest.mark.slow
def test_doctor_gives_up_on_a_model_that_never_answers(
    world: AppWorld, tmp_path: Path, silent_server: str
) -> None:
    start = time.monotonic()
    result = doctor(world, tmp_path, KIMI_BASE_URL=silent_server)
    elapsed = time.monotonic() - start
    assert result.row("model")[0] == "FAIL"
    # A timeout that must fire, not a benchmark: the server never answers, so only the
    # model check's own 15 s can end it (it waited 60 s); twice that, for a loaded machine.
    assert elapsed < 2 * 15 + 5, elapsed

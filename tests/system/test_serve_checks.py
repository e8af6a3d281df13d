"""``serve`` and ``worker`` check everything before they start, whatever the broker: a
web-only ``serve`` beside a shared broker once started with an App id of letters, a key
that was no PEM and a dead broker, then answered every webhook 503. And a name that is
nearly a setting (a typo) is reported with the setting it was meant to be, by ``serve``,
``worker`` and ``doctor``."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.support.services import GITNEURAL, free_port


def _run(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    base = {"PATH": "/usr/bin:/bin", "GITNEURAL_DATA_DIR": str(cwd / "data")}
    return subprocess.run(
        [*GITNEURAL, *args],
        env={**base, **env},
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _dead_broker() -> str:
    # Nothing listens there: the probe's connection is refused at once.
    return f"redis://:hunter2-not-real@127.0.0.1:{free_port()}/0"


def test_a_web_only_serve_beside_a_shared_broker_checks_the_credentials_too(
    tmp_path: Path,
) -> None:
    env = {
        "GITNEURAL_BROKER_URL": _dead_broker(),
        "GITHUB_WEBHOOK_SECRET": "s3cret",
        "GITHUB_APP_ID": "abc",
        "GITHUB_PRIVATE_KEY": "not a key at all",
    }
    done = _run(["serve", "--port", str(free_port())], tmp_path, env)
    assert done.returncode == 2, done.stderr
    head, *problems = done.stderr.strip().splitlines()
    assert head.startswith("gitneural: error: serve cannot start: 2 settings to fix")
    assert [line.split()[0] for line in problems] == ["GITHUB_APP_ID", "GITHUB_PRIVATE_KEY"]


def test_a_dead_broker_stops_serve_and_worker_before_they_start(
    tmp_path: Path, rsa_pem: str
) -> None:
    env = {
        "GITNEURAL_BROKER_URL": _dead_broker(),
        "GITHUB_WEBHOOK_SECRET": "s3cret",
        "GITHUB_APP_ID": "12345",
        "GITHUB_PRIVATE_KEY": rsa_pem,
        "KIMI_API_KEY": "sk-test-not-a-key",
    }
    for command in (["serve", "--port", str(free_port())], ["worker"]):
        done = _run(command, tmp_path, env)
        assert done.returncode == 2, done.stderr
        [line] = done.stderr.strip().splitlines()
        assert line.startswith("gitneural: error: GITNEURAL_BROKER_URL: the broker does not answer")
        assert "hunter2" not in done.stderr and "127.0.0.1" not in done.stderr


def test_a_typo_is_named_with_the_setting_it_was_meant_to_be(tmp_path: Path) -> None:
    (tmp_path / "gitneural.env").write_text("GITNEURAL_BROKER_ULR=redis://127.0.0.1:6379/0\n")
    meant = "did you mean GITNEURAL_BROKER_URL?"
    serve = _run(
        ["serve", "--port", str(free_port())], tmp_path, {"KIMI_BASE_ULR": "http://127.0.0.1:9/v1"}
    )
    assert serve.returncode == 2  # the required settings are missing too
    warnings = [line for line in serve.stderr.splitlines() if "warning:" in line]
    assert warnings == [
        f"gitneural: warning: GITNEURAL_BROKER_ULR (in gitneural.env) is not a setting: {meant}",
        "gitneural: warning: KIMI_BASE_ULR (in the environment) is not a setting: "
        "did you mean KIMI_BASE_URL?",
    ]
    doctor = _run(["doctor"], tmp_path, {})
    assert doctor.returncode == 1
    rows = [line for line in doctor.stdout.splitlines() if line.startswith("setting names")]
    assert rows == [
        f"setting names     FAIL    GITNEURAL_BROKER_ULR (in gitneural.env) is not a setting: "
        f"{meant}"
    ]


def test_known_names_raise_no_warning(tmp_path: Path) -> None:
    env = {"GITNEURAL_BROKER_URL": _dead_broker(), "GITHUB_WORKSPACE": "/w", "GITHUB_SHA": "x"}
    done = _run(["serve", "--port", str(free_port())], tmp_path, env)
    assert done.returncode == 2
    assert "warning:" not in done.stderr

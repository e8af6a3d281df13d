"""The deployment templates in ``deploy/``: the compose file is valid against the Compose
Specification's JSON schema and runs what the App needs; the container file runs as a
user of its own, installs the ``[app]`` extra and checks ``/readyz``; the systemd units
start commands ``gitneural`` accepts. (``tests/system/test_newcomer.py`` runs the
container file's install and start commands for real.)"""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from bot.cli.main import _build_parser
from tests.support.containerfile import read_containerfile
from tests.support.paths import ROOT

DEPLOY = ROOT / "deploy"
SCHEMA = ROOT / "tests" / "fixtures" / "compose-spec" / "compose_spec.json"
ENV_FILE = "${GITNEURAL_ENV_FILE:?set GITNEURAL_ENV_FILE to your gitneural.env, outside the clone}"


def compose() -> dict[str, Any]:
    loaded = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
    assert isinstance(loaded, dict)
    return loaded


def test_the_compose_file_is_valid_against_the_compose_specification() -> None:
    schema = json.loads(SCHEMA.read_text())
    validator = jsonschema.Draft201909Validator(schema)
    errors = sorted(validator.iter_errors(compose()), key=lambda e: list(e.path))
    assert [f"{list(e.path)}: {e.message}" for e in errors] == []
    # The schema is not a rubber stamp: a misspelt key is refused.
    broken = compose()
    broken["services"]["web"]["comand"] = ["gitneural"]
    assert list(validator.iter_errors(broken))


def test_the_compose_file_runs_web_worker_and_redis_with_profiles_for_the_rest() -> None:
    services = compose()["services"]
    assert services["web"]["command"][:2] == ["gitneural", "serve"]
    assert services["worker"]["command"] == ["gitneural", "worker"]
    always = {name for name, s in services.items() if not s.get("profiles")}
    assert always == {"web", "worker", "redis"}
    assert services["rabbitmq"]["profiles"] == ["rabbitmq"]
    assert services["postgres"]["profiles"] == ["postgres"]
    for name in ("web", "worker"):
        service = services[name]
        assert service["build"]["dockerfile"] == "deploy/Containerfile"
        # The settings file from outside the clone (tests/project/test_build_context.py).
        assert service["env_file"] == [ENV_FILE]
        assert service["environment"]["GITNEURAL_BROKER_URL"].endswith("redis://redis:6379/0}")
    for name in ("web", "worker"):
        _build_parser().parse_args(services[name]["command"][1:])  # flags gitneural accepts


def test_the_container_runs_as_a_user_installs_the_app_and_checks_readyz() -> None:
    image = read_containerfile()
    assert image.user and image.user != "root"
    assert image.install_commands == ["pip install --no-cache-dir '.[app]'"]
    assert image.cmd == ["gitneural", "serve"]
    assert "/readyz" in " ".join(image.healthcheck)
    assert image.env["GITNEURAL_PORT"] == "8000"
    assert image.env["GITNEURAL_HOST"] == "0.0.0.0"  # noqa: S104 - a container listens on all


def unit_file(path: Path) -> dict[str, list[tuple[str, str]]]:
    """A systemd unit's sections as (key, value) lines: keys repeat (``Environment=``)."""
    sections: dict[str, list[tuple[str, str]]] = {}
    current: list[tuple[str, str]] = []
    for line in path.read_text().splitlines():
        if not line.strip() or line.startswith(("#", ";")):
            continue
        if line.startswith("["):
            current = sections.setdefault(line.strip("[]"), [])
            continue
        key, sep, value = line.partition("=")
        assert sep, f"{path.name}: not a key=value line: {line!r}"
        current.append((key.strip(), value.strip()))
    return sections


@pytest.mark.parametrize("unit", ["gitneural-web.service", "gitneural-worker.service"])
def test_the_systemd_units_start_a_command_gitneural_accepts(unit: str) -> None:
    sections = unit_file(DEPLOY / "systemd" / unit)
    service = dict(sections["Service"])
    argv = shlex.split(service["ExecStart"])
    assert Path(argv[0]).name == "gitneural"
    args = _build_parser().parse_args(argv[1:])
    assert args.command == ("serve" if "web" in unit else "worker")
    assert service["User"] == "gitneural" and dict(sections["Install"])["WantedBy"]
    environment = [v for k, v in sections["Service"] if k == "Environment"]
    assert "GITNEURAL_SETTINGS_FILE=/etc/gitneural/gitneural.env" in environment

"""The broker's kind is worked out in one place: the capability record of
``bot.settings.broker``, which every part asks instead of the URL."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from bot.errors import ConfigError
from bot.settings.broker import broker_of
from tests.project.test_layout import modules
from workers.settings import WorkerSettings

SCHEMES = ("redis://", "rediss://", "unix://", "amqp://", "amqps://", "pyamqp://", "sqla+")


@pytest.mark.parametrize(
    ("url", "kind", "host_queues", "key_prefix", "queue_expiry", "state_store"),
    [
        ("", "embedded", False, False, False, None),
        ("sqla+sqlite:////tmp/b.sqlite3", "embedded", False, False, False, None),
        ("redis://127.0.0.1:6379/0", "redis", True, True, False, "redis://127.0.0.1:6379/0"),
        ("amqp://guest:guest@127.0.0.1:5672//", "amqp", True, False, True, None),
    ],
)
def test_each_broker_says_what_it_supports(
    url: str,
    kind: str,
    host_queues: bool,
    key_prefix: bool,
    queue_expiry: bool,
    state_store: str | None,
) -> None:
    broker = broker_of(url)
    assert (broker.kind, broker.host_queues, broker.key_prefix, broker.queue_expiry) == (
        kind,
        host_queues,
        key_prefix,
        queue_expiry,
    )
    assert broker.state_store == state_store
    assert "guest" not in repr(broker)  # the URL, and any password in it, stays out of logs


def test_an_unknown_broker_is_refused_in_one_line_without_its_url() -> None:
    with pytest.raises(ConfigError) as caught:
        broker_of("kafka://user:hunter2@host:9092")
    assert "hunter2" not in str(caught.value) and "\n" not in str(caught.value)


def test_the_workers_settings_read_the_record(tmp_path: Path) -> None:
    settings = WorkerSettings.from_env({"GITNEURAL_BROKER_URL": "redis://127.0.0.1:6379/3"})
    assert settings.broker.kind == "redis" and settings.state_url == "redis://127.0.0.1:6379/3"
    embedded = WorkerSettings.from_env({"GITNEURAL_DATA_DIR": str(tmp_path)})
    assert embedded.broker.embedded and embedded.broker_path is not None


def test_no_module_but_the_record_reads_a_broker_kind_from_a_url_prefix() -> None:
    guessing = []
    for name, module in modules().items():
        if name == "bot.settings.broker":
            continue
        for node in ast.walk(module.tree):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "startswith"
            ):
                texts = [
                    c.value
                    for c in ast.walk(node)
                    if isinstance(c, ast.Constant) and isinstance(c.value, str)
                ]
                if any(t.startswith(SCHEMES) for t in texts):
                    guessing.append(f"{name}:{node.lineno}")
    assert guessing == []

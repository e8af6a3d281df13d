"""Hostile input: whatever a signed (or unsigned) body holds, the webhook answers 4xx or a
decision, never a 5xx, and queues only well-formed jobs."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.jobs import ConversationJob, ReviewJob
from bot.web.app import create_app
from bot.web.settings import WebSettings
from tests.support.webhooks import EVENTS, SECRET, RecordingQueue, headers_for, load

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False)
    | st.text(max_size=50),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4)
    ),
    max_leaves=20,
)
#: What an HTTP header can carry (latin-1, no line breaks).
HEADER_CHARS = st.characters(max_codepoint=255, blacklist_characters="\r\n")
FIXTURE_NAMES = sorted(EVENTS)
HANDLED_EVENTS = sorted(set(EVENTS.values()))
SETTINGS = settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


class Target:
    def __init__(self, tmp: Path) -> None:
        self.queue = RecordingQueue()
        app = create_app(
            WebSettings(webhook_secret=SECRET, data_dir=tmp, max_body_bytes=256 * 1024),
            self.queue,
        )
        self.client = app.test_client()

    def post(self, event: str, body: bytes, **kwargs: Any) -> int:
        before = len(self.queue.jobs) + len(self.queue.conversations)
        headers = headers_for(event, body, delivery=str(uuid.uuid4()), **kwargs)
        resp = self.client.post("/webhook", data=body, headers=headers)
        assert resp.status_code < 500, resp.data
        assert resp.is_json
        queued = len(self.queue.jobs) + len(self.queue.conversations) - before
        assert queued == (1 if resp.json["status"] == "queued" else 0)
        # 202 without a job only for bytes already queued (examples repeat a body).
        assert resp.status_code == 202 or resp.json["status"] != "queued"
        if resp.status_code == 202 and not queued:
            assert resp.json == {"status": "ignored", "reason": "duplicate body"}
        return resp.status_code


@pytest.fixture(scope="module")
def target(tmp_path_factory: pytest.TempPathFactory) -> Target:
    return Target(tmp_path_factory.mktemp("hostile"))


@SETTINGS
@given(body=st.binary(max_size=2000), event=st.sampled_from([*HANDLED_EVENTS, "push"]))
def test_random_bytes(target: Target, body: bytes, event: str) -> None:
    status = target.post(event, body)
    assert status in (200, 400)


@SETTINGS
@given(value=json_values, event=st.sampled_from(HANDLED_EVENTS))
def test_random_json(target: Target, value: Any, event: str) -> None:
    target.post(event, json.dumps(value).encode())


def paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix] if prefix else []
    if isinstance(value, dict):
        for key, item in value.items():
            found += paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += paths(item, (*prefix, index))
    return found


@SETTINGS
@given(
    name=st.sampled_from(FIXTURE_NAMES),
    data=st.data(),
    replacement=json_values,
    delete=st.booleans(),
)
def test_one_field_of_a_real_payload_broken(
    target: Target, name: str, data: st.DataObject, replacement: Any, delete: bool
) -> None:
    payload = load(name)
    if name.startswith("issue_comment"):
        payload["comment"]["body"] = "/review full"  # reach the deepest checks
    path = data.draw(st.sampled_from(paths(payload)))
    *parents, last = path
    holder = payload
    for key in parents:
        holder = holder[key]
    if delete and isinstance(holder, dict):
        del holder[last]
    else:
        holder[last] = replacement
    target.post(EVENTS[name], json.dumps(payload).encode())
    for job in target.queue.jobs:  # every job queued so far is valid and JSON-able
        assert ReviewJob.from_dict(json.loads(json.dumps(job.to_dict()))) == job
    for talk in target.queue.conversations:
        assert ConversationJob.from_dict(json.loads(json.dumps(talk.to_dict()))) == talk


@SETTINGS
@given(
    event=st.text(HEADER_CHARS, min_size=1, max_size=30),
    delivery=st.text(HEADER_CHARS, min_size=1, max_size=300),
)
def test_odd_headers(target: Target, event: str, delivery: str) -> None:
    body = json.dumps(load("pull_request.opened.payload.json")).encode()
    headers = headers_for(event, body)
    headers["X-GitHub-Delivery"] = delivery
    resp = target.client.post("/webhook", data=body, headers=headers)
    assert resp.status_code in (200, 202, 400)


@pytest.mark.parametrize(
    "body",
    [
        b'{"a":' * 50_000 + b"1" + b"}" * 50_000,
        b"[" * 200_000,
        json.dumps(load("pull_request.opened.payload.json")).encode("utf-16"),
        json.dumps(load("pull_request.opened.payload.json")).encode("utf-32"),
        json.dumps({"action": "opened", "x": "é"}).encode("latin-1"),
        b'{"number": ' + b"9" * 5000 + b"}",
        b'{"action": "opened"}' + b"\x00" * 100,
        b"\xef\xbb\xbf" + json.dumps(load("pull_request.opened.payload.json")).encode(),
    ],
)
def test_nested_huge_or_oddly_encoded(target: Target, body: bytes) -> None:
    target.post("pull_request", body)


def test_unsigned_hostile_bodies_are_401(target: Target) -> None:
    for body in (b"[" * 200_000, b"\xff" * 100, b"{}"):
        assert target.post("pull_request", body, signature=None) == 401


def test_body_over_the_cap_is_413(target: Target) -> None:
    assert target.post("pull_request", b" " * (256 * 1024 + 1)) == 413

"""Hostile webhook deliveries beyond ``test_web_hostile.py`` (which covers random bytes and
JSON, one broken field of a real payload, odd event and delivery headers, deep nesting,
UTF-16/32, BOMs, huge numbers, unsigned bodies and the body cap).

Here: JSON that Python reads but GitHub never sends (NaN, Infinity, duplicate keys,
lone surrogates), repository names and ids that would steer API paths, odd methods,
content types and signature headers, ``/review`` comments built from hostile pieces, and
bodies sent chunked or with a lying Content-Length over a real socket. Always a JSON
answer below 500, and only well-formed jobs queued.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import socket
import uuid
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.effort import EFFORTS
from bot.jobs import ReviewJob
from bot.web.app import create_app
from bot.web.settings import WebSettings
from tests.support.webhooks import SECRET, RecordingQueue, comment, headers_for, load, serve

CAP = 64 * 1024
SETTINGS = settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
OPENED = "pull_request.opened.payload.json"


class Target:
    def __init__(self, tmp: Path) -> None:
        self.queue = RecordingQueue()
        self.app = create_app(
            WebSettings(webhook_secret=SECRET, data_dir=tmp, max_body_bytes=CAP), self.queue
        )
        self.client = self.app.test_client()

    def post(self, event: str, body: bytes, **kwargs: Any) -> tuple[int, Any]:
        before = len(self.queue.jobs)
        headers = headers_for(event, body, delivery=str(uuid.uuid4()), **kwargs)
        resp = self.client.post("/webhook", data=body, headers=headers)
        assert resp.status_code < 500, resp.data
        assert resp.is_json, resp.data
        queued = self.queue.jobs[before:]
        assert len(queued) == (1 if resp.status_code == 202 else 0)
        for job in queued:
            assert_well_formed(job)
        return resp.status_code, resp.json


def assert_well_formed(job: ReviewJob) -> None:
    """What a worker can act on: valid, JSON round-trippable, UTF-8 clean."""
    wire = json.dumps(job.to_dict(), ensure_ascii=False).encode("utf-8")
    assert ReviewJob.from_dict(json.loads(wire)) == job
    owner, name = job.repo.split("/")
    assert owner not in (".", "..") and name not in (".", "..")
    assert job.effort in (None, *EFFORTS)


@pytest.fixture(scope="module")
def target(tmp_path_factory: pytest.TempPathFactory) -> Target:
    return Target(tmp_path_factory.mktemp("hostile-webhook"))


def opened(**changes: Any) -> dict[str, Any]:
    payload = load(OPENED)
    for path, value in changes.items():
        *parents, last = path.split(".")
        holder = payload
        for key in parents:
            holder = holder[key]
        holder[last] = value
    return payload


# -- JSON Python accepts and GitHub never sends ---------------------------------------


@pytest.mark.parametrize(
    "body",
    [
        b'{"action": NaN, "number": 1}',
        b'{"action": "opened", "number": Infinity, "pull_request": {"number": -Infinity}}',
        json.dumps(opened()).encode().replace(b'"number": 2', b'"number": NaN'),
        json.dumps(opened(**{"installation.id": 7}))
        .encode()
        .replace(b'"installation": {"id": 7,', b'"installation": {"id": 1e400,'),
        # Duplicate keys: the last one wins in Python; it must still be checked.
        json.dumps(opened()).encode()[:-1] + b', "pull_request": {"number": "two"}}',
        json.dumps(opened()).encode()[:-1] + b', "repository": {"full_name": "x/../../y"}}',
    ],
    ids=["nan-action", "infinities", "nan-number", "overflow-id", "dup-pr", "dup-repo"],
)
def test_json_github_never_sends_is_refused(target: Target, body: bytes) -> None:
    status, _ = target.post("pull_request", body)
    assert status in (200, 400)


surrogates = st.lists(
    st.sampled_from(["\ud800", "\udfff", "\udc80", "a", "/", "é", "\x00", "\u202e"]),
    min_size=1,
    max_size=8,
).map("".join)


def string_paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix] if isinstance(value, str) else []
    if isinstance(value, dict):
        for key, item in value.items():
            found += string_paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += string_paths(item, (*prefix, index))
    return found


@SETTINGS
@given(
    name=st.sampled_from([OPENED, "issue_comment.created.on-pull-request.payload.json"]),
    data=st.data(),
    text=surrogates,
)
def test_lone_surrogates_in_any_string_never_reach_a_job(
    target: Target, name: str, data: st.DataObject, text: str
) -> None:
    payload = load(name)
    event = "pull_request" if name == OPENED else "issue_comment"
    if event == "issue_comment":
        payload["comment"]["body"] = "/review"
    *parents, last = data.draw(st.sampled_from(string_paths(payload)))
    holder = payload
    for key in parents:
        holder = holder[key]
    holder[last] = text
    # json.dumps writes lone surrogates as \ud800 escapes, as a hostile sender would.
    target.post(event, json.dumps(payload).encode())


# -- names and ids that would steer API paths --------------------------------------


@pytest.mark.parametrize(
    "changes",
    [
        {"repository.full_name": "octo/.."},
        {"repository.full_name": "../app"},
        {"repository.full_name": "octo/app?per_page=1"},
        {"repository.full_name": "octo/app#frag"},
        {"repository.full_name": "octo/app%2F..%2Fother"},
        {"repository.full_name": "octo/app name"},
        {"repository.full_name": "octo/app\x00"},
        {"repository.full_name": "octo/\u0430pp"},  # Cyrillic a
        {"repository.full_name": "octo/" + "x" * 300},
        {"pull_request.number": 2**63},
        {"installation.id": 2**80},
    ],
    ids=lambda c: repr(next(iter(c.values())))[:24],
)
def test_repository_names_and_ids_github_never_sends_are_refused(
    target: Target, changes: dict[str, Any]
) -> None:
    status, answer = target.post("pull_request", json.dumps(opened(**changes)).encode())
    assert (status, answer["status"]) == (400, "refused")


def test_a_review_command_comment_id_out_of_range_is_refused(target: Target) -> None:
    changes: dict[str, Any] = {"comment.id": 2**64}
    body = json.dumps(comment("/review", "OWNER", **changes)).encode()
    assert target.post("issue_comment", body)[0] == 400


# -- methods, content types, signatures ---------------------------------------------


@pytest.mark.parametrize("method", ["GET", "PUT", "DELETE", "PATCH", "OPTIONS"])
def test_other_methods_are_refused(target: Target, method: str) -> None:
    before = len(target.queue.jobs)
    resp = target.client.open("/webhook", method=method, data=b"{}")
    if method == "OPTIONS":
        assert resp.status_code == 200 and "POST" in resp.headers["Allow"]
    else:
        assert resp.status_code == 405 and resp.is_json
    assert len(target.queue.jobs) == before


def test_a_form_encoded_delivery_is_refused_not_misread(target: Target) -> None:
    body = b"payload=" + json.dumps(opened()).encode()
    headers = headers_for("pull_request", body)
    headers["Content-Type"] = "application/x-www-form-urlencoded"
    resp = target.client.post("/webhook", data=body, headers=headers)
    assert resp.status_code == 400 and resp.is_json


def _hex(body: bytes, digest: str = "sha256") -> str:
    return hmac.new(SECRET.encode(), body, digest).hexdigest()


BODY = json.dumps(load("ping.with-app_id.payload.json")).encode()


@pytest.mark.parametrize(
    "signature",
    [
        "sha1=" + _hex(BODY, "sha1"),
        "sha256=" + _hex(BODY).upper(),
        "sha256=" + _hex(BODY)[:-1],
        "sha256=" + _hex(BODY) + "00",
        "sha256 = " + _hex(BODY),
        "SHA256=" + _hex(BODY),
        "sha256=" + _hex(BODY, "md5"),
        "sha256=" + "é" * 64,
        "sha256=" + "0" * 10_000,
        "sha256=" + _hex(BODY + b" "),
        "sha256=" + hmac.new(b"", BODY, hashlib.sha256).hexdigest(),
    ],
    ids=[
        "sha1",
        "upper",
        "short",
        "long",
        "spaces",
        "prefix-case",
        "md5",
        "latin1",
        "huge",
        "other-body",
        "empty-secret",
    ],
)
def test_signature_variants_are_401(target: Target, signature: str) -> None:
    assert target.post("ping", BODY, signature=signature)[0] == 401


@SETTINGS
@given(signature=st.text(st.characters(max_codepoint=255, blacklist_characters="\r\n")))
def test_random_signature_headers_are_401(target: Target, signature: str) -> None:
    if signature.strip() == "sha256=" + _hex(BODY):
        return
    assert target.post("ping", BODY, signature=signature or None)[0] == 401


# -- /review comments ------------------------------------------------------------------

command_words = st.lists(
    st.sampled_from(
        [
            "/review",
            "/REVIEW",
            "/reviewer",
            "effort=low",
            "effort=max",
            "effort=medium",
            "effort=",
            "=low",
            "full",
            "FULL",
            "full=1",
            "@octocat",
            "@org/team",
            "ghp_" + "A" * 36,
            "sk-" + "b" * 40,
            "\u200b",
            "\t",
            " ",
            "\n",
            "\r\n",
            "<!-- gitneural:v1 head=x -->",
            "```",
            "é",
            "\x00",
            "effort=low\neffort=max",
        ]
    ),
    max_size=10,
).map(" ".join)


@SETTINGS
@given(words=command_words, association=st.sampled_from(["OWNER", "NONE", "CONTRIBUTOR"]))
def test_review_commands_from_hostile_pieces(target: Target, words: str, association: str) -> None:
    status, answer = target.post("issue_comment", json.dumps(comment(words, association)).encode())
    assert status in (200, 202)
    text = json.dumps(answer)
    # A token pasted after /review is never echoed back (the answer shows in GitHub's
    # delivery log, readable by every admin of the App).
    assert "ghp_" + "A" * 36 not in text and "sk-" + "b" * 40 not in text
    if status == 202:
        job = target.queue.jobs[-1]
        assert association == "OWNER" and job.trigger == "command"


# -- over a real socket -----------------------------------------------------------------


def _raw_exchange(address: str, request: bytes) -> tuple[int, bytes]:
    host, port = address.split(":")
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(request)
        sock.shutdown(socket.SHUT_WR)
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    status = int(data.split(b" ", 2)[1])
    return status, data.partition(b"\r\n\r\n")[2]


def _request(headers: dict[str, str], body: bytes, extra: str = "") -> bytes:
    lines = ["POST /webhook HTTP/1.1", "Host: localhost", "Connection: close"]
    lines += [f"{k}: {v}" for k, v in headers.items()]
    return ("\r\n".join(lines) + "\r\n" + extra + "\r\n").encode("latin-1") + body


def _chunked(body: bytes, size: int = 4096) -> bytes:
    out = b""
    for i in range(0, len(body), size):
        piece = body[i : i + size]
        out += f"{len(piece):x}\r\n".encode() + piece + b"\r\n"
    return out + b"0\r\n\r\n"


def test_chunked_bodies_over_a_real_socket(tmp_path: Path) -> None:
    queue = RecordingQueue()
    app = create_app(
        WebSettings(webhook_secret=SECRET, data_dir=tmp_path, max_body_bytes=CAP), queue
    )
    small = json.dumps(load(OPENED)).encode()
    big = json.dumps({"pad": "x" * CAP, **load(OPENED)}).encode()
    with serve(app) as address:
        ok = _request(
            headers_for("pull_request", small), _chunked(small), "Transfer-Encoding: chunked\r\n"
        )
        over = _request(
            headers_for("pull_request", big), _chunked(big), "Transfer-Encoding: chunked\r\n"
        )
        assert _raw_exchange(address, ok)[0] == 202
        # Werkzeug would cut a chunked body at the cap silently: refused instead.
        assert _raw_exchange(address, over)[0] == 413
    assert len(queue.jobs) == 1


def test_a_content_length_shorter_than_the_body_is_401_not_a_truncated_delivery(
    tmp_path: Path,
) -> None:
    queue = RecordingQueue()
    app = create_app(WebSettings(webhook_secret=SECRET, data_dir=tmp_path), queue)
    body = json.dumps(load(OPENED)).encode()
    headers = headers_for("pull_request", body)
    headers["Content-Length"] = str(len(body) // 2)
    with serve(app) as address:
        status, answer = _raw_exchange(address, _request(headers, body))
    assert status == 401 and json.loads(answer)["status"] == "refused"
    assert queue.jobs == []

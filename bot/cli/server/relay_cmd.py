"""``gitneural relay CHANNEL_URL``: GitHub's webhooks, received by a public relay channel
(smee.io, Probot's relay, or one of your own), forwarded to a ``gitneural serve`` on this
machine, for developing the App on a laptop that GitHub cannot reach.

The channel is a server-sent-events stream: each ``message`` event's data is a JSON object
of the delivery's headers (lower case) plus its ``body`` (the JSON GitHub sent) and
``query``, the format smee.io and smee-client speak. Each is posted to ``--to`` (default
``http://127.0.0.1:8000/webhook``) with GitHub's own headers, so ``serve`` checks the
signature as for a delivery from GitHub itself; nothing else of the channel's is passed on.
A dropped stream is opened again after the wait the channel asked for (``retry:``), or
a backoff up to 30 s. Ctrl-C stops it.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import IO, Any
from urllib.parse import urlsplit

from bot.errors import UsageError

#: The headers a delivery carries that serve reads; the channel's own are dropped.
FORWARDED = ("x-github-event", "x-github-delivery", "x-hub-signature-256", "x-hub-signature")
FORWARDED_PREFIXES = ("x-github-",)
#: GitHub caps a delivery at 25 MB; a bigger event is no delivery of GitHub's.
MAX_EVENT_BYTES = 26 * 1024 * 1024
MAX_BACKOFF = 30.0


def add_parser(commands: Any) -> None:
    relay: argparse.ArgumentParser = commands.add_parser(
        "relay",
        help="forward webhooks from a relay channel (smee.io) to a local serve",
        description="Receive GitHub's webhooks through a public relay channel (create one "
        "at https://smee.io and set it as the App's webhook URL) and post each one to a "
        "local 'gitneural serve', headers and signature intact. For development: a "
        "server GitHub can reach needs no relay.",
    )
    relay.add_argument(
        "channel", metavar="CHANNEL_URL", help="the channel, e.g. https://smee.io/abc"
    )
    relay.add_argument(
        "--to",
        default="http://127.0.0.1:8000/webhook",
        help="where serve takes webhooks (default http://127.0.0.1:8000/webhook)",
    )
    relay.add_argument(
        "--once",
        action="store_true",
        help="stop when the channel closes the stream, instead of opening it again",
    )
    relay.set_defaults(run=run_relay)


@dataclass
class Event:
    name: str = "message"
    data: list[str] = field(default_factory=list)
    retry: float | None = None


def events(lines: Iterable[bytes]) -> Iterator[Event]:
    """Server-sent events from a stream's lines (the WHATWG grammar: ``field: value``
    lines, a blank line ends an event, ``:`` starts a comment)."""
    event, size = Event(), 0
    for raw in lines:
        line = raw.decode("utf-8", "replace").rstrip("\r\n")
        if not line:
            if event.data or event.retry is not None:
                yield event
            event, size = Event(), 0
            continue
        if line.startswith(":"):
            continue
        name, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        size += len(value)
        if size > MAX_EVENT_BYTES:
            raise UsageError("the relay channel sent an event larger than any GitHub delivery")
        if name == "event":
            event.name = value
        elif name == "data":
            event.data.append(value)
        elif name == "retry" and value.isdigit():
            event.retry = int(value) / 1000


def delivery(event: Event) -> tuple[dict[str, str], bytes] | None:
    """The delivery a ``message`` event carries: GitHub's headers and the body, or None
    for the channel's own events (``ready``, ``ping``) and anything that is no delivery."""
    if event.name != "message" or not event.data:
        return None
    try:
        data = json.loads("\n".join(event.data))
    except ValueError:
        return None
    if not isinstance(data, dict) or "body" not in data:
        return None
    headers = {
        k.lower(): str(v)
        for k, v in data.items()
        if isinstance(k, str)
        and (k.lower() in FORWARDED or k.lower().startswith(FORWARDED_PREFIXES))
        and isinstance(v, str | int)
    }
    if "x-github-event" not in headers:
        return None
    # As smee-client sends it: the JSON GitHub sent, written compactly again (GitHub's
    # own is compact, so the signature still matches).
    body = json.dumps(data["body"], separators=(",", ":"), ensure_ascii=False).encode()
    headers["content-type"] = "application/json"
    return headers, body


def forward(to: str, headers: dict[str, str], body: bytes) -> int:
    # Both URLs were checked to be http(s) by run_relay.
    request = urllib.request.Request(to, data=body, headers=headers, method="POST")  # noqa: S310
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:  # noqa: S310
            return int(answer.status)
    except urllib.error.HTTPError as exc:
        return int(exc.code)


def relay(
    channel: str,
    to: str,
    *,
    once: bool = False,
    out: IO[str] = sys.stdout,
    sleep: Callable[[float], None] = time.sleep,
) -> int:
    backoff = 1.0
    while True:
        wait: float | None = None
        try:
            request = urllib.request.Request(  # noqa: S310
                channel, headers={"Accept": "text/event-stream"}
            )
            with urllib.request.urlopen(request, timeout=120) as stream:  # noqa: S310
                print(f"relaying {_shown(channel)} -> {to}", file=out, flush=True)
                backoff = 1.0
                for event in events(stream):
                    if event.retry is not None:
                        wait = event.retry
                    found = delivery(event)
                    if found is None:
                        continue
                    headers, body = found
                    status = _post(to, headers, body)
                    print(
                        f"{headers['x-github-event']} {headers.get('x-github-delivery', '-')}"
                        f" -> {status}",
                        file=out,
                        flush=True,
                    )
        except (urllib.error.URLError, OSError) as exc:
            print(f"relay: the channel dropped ({type(exc).__name__}); again soon", file=out)
        if once:
            return 0
        sleep(wait if wait is not None else backoff)
        backoff = min(backoff * 2, MAX_BACKOFF)


def _post(to: str, headers: dict[str, str], body: bytes) -> str:
    try:
        return str(forward(to, headers, body))
    except (urllib.error.URLError, OSError) as exc:
        return f"not delivered ({type(exc).__name__}: is serve running at {to}?)"


def _shown(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.hostname}{'' if parts.port is None else f':{parts.port}'}/…"


def run_relay(args: argparse.Namespace) -> int:
    for name, url in (("CHANNEL_URL", args.channel), ("--to", args.to)):
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise UsageError(f"{name} must be an http(s):// URL")
    try:
        return relay(args.channel, args.to, once=args.once)
    except KeyboardInterrupt:
        return 0

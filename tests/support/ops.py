"""Helpers of the operations tests: ``gitneural serve`` for the length of a block, signed
deliveries, and what the K3 stub says it spent."""

from __future__ import annotations

import contextlib
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

from tests.fakes.k3 import K3Stub
from tests.support.services import GitNeuralProcess, start_serve
from tests.support.webhooks import encode, headers_for, http_post


@contextlib.contextmanager
def served(env: dict[str, str], log: Path, *args: str) -> Iterator[tuple[GitNeuralProcess, str]]:
    """``gitneural serve ARGS`` until the block ends; the process and its ``host:port``."""
    proc, address = start_serve(env, log, *args)
    try:
        yield proc, address
    finally:
        proc.stop(timeout=60)


def deliver(address: str, event: str, payload: object, delivery: str, **kw: str) -> int:
    """One signed delivery (``secret=`` to sign it wrongly); the answer's status."""
    body = encode(payload)
    headers = headers_for(event, body, delivery=delivery, **kw)
    return http_post(address, "/webhook", body, headers).status


def model_totals(stub: K3Stub) -> dict[str, float]:
    """Tokens by kind (``prompt``, ``cached``, ``completion``) over every answer."""
    totals: Counter[str] = Counter()
    for request in stub.chat_requests:
        usage = request.usage or {}
        totals["prompt"] += usage.get("prompt_tokens", 0)
        totals["cached"] += usage.get("cached_tokens", 0)
        totals["completion"] += usage.get("completion_tokens", 0)
    return {kind: float(n) for kind, n in totals.items()}


def spent_tokens(stub: K3Stub) -> int:
    """Prompt + completion tokens over every answer: what budgets count."""
    totals = model_totals(stub)
    return int(totals.get("prompt", 0) + totals.get("completion", 0))

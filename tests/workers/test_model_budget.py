"""The shared model rate limit: a strict sliding window (never a burst-and-refill bucket)
on real SQLite and real Redis, shared by racing threads, and the K3 client waiting its
turn against a K3 stub that answers 429 above its limit."""

from __future__ import annotations

import contextlib
import json
import math
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.errors import ConfigError, ModelConfigError, ModelTimeoutError
from bot.llm.client import K3Client
from bot.llm.rate_limit import RequestBudget, request_tokens, take
from bot.llm.settings import LLMSettings
from tests.fakes.k3 import K3Stub, Reply
from tests.support.services import REDIS_URL, drop_redis_keys, require_redis, unique_prefix
from workers.settings import WorkerSettings
from workers.state.model_rate_limit import (
    SLACK,
    ModelRateLimit,
    RedisModelBudget,
    SQLiteModelBudget,
    open_model_budget,
)

USER = [{"role": "user", "content": "Review this."}]


@contextlib.contextmanager
def budget_for(kind: str, tmp_path: Path, limit: ModelRateLimit) -> Iterator[RequestBudget]:
    if kind == "sqlite":
        yield SQLiteModelBudget(tmp_path / "budget.sqlite3", limit)
        return
    client = require_redis()
    prefix = unique_prefix()
    store = RedisModelBudget(REDIS_URL, limit, key=f"{prefix}:model-budget")
    yield store
    store.close()
    drop_redis_keys(client, prefix)


@pytest.fixture(params=["sqlite", pytest.param("redis", marks=pytest.mark.redis)])
def kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


# ---- the window -------------------------------------------------------------------------


def test_the_window_slides_it_does_not_refill_in_bursts() -> None:
    limit = ModelRateLimit(requests=3, tokens=0, window=10.0)
    span = 10.0 + SLACK
    assert limit.wait([], 0.0, 1) == 0
    assert limit.wait([(0.0, 1), (1.0, 1)], 2.0, 1) == 0
    # Full: the next place frees when the oldest leaves the window, not at a refill.
    assert limit.wait([(0.0, 1), (1.0, 1), (9.0, 1)], 9.5, 1) == pytest.approx(span - 9.5)
    assert limit.wait([(5.0, 1), (6.0, 1), (7.0, 1)], 9.5, 1) == pytest.approx(5 + span - 9.5)


def test_tokens_count_what_the_gateway_counts_and_too_big_never_fits() -> None:
    limit = ModelRateLimit(requests=0, tokens=100, window=60.0)
    assert limit.wait([(0.0, 60)], 1.0, 40) == 0
    assert limit.wait([(0.0, 60), (2.0, 30)], 3.0, 40) == pytest.approx(60 + SLACK - 3.0)
    assert math.isinf(limit.wait([], 0.0, 101))
    # The prompt estimated from its size, and all the completion tokens it may use.
    size = len(json.dumps(USER).encode())
    assert request_tokens(USER, None, 1000) == 1000 + -(-size // 3)


def test_settings_from_the_environment(tmp_path: Path) -> None:
    settings = WorkerSettings.from_env({"GITNEURAL_DATA_DIR": str(tmp_path)})
    assert open_model_budget(settings, {}) is None  # unset: no limit
    budget = open_model_budget(settings, {"GITNEURAL_MODEL_RPM": "30"})
    assert isinstance(budget, SQLiteModelBudget)
    assert budget.description == "30 requests per 60 s"
    both = ModelRateLimit.from_env({"GITNEURAL_MODEL_RPM": "30", "GITNEURAL_MODEL_TPM": "500000"})
    assert both.description == "30 requests and 500,000 tokens per 60 s"
    with pytest.raises(ConfigError, match="GITNEURAL_MODEL_RPM"):
        ModelRateLimit.from_env({"GITNEURAL_MODEL_RPM": "-1"})
    with pytest.raises(ConfigError, match="GITNEURAL_MODEL_RATE_WINDOW"):
        ModelRateLimit.from_env({"GITNEURAL_MODEL_RATE_WINDOW": "0"})


# ---- the stores ---------------------------------------------------------------------------


def test_racing_threads_never_get_more_than_n_in_any_window(kind: str, tmp_path: Path) -> None:
    limit = ModelRateLimit(requests=3, tokens=0, window=1.0)
    with budget_for(kind, tmp_path, limit) as budget:
        # A grant happens between the call and its return; which moment, only the store
        # knows (and a busy machine may delay either side): keep both.
        called: list[float] = []
        granted: list[float] = []
        lock = threading.Lock()

        def client() -> None:
            for _ in range(3):
                before = time.monotonic()
                take(budget, 10, deadline=None)
                with lock:
                    called.append(before)
                    granted.append(time.monotonic())

        threads = [threading.Thread(target=client) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=60)
        called.sort()
        granted.sort()
        assert len(granted) == 12
        # Any 3 grants apart are at least a window apart: never 4 in one window. The k-th
        # grant came no sooner than the k-th call and no later than the k-th return, so
        # the (i+3)-th return is at least a window after the i-th call (a limiter that
        # let 4 through at once fails it: those calls and returns are milliseconds apart).
        gaps = [granted[i + 3] - called[i] for i in range(len(granted) - 3)]
        assert min(gaps) >= 1.0, gaps
        # And it waited, rather than refusing: 12 requests, 3 per window of 1 s.
        assert granted[-1] - called[0] >= 3 * 1.0


def test_a_request_that_can_never_fit_or_not_in_time_says_so(kind: str, tmp_path: Path) -> None:
    limit = ModelRateLimit(requests=1, tokens=100, window=30.0)
    with budget_for(kind, tmp_path, limit) as budget:
        with pytest.raises(ModelConfigError, match="GITNEURAL_MODEL_TPM"):
            take(budget, 101, deadline=None)
        take(budget, 10, deadline=None)
        with pytest.raises(ModelTimeoutError, match="model rate limit") as info:
            take(budget, 10, deadline=time.monotonic() + 1)
        assert "\n" not in str(info.value)


# ---- the K3 client against a stub that refuses above its limit ----------------------------


def complete_all(stub: K3Stub, budget: RequestBudget | None, n: int) -> None:
    settings = LLMSettings(
        api_key=stub.api_key,
        base_url=stub.base_url,
        effort="low",
        backoff_base=0.2,
        max_retries=8,
        budget=budget,
    )
    client = K3Client(settings)
    for _ in range(n):
        client.complete(USER, max_completion_tokens=100, stream=False)


def test_the_client_waits_its_turn_instead_of_meeting_429s(kind: str, tmp_path: Path) -> None:
    limit = ModelRateLimit(requests=2, tokens=0, window=1.0)
    with budget_for(kind, tmp_path, limit) as budget:
        with K3Stub(brain=lambda b: Reply(content="ok"), rate_limit=2, rate_window=1.0) as stub:
            complete_all(stub, budget, 5)
            assert stub.rate_limited == 0
            assert len(stub.arrivals) == 5
        with K3Stub(brain=lambda b: Reply(content="ok"), rate_limit=2, rate_window=1.0) as stub:
            complete_all(stub, None, 5)  # control: without the budget, 429s and retries
            assert stub.rate_limited > 0
            assert len(stub.arrivals) == 5 + stub.rate_limited

"""The burst's sender: rounds of pushes to the fake GitHub and signed deliveries sent
over ``concurrency`` connections, one request each, timed by the sender. See ``rig``."""

from __future__ import annotations

import asyncio
import json
import os
import random
import time
from collections import Counter
from typing import Any

from tests.support.burst.check import ANSWER_LIMIT, Answer, BurstPlan, Delivery, Push
from tests.support.planted import PLANTED
from tests.support.services import REPO
from tests.support.webhooks import headers_for, variant


class Sender:
    """Pushes each round's heads to the fake GitHub, then sends the round's deliveries."""

    def __init__(
        self, gh: Any, branches: dict[int, str], plan: BurstPlan, pulls: list[int], port: int
    ) -> None:
        self.gh, self.branches = gh, branches
        self.plan, self.pulls, self.port = plan, pulls, port
        self.random = random.Random(plan.seed)
        self.heads = {n: [gh.head_sha(REPO, n)] for n in pulls}
        self.pushes: list[Push] = []
        self.sent: list[Delivery] = []
        self._ids = 0
        # Which (round, PR) repeat their synchronize, and when redeliveries go out.
        later = [(r, n) for r in range(1, plan.rounds) for n in pulls]
        self.repeat_at = set(self.random.sample(later, plan.repeats))
        self.redeliver_at: dict[int, int] = Counter(
            self.random.randrange(plan.rounds) for _ in range(plan.redeliveries)
        )

    def _delivery(self, kind: str, pr: int, head: str) -> Delivery:
        self._ids += 1
        action = "opened" if kind == "opened" else "synchronize"
        fixture = f"pull_request.{action}.payload.json"
        payload = variant(
            fixture,
            **{
                "action": action,
                "number": pr,
                "pull_request.number": pr,
                "pull_request.head.sha": head,
                "pull_request.draft": False,
                "repository.full_name": REPO,
                "installation.id": 1,
                # Each event its own time, as on GitHub: a repeated event is not the same
                # bytes (those are a replay, answered "duplicate body" and never queued).
                "pull_request.updated_at": time.strftime(
                    "%Y-%m-%dT%H:%M:%SZ", time.gmtime(1_700_000_000 + self._ids)
                ),
            },
        )
        if action == "synchronize":
            payload["after"] = head
        body = json.dumps(payload).encode()
        return Delivery(f"burst-{self._ids:05d}-{os.getpid()}", kind, pr, head, body)

    def _push(self, pr: int, round_: int) -> None:
        started = time.time()
        files = {"people.py": PLANTED + f"\n\ndef step_{round_}():\n    return {round_}\n"}
        sha = self.gh.push(REPO, self.branches[pr], files, f"Step {round_}")
        self.pushes.append(Push(pr, sha, started, time.time()))
        self.heads[pr].append(sha)

    def _round(self, round_: int) -> list[Delivery]:
        """The deliveries of one round (its pushes are done), shuffled."""
        batch = []
        for pr in self.pulls:
            head = self.heads[pr][-1]
            batch.append(self._delivery("opened" if round_ == 0 else "synchronize", pr, head))
            if (round_, pr) in self.repeat_at:
                batch.append(self._delivery("repeat", pr, head))
        self.random.shuffle(batch)
        # Redeliveries: half race their original in this round, half are of earlier ones.
        out = list(batch)
        for _ in range(self.redeliver_at.get(round_, 0)):
            if self.sent and self.random.random() < 0.5:
                original = self.random.choice(self.sent)
            else:
                original = self.random.choice(batch)
            copy = Delivery(original.id, "redelivery", original.pr, original.head, original.body)
            out.insert(self.random.randrange(len(out) + 1), copy)
        self.sent += batch
        return out

    async def burst(self) -> list[Answer]:
        answers: list[Answer] = []
        queue: asyncio.Queue[Delivery | None] = asyncio.Queue()

        async def client() -> None:
            while (delivery := await queue.get()) is not None:
                answers.append(await self._send(delivery))

        clients = [asyncio.create_task(client()) for _ in range(self.plan.concurrency)]
        pool = asyncio.Semaphore(4)

        async def push(pr: int, round_: int) -> None:
            async with pool:
                await asyncio.to_thread(self._push, pr, round_)

        loop = asyncio.get_running_loop()
        began = loop.time()
        for round_ in range(self.plan.rounds):
            await asyncio.sleep(max(0.0, began + round_ * self.plan.round_gap - loop.time()))
            if round_:
                # The pushes of this round, while the senders still drain the last one.
                await asyncio.gather(*(push(pr, round_) for pr in self.pulls))
            for delivery in self._round(round_):
                queue.put_nowait(delivery)
        for _ in clients:
            queue.put_nowait(None)
        await asyncio.gather(*clients)
        return answers

    async def _send(self, delivery: Delivery) -> Answer:
        headers = headers_for("pull_request", delivery.body, delivery=delivery.id)
        lines = ["POST /webhook HTTP/1.1", f"Host: 127.0.0.1:{self.port}"]
        lines += [f"{k}: {v}" for k, v in headers.items()]
        lines += [f"Content-Length: {len(delivery.body)}", "Connection: close", "", ""]
        request = "\r\n".join(lines).encode("latin-1") + delivery.body
        started = time.perf_counter()
        try:
            async with asyncio.timeout(ANSWER_LIMIT * 3):
                reader, writer = await asyncio.open_connection("127.0.0.1", self.port)
                try:
                    writer.write(request)
                    reply = await reader.read()
                finally:
                    writer.close()
        except (OSError, TimeoutError):
            return Answer(delivery, None, None, time.perf_counter() - started)
        latency = time.perf_counter() - started
        head, _, body = reply.partition(b"\r\n\r\n")
        try:
            status = int(head[9:12])
            answer = json.loads(body).get("status")
        except ValueError:
            return Answer(delivery, None, None, latency)
        return Answer(delivery, status, answer, latency)

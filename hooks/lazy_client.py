"""A model client that imports the openai SDK only when a request is really sent.

``import openai`` costs about half a second, more than everything else the hook does
before the network call. The review core decides late whether the model is needed at all
(every file may be ignored, binary or over budget; a secret scan still runs), so the hook
hands it this client and the SDK is loaded on the first ``complete``. A missing API key
is found there too, so a change with nothing to send needs no key.

Importing the SDK in a background thread while the diff and prompt are built was
measured and rejected: both are CPU-bound Python under one GIL, and the overlap made the
total slower (about 0.67 s against 0.60 s sequential for a small change).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from bot.llm import AssistantTurn, Effort, K3Client, LLMSettings, ModelClient, Progress, ToolChoice
from bot.usage import Usage


class LazyK3Client:
    def __init__(self, settings: LLMSettings) -> None:
        self.settings = settings
        self.model = settings.model
        self.effort: Effort = settings.effort
        self.usage = Usage()
        self._client: K3Client | None = None
        self._lock = threading.Lock()

    @property
    def started(self) -> bool:
        """Whether a request was attempted (the SDK was loaded)."""
        return self._client is not None

    def _real(self) -> K3Client:
        with self._lock:  # the core may run review groups in parallel threads
            if self._client is None:
                self.settings.require_key()  # before the SDK import: no key, no wait
                self._client = K3Client(self.settings)
                self.usage = self._client.usage
            return self._client

    def complete(
        self,
        messages: list[dict[str, Any]],
        *,
        tools: list[dict[str, Any]] | None = None,
        tool_choice: ToolChoice = "auto",
        max_completion_tokens: int,
        deadline: float | None = None,
        on_progress: Callable[[Progress], None] | None = None,
        stream: bool = True,
    ) -> AssistantTurn:
        return self._real().complete(
            messages,
            tools=tools,
            tool_choice=tool_choice,
            max_completion_tokens=max_completion_tokens,
            deadline=deadline,
            on_progress=on_progress,
            stream=stream,
        )


def _check_protocol(client: LazyK3Client) -> ModelClient:
    return client  # mypy proves LazyK3Client satisfies ModelClient

"""The replay's kept reviews: one JSON file per reviewed change under the data directory,
keyed by the change's base and head, the settings, the model, the effort and the review
core's prompt version, so a second run over the same changes asks the model nothing."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bot.domain.results import Finding, Placement, Severity
from bot.replay.items import GoldenItem
from bot.replay.judges import JUDGE_PROMPT_HASH
from bot.review import PROMPT_VERSION
from bot.settings.repository import Config
from bot.usage import Usage


def settings_hash(config: Config) -> str:
    """The settings' fingerprint: every field, as the dataclasses print them."""
    return hashlib.sha256(repr(config).encode()).hexdigest()[:16]


def review_key(base: str, head: str, config: Config, model: str, effort: str) -> str:
    raw = "\0".join([base, head, settings_hash(config), str(PROMPT_VERSION), model, effort])
    return hashlib.sha256(raw.encode()).hexdigest()[:32]


def judge_key(
    review: str, findings: Sequence[Finding], golden: Sequence[GoldenItem], model: str
) -> str:
    """What a model judge's answer is kept by: the review judged (its key and findings:
    a review asked again with ``--fresh`` is judged again), the golden items, the judge's
    instructions and the model."""
    items = [(g.path, g.lines, g.text, g.severity) for g in golden]
    found = json.dumps([f.as_dict() for f in findings], sort_keys=True)
    raw = "\0".join([review, found, repr(items), JUDGE_PROMPT_HASH, model])
    return hashlib.sha256(raw.encode()).hexdigest()[:32]


@dataclass
class KeptReview:
    """What the replay needs of one review: its findings, tokens and seconds."""

    findings: list[Finding]
    usage: Usage
    seconds: float

    def as_dict(self) -> dict[str, Any]:
        return {
            "findings": [f.as_dict() for f in self.findings],
            "usage": self.usage.as_dict(),
            "seconds": self.seconds,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> KeptReview:
        return cls(
            findings=[finding_from_dict(f) for f in data["findings"]],
            usage=Usage(**data["usage"]),
            seconds=float(data["seconds"]),
        )


def finding_from_dict(data: dict[str, Any]) -> Finding:
    return Finding(
        **{
            **data,
            "severity": Severity(data["severity"]),
            "placement": Placement(data["placement"]),
        }
    )


class ReviewCache:
    """``data_dir/replay/<key>.json`` (a review), ``judge-<key>.json`` (a model judge's
    answer); a file that cannot be read is a miss."""

    def __init__(self, data_dir: Path) -> None:
        self.folder = data_dir / "replay"

    def get(self, key: str) -> KeptReview | None:
        try:
            return KeptReview.from_dict(json.loads((self.folder / f"{key}.json").read_text()))
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def put(self, key: str, kept: KeptReview) -> None:
        self._write(f"{key}.json", kept.as_dict())

    def get_answer(self, key: str) -> str | None:
        """The model judge's answer kept under ``key`` (:func:`judge_key`), if any."""
        try:
            data = json.loads((self.folder / f"judge-{key}.json").read_text())
        except (OSError, ValueError):
            return None
        answer = data.get("answer") if isinstance(data, dict) else None
        return answer if isinstance(answer, str) else None

    def put_answer(self, key: str, answer: str) -> None:
        self._write(f"judge-{key}.json", {"answer": answer})

    def _write(self, name: str, data: dict[str, Any]) -> None:
        """Written whole then renamed: an interrupted run never leaves half a file."""
        self.folder.mkdir(parents=True, exist_ok=True)
        final = self.folder / name
        partial = final.with_suffix(f".{os.getpid()}.tmp")
        partial.write_text(json.dumps(data), encoding="utf-8")
        partial.replace(final)

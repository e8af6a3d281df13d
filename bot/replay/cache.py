"""The replay's kept reviews: one JSON file per reviewed change under the data directory,
keyed by the change's base and head, the settings, the model, the effort and the review
core's prompt version, so a second run over the same changes asks the model nothing."""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bot.domain.results import Finding, Placement, Severity
from bot.review import PROMPT_VERSION
from bot.settings.repository import Config
from bot.usage import Usage


def settings_hash(config: Config) -> str:
    """The settings' fingerprint: every field, as the dataclasses print them."""
    return hashlib.sha256(repr(config).encode()).hexdigest()[:16]


def review_key(base: str, head: str, config: Config, model: str, effort: str) -> str:
    raw = "\0".join([base, head, settings_hash(config), str(PROMPT_VERSION), model, effort])
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
    """``data_dir/replay/<key>.json``; a file that cannot be read is a miss."""

    def __init__(self, data_dir: Path) -> None:
        self.folder = data_dir / "replay"

    def get(self, key: str) -> KeptReview | None:
        try:
            return KeptReview.from_dict(json.loads((self.folder / f"{key}.json").read_text()))
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def put(self, key: str, kept: KeptReview) -> None:
        """Written whole then renamed: an interrupted run never leaves half a review."""
        self.folder.mkdir(parents=True, exist_ok=True)
        final = self.folder / f"{key}.json"
        partial = final.with_suffix(f".{os.getpid()}.tmp")
        partial.write_text(json.dumps(kept.as_dict()), encoding="utf-8")
        partial.replace(final)

"""Prompt templates and the ``submit_review`` JSON schema, shipped as package data."""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

SUBMIT_REVIEW_SCHEMA = "submit_review.schema.json"


def read_text(name: str) -> str:
    """The text of one file of this package (a template or the schema)."""
    return resources.files(__name__).joinpath(name).read_text(encoding="utf-8")


def submit_review_schema() -> dict[str, Any]:
    """A fresh copy of the schema of ``submit_review``'s arguments."""
    schema: dict[str, Any] = json.loads(read_text(SUBMIT_REVIEW_SCHEMA))
    return schema

"""Prompt templates and the JSON schemas of the tools K3 answers with, as package data."""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

SUBMIT_REVIEW_SCHEMA = "submit_review.schema.json"
SUBMIT_REPLY_SCHEMA = "submit_reply.schema.json"
SUBMIT_ANSWER_SCHEMA = "submit_answer.schema.json"
SUBMIT_DESCRIPTION_SCHEMA = "submit_description.schema.json"
SUBMIT_VERDICTS_SCHEMA = "submit_verdicts.schema.json"


def read_text(name: str) -> str:
    """The text of one file of this package (a template or the schema)."""
    return resources.files(__name__).joinpath(name).read_text(encoding="utf-8")


def submit_review_schema() -> dict[str, Any]:
    """A fresh copy of the schema of ``submit_review``'s arguments."""
    return tool_schema(SUBMIT_REVIEW_SCHEMA)


def tool_schema(name: str) -> dict[str, Any]:
    """A fresh copy of one tool's argument schema (``SUBMIT_*_SCHEMA``)."""
    schema: dict[str, Any] = json.loads(read_text(name))
    return schema

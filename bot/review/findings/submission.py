"""``submit_review`` arguments from the model: parsed, validated, turned into findings.

The arguments are checked against ``prompts/submit_review.schema.json`` (the schema the
model was given), so a bad answer is explained in the schema's own terms in the one
repair turn the model gets. One requirement is relaxed here: a finding without
``evidence`` is not worth a repair turn (it resends the whole review, minutes at K3's
pace, and can push a hook past its time budget and lose every finding for the sake of
one); it is parsed, and the evidence check holds it back like a finding whose quote is
invented (:mod:`bot.review.findings.evidence`).

K3 sometimes answers in ``content`` instead of calling the tool, with reasoning or stray
text around the JSON: :func:`extract_submission` finds a valid object in such text.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

import prompts
from bot.domain.results import Finding, Severity
from bot.domain.walkthrough import Walkthrough
from bot.errors import ModelOutputError
from bot.review.walkthrough.reading import read_walkthrough
from bot.text import one_line

if TYPE_CHECKING:
    import jsonschema

#: Schema errors quoted in one message; the rest are counted.
_MAX_ERRORS = 5
#: Characters of one schema error kept (they quote the offending value).
_MAX_ERROR_CHARS = 160
#: Start positions tried in ``content`` before giving up (bounds the work on huge text).
_MAX_CANDIDATES = 2000
#: Required in the schema K3 is given, optional when its answer is read (see above).
_HELD_BACK_NOT_REPAIRED = ("evidence",)
#: Keys whose ``null`` means "none" rather than a mistake.
_NULLABLE = ("suggestion", "evidence")


T = TypeVar("T")


@dataclass
class Submission:
    summary: str
    findings: list[Finding]
    #: Read leniently: an invalid walkthrough is None, never a repair turn.
    walkthrough: Walkthrough | None = None


class SubmissionError(ModelOutputError):
    """``submit_review`` arguments that are not JSON or do not match the schema.

    The message is one line fit to send back to the model in the repair turn.
    """


def schema_validator(schema: dict[str, Any]) -> jsonschema.protocols.Validator:
    """A validator for one tool's argument schema (the schema itself is checked first)."""
    # Imported on first use: ~70 ms the pre-commit hook need not pay before it has an answer.
    import jsonschema

    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    cls.check_schema(schema)
    validator: jsonschema.protocols.Validator = cls(schema)
    return validator


@functools.cache
def _validator() -> jsonschema.protocols.Validator:
    schema = prompts.submit_review_schema()
    # Checked by itself (bot.review.walkthrough.reading): never worth a repair turn.
    del schema["properties"]["walkthrough"]
    item = schema["properties"]["findings"]["items"]
    item["required"] = [key for key in item["required"] if key not in _HELD_BACK_NOT_REPAIRED]
    return schema_validator(schema)


def _where(error: jsonschema.ValidationError) -> str:
    where = "arguments"
    for part in error.absolute_path:
        where += f"[{part}]" if isinstance(part, int) else f".{part}"
    return where


def schema_problems(validator: jsonschema.protocols.Validator, data: Any) -> list[str]:
    """What is wrong with ``data`` in the schema's own terms (a few, the rest counted)."""
    errors = sorted(validator.iter_errors(data), key=lambda e: list(map(str, e.path)))
    problems = [f"{_where(e)}: {one_line(e.message, _MAX_ERROR_CHARS)}" for e in errors]
    if len(problems) > _MAX_ERRORS:
        problems = [*problems[:_MAX_ERRORS], f"and {len(problems) - _MAX_ERRORS} more"]
    return problems


def _finding(item: dict[str, Any]) -> Finding:
    start, end = item["start_line"], item["end_line"]
    note = ""
    if end < start:
        # An inverted range is an obvious slip, not worth a repair turn of several minutes.
        start, end = end, start
        note = "start_line and end_line were given in reverse order"
    return Finding(
        path=item["path"],
        start_line=start,
        end_line=end,
        side=item["side"],
        severity=Severity(item["severity"]),
        category=item["category"],
        title=item["title"],
        body=item["body"],
        suggestion=item.get("suggestion"),
        note=note,
        evidence=item.get("evidence"),
    )


def _lenient(finding: dict[str, Any]) -> dict[str, Any]:
    """Harmless slips read as meant; a repair turn for them would waste minutes."""
    fixed = dict(finding)
    evidence = fixed.get("evidence")
    # Quoted lines given as a list of lines are the same quote.
    if isinstance(evidence, list) and evidence and all(isinstance(x, str) for x in evidence):
        fixed["evidence"] = "\n".join(evidence)
    elif isinstance(evidence, str) and not evidence.strip():
        fixed["evidence"] = None  # quotes nothing: held back by the evidence check
    # ``null`` means "none".
    return {k: v for k, v in fixed.items() if not (k in _NULLABLE and v is None)}


def _read_leniently(data: Any) -> Any:
    if isinstance(data, dict) and isinstance(data.get("findings"), list):
        findings = [_lenient(f) if isinstance(f, dict) else f for f in data["findings"]]
        data = {**data, "findings": findings}
    return data


def validate_submission(data: Any) -> Submission:
    """A :class:`Submission` from decoded arguments; :class:`SubmissionError` if invalid."""
    data = _read_leniently(data)
    walkthrough = None
    if isinstance(data, dict) and "walkthrough" in data:
        walkthrough = read_walkthrough(data["walkthrough"])
        data = {k: v for k, v in data.items() if k != "walkthrough"}
    problems = schema_problems(_validator(), data)
    if problems:
        raise SubmissionError(
            "submit_review arguments do not match the schema: " + "; ".join(problems)
        )
    findings = [_finding(f) for f in data["findings"]]
    return Submission(summary=data["summary"], findings=findings, walkthrough=walkthrough)


def decode_arguments(arguments: str, tool: str) -> Any:
    """The JSON value of a tool call's arguments; :class:`SubmissionError` if not JSON."""
    try:
        return json.loads(arguments)
    except json.JSONDecodeError as exc:
        raise SubmissionError(
            f"{tool} arguments are not valid JSON: {exc.msg} "
            f"at line {exc.lineno} column {exc.colno}"
        ) from None
    except RecursionError:
        raise SubmissionError(f"{tool} arguments are not valid JSON: nested too deeply") from None


def parse_submission(arguments: str) -> Submission:
    """Decode and validate the arguments of a ``submit_review`` call."""
    return validate_submission(decode_arguments(arguments, "submit_review"))


def _candidates(data: Any) -> list[Any]:
    """The object itself, or the arguments inside a tool call written out as JSON."""
    found = [data]
    if isinstance(data, dict):
        for key in ("arguments", "parameters", "input"):
            inner = data.get(key)
            if isinstance(inner, str):
                try:
                    inner = json.loads(inner)
                except (json.JSONDecodeError, RecursionError):
                    continue
            if isinstance(inner, dict):
                found.append(inner)
    return found


def extract_submission(content: str) -> Submission | None:
    """The last valid submission written as a JSON object anywhere in ``content``, or None."""
    return extract_valid(content, validate_submission)


def extract_valid(content: str, validate: Callable[[Any], T]) -> T | None:
    """The last JSON object in ``content`` that ``validate`` accepts (it raises
    :class:`SubmissionError` otherwise), or None.

    The last one wins because reasoning that leaks into ``content`` comes before the
    answer, and a draft there may be followed by the corrected object.
    """
    decoder = json.JSONDecoder()
    result: T | None = None
    pos, tried = content.find("{"), 0
    while pos >= 0 and tried < _MAX_CANDIDATES:
        tried += 1
        try:
            data, end = decoder.raw_decode(content, pos)
        except (json.JSONDecodeError, RecursionError):
            pos = content.find("{", pos + 1)
            continue
        valid: list[T] = []
        for candidate in _candidates(data):
            try:
                valid.append(validate(candidate))
                break
            except SubmissionError:
                continue
        if valid:
            result = valid[0]
            pos = content.find("{", end)
        else:
            pos = content.find("{", pos + 1)
    return result


def repair_message(error: SubmissionError) -> str:
    """What the one repair turn tells the model."""
    return (
        f"Your review could not be used: {error} "
        "Call `submit_review` again, once, with the complete review: arguments that are a "
        "single JSON object matching the function's schema exactly (summary and findings; "
        "each finding with path, start_line, end_line, side RIGHT or LEFT, severity "
        "critical, major, minor or nit, category, title, body, evidence (one to three "
        "lines quoted exactly from the code the finding is about) and an optional "
        "suggestion; no other keys). Do not answer in text."
    )

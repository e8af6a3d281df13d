"""GitHub's GraphQL API: the documents GitNeural sends, and sending one.

Every document is a :class:`Document` made by :func:`document`, which records it in
:data:`DOCUMENTS`: the tests validate each one against GitHub's published schema
(``tests/fixtures/github-graphql/schema.graphql``), so a misspelt field fails a test,
not a review. :func:`run_query` and :func:`run_mutation` are the only ways a document
is sent.

GraphQL always answers over ``POST``, which the client never retries (a POST may be a
write). A query is a read, so it is tried again here after a 5xx or a dropped
connection, a few times and briefly; anything longer is the job's retry's business.
GitHub reports errors inside a 200 answer (``{"errors": [...]}``); they become one-line
:class:`~bot.errors.GitHubError` messages like REST's. A mutation of several aliased
fields may be answered in part: GitHub runs the fields in order and reports a field that
failed with an error whose ``path`` names its alias, the others' data beside it;
:func:`run_mutation` hands back both.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import github
from github import GithubException

from bot.errors import GitHubError
from bot.gh.api.errors import fresh_read
from bot.text import one_line

#: Attempts of one query after a transient failure, and the pause before each retry.
_ATTEMPTS = 3
_PAUSE_S = 0.5


@dataclass(frozen=True)
class Document:
    """A GraphQL document GitNeural sends."""

    name: str
    text: str
    #: Mutations change GitHub's state: they are never retried blindly.
    mutation: bool = False


#: Every document the product sends (the tests validate each against GitHub's schema).
DOCUMENTS: list[Document] = []


def document(name: str, text: str, *, mutation: bool = False) -> Document:
    doc = Document(name, text.strip(), mutation)
    DOCUMENTS.append(doc)
    return doc


def _errors_text(data: Any) -> str:
    errors = data.get("errors") if isinstance(data, dict) else None
    if not isinstance(errors, list) or not errors:
        return "no message"
    first = errors[0]
    message = first.get("message") if isinstance(first, dict) else first
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return one_line(str(message), 200) + more


@dataclass(frozen=True)
class Answer:
    """What GitHub answered to a mutation: the fields that ran, and those that failed."""

    data: dict[str, Any]
    #: A failed field's alias (the first element of its error's ``path``) -> one line.
    errors: dict[str, str]


def _refused(doc: Document, doing: str, data: Any, status: int) -> GitHubError:
    return GitHubError(
        f"GitHub refused the {doc.name} query when {doing}: {_errors_text(data)}",
        status=404 if status == 404 else 422,
    )


def _field_errors(data: Any) -> dict[str, str] | None:
    """Each failed field's error by alias; None if an error names no field (the
    document itself was refused) or nothing ran."""
    if not isinstance(data, dict) or not isinstance(data.get("data"), dict):
        return None
    found: dict[str, str] = {}
    for error in data.get("errors") or []:
        path = error.get("path") if isinstance(error, dict) else None
        if not isinstance(path, list) or not path or not isinstance(path[0], str):
            return None
        found.setdefault(path[0], one_line(str(error.get("message") or "no message"), 200))
    return found


def _send(
    gh: github.Github, doc: Document, variables: dict[str, Any], doing: str, *, partial: bool
) -> Any:
    try:
        _headers, data = gh.requester.graphql_query(doc.text, variables)
    except GithubException as exc:
        if isinstance(exc.data, dict) and "errors" in exc.data:
            # GitHub answered 200 with errors (PyGithub says 400, or 404 for NOT_FOUND):
            # the query is wrong, or names what is gone. Retrying changes nothing.
            fields = _field_errors(exc.data) if partial else None
            if fields is None:
                raise _refused(doc, doing, exc.data, exc.status) from None
            return Answer(exc.data["data"], fields)
        raise
    found = data.get("data") if isinstance(data, dict) else None
    return Answer(found, {}) if partial and isinstance(found, dict) else found


def run_query(
    gh: github.Github,
    doc: Document,
    variables: dict[str, Any],
    *,
    doing: str,
    on_401: Callable[[], None] | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> dict[str, Any]:
    """The ``data`` of ``doc`` run with ``variables``; a query is retried briefly after
    a 5xx or a network fault, a mutation never."""
    attempt = 0
    while True:
        attempt += 1
        try:
            data = fresh_read(
                lambda: _send(gh, doc, variables, doing, partial=False), doing, on_401
            )
        except GitHubError as exc:
            retry = not doc.mutation and exc.transient and attempt < _ATTEMPTS
            short = (exc.retry_after or 0) <= _PAUSE_S * attempt
            if not (retry and short and (exc.status is None or exc.status >= 500)):
                raise
            sleep(_PAUSE_S * attempt)
            continue
        if not isinstance(data, dict):
            raise GitHubError(f"GitHub's answer to the {doc.name} query has no data ({doing})")
        return data


def run_mutation(
    gh: github.Github,
    doc: Document,
    variables: dict[str, Any],
    *,
    doing: str,
    on_401: Callable[[], None] | None = None,
) -> Answer:
    """Send the mutation ``doc`` once (never again after a 5xx or a lost answer: it may
    have run); the fields that ran and the fields that failed."""
    assert doc.mutation, doc.name
    answer = fresh_read(lambda: _send(gh, doc, variables, doing, partial=True), doing, on_401)
    if not isinstance(answer, Answer):
        raise GitHubError(f"GitHub's answer to the {doc.name} query has no data ({doing})")
    return answer

"""GitHub's GraphQL endpoint on the fake: documents run against GitHub's real schema.

``POST /graphql`` (``/api/graphql`` under GitHub Enterprise Server's ``/api/v3``) takes
``{"query", "variables"}`` with an installation token. The document is parsed, validated
and executed by graphql-core against ``tests/fixtures/github-graphql/schema.graphql``,
GitHub's published schema: a field GitHub does not have, a wrong argument or a missing
variable is answered as GitHub does, ``200`` with ``{"errors": [...]}``. What the fake
holds is served through resolvers (``graph_nodes``): repositories, pull requests and
their review threads, comments, reactions, issues (``issueOrPullRequest``, a transferred
issue resolved to its new repository as GitHub does); and the ``resolveReviewThread``,
``unresolveReviewThread`` and ``addPullRequestReviewThreadReply`` mutations.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from flask import Blueprint, Response
from graphql import GraphQLSchema, build_schema, graphql_sync

from tests.fakes.github.app import (
    ApiError,
    authenticate_token,
    body_json,
    graphql_path,
    json_response,
    require_token,
    store,
)
from tests.fakes.github.graph_nodes import Root

SCHEMA_PATH = Path(__file__).resolve().parents[2] / "fixtures" / "github-graphql" / "schema.graphql"


@functools.cache
def github_schema() -> GraphQLSchema:
    """GitHub's schema, built once per process (about a second).

    Its SDL is not strictly valid for graphql-core (a field defined twice, deprecations
    that differ from their interfaces; see ``SOURCE.md`` next to it): built with
    ``assume_valid_sdl``, and the schema's own self-check is skipped so that documents
    can be validated against it.
    """
    schema = build_schema(SCHEMA_PATH.read_text(encoding="utf-8"), assume_valid_sdl=True)
    schema._validation_errors = []
    return schema


def execute(query: str, variables: dict[str, Any] | None, installation_id: int) -> dict[str, Any]:
    result = graphql_sync(
        github_schema(),
        query,
        root_value=Root(store(), installation_id),
        variable_values=variables,
    )
    answer: dict[str, Any] = {"data": result.data}
    if result.errors:
        answer["errors"] = [
            {**error.formatted, "type": _error_type(error.message)} for error in result.errors
        ]
    return answer


def _error_type(message: str) -> str:
    return "NOT_FOUND" if message.startswith("Could not resolve") else "INVALID"


def blueprint(api_prefix: str) -> Blueprint:
    bp = Blueprint("graphql", __name__)

    @bp.post(graphql_path(api_prefix))
    def graphql() -> Response:
        installation_id = authenticate_token()
        require_token()
        assert installation_id is not None
        data = body_json()
        query = data.get("query")
        variables = data.get("variables")
        if not isinstance(query, str) or not isinstance(variables, dict | None):
            raise ApiError(400, "Problems parsing JSON")
        return json_response(execute(query, variables, installation_id))

    return bp

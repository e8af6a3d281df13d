"""The router: a change's effort (or none) and endpoint, decided from the change alone,
before the model is asked.

In order, the first that applies wins:

1. *formatting only* (``bot.review.formatting``): no model request at all;
2. the team's ``[[review.route]]`` tables, in their order (a route at ``max`` applies when
   any file matches, any other only when every file does: a change is never reviewed
   less because one of its files is routine);
3. *sensitive* (:data:`SENSITIVE`: authentication, cryptography, permissions, SQL
   migrations, CI workflows, container and dependency manifests): ``max``, whatever the
   configured effort;
4. *docs only* (:data:`DOC_EXTENSIONS`): ``low``;
5. the configured effort.

``review.routing = false`` leaves only the team's routes. The files routed are those the
ignore globs keep: a lock file the review never reads does not make it ``max``.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Sequence
from functools import cache

from bot.domain.change import Change
from bot.domain.diff import FileDiff
from bot.domain.route import Route, RouteRule, rule_effort
from bot.effort import Effort
from bot.review.formatting import formatting_only
from bot.review.selection import select_files
from bot.review.tools.globs import any_glob_matcher
from bot.settings.repository import Config

#: Paths whose change is reviewed at ``max``, by what they hold. Globs as in
#: ``[[review.route]]``: without ``/`` a file name in any directory, else the whole path
#: (``**`` spans directories).
SENSITIVE: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "authentication",
        (
            "**/auth/**",
            "**/authn/**",
            "**/authentication/**",
            "auth.*",
            "*_auth.*",
            "auth_*",
            "*oauth*",
            "*jwt*",
            "*passw*",
            "*login*",
        ),
    ),
    (
        "cryptography",
        ("**/crypto/**", "*crypto*", "*cipher*", "*encrypt*", "*secret*", "*.pem", "*.key"),
    ),
    ("permissions", ("**/authz/**", "*permission*", "*rbac*", "sudoers", "CODEOWNERS")),
    ("SQL migrations", ("**/migrations/**", "**/alembic/**", "*.sql")),
    (
        "CI workflows",
        (
            ".github/workflows/**",
            ".gitlab-ci.yml",
            ".circleci/**",
            ".buildkite/**",
            "Jenkinsfile",
            "azure-pipelines.yml",
            ".travis.yml",
            "action.yml",
            "action.yaml",
        ),
    ),
    (
        "container manifests",
        (
            "Dockerfile",
            "Dockerfile.*",
            "*.dockerfile",
            "Containerfile",
            "docker-compose*.yml",
            "docker-compose*.yaml",
            "compose.yml",
            "compose.yaml",
        ),
    ),
    (
        "dependency manifests",
        (
            "requirements*.txt",
            "constraints*.txt",
            "pyproject.toml",
            "setup.py",
            "setup.cfg",
            "Pipfile",
            "Pipfile.lock",
            "poetry.lock",
            "uv.lock",
            "package.json",
            "package-lock.json",
            "yarn.lock",
            "pnpm-lock.yaml",
            "go.mod",
            "go.sum",
            "Cargo.toml",
            "Cargo.lock",
            "Gemfile",
            "Gemfile.lock",
            "*.gemspec",
            "pom.xml",
            "build.gradle",
            "build.gradle.kts",
            "*.csproj",
            "composer.json",
            "composer.lock",
        ),
    ),
)

#: Docs: Markdown, reStructuredText, plain text and images.
DOC_EXTENSIONS = frozenset(
    {".md", ".markdown", ".rst", ".txt", ".png", ".jpg", ".jpeg", ".gif", ".webp", ".svg"}
)
#: Named like docs, read like code.
_NOT_DOCS = frozenset({"CMakeLists.txt"})
#: Files named in a reason, at most.
_NAMED = 3


def decide_route(change: Change, config: Config, effort: Effort) -> Route:
    """The route of ``change`` when ``effort`` is the configured one."""
    files = routed_files(change, config)
    if not files:
        return Route("configured", effort, reason="the configured effort")
    paths = [f.path for f in files]
    builtin = config.review.routing
    if builtin and formatting_only(change, files):
        return Route("formatting", None, reason="formatting only (no file's tokens changed)")
    for index, rule in enumerate(config.review.route):
        if _rule_applies(rule, paths):
            return Route(
                "team",
                rule_effort(rule),
                rule.model,
                f"review.route[{index}] ({', '.join(rule.paths)})",
            )
    if builtin:
        for path in paths:
            found = sensitive(path)
            if found is not None:
                return Route("sensitive", "max", reason=f"sensitive: {path} ({found})")
        if all(is_doc(p) for p in paths):
            return Route("docs", "low", reason=f"docs only ({_named(paths)})")
    return Route("configured", effort, reason="the configured effort")


def routed_files(change: Change, config: Config) -> list[FileDiff]:
    """The files a route is decided on: every changed file the ignore globs keep."""
    _, skipped = select_files(change.diff, config.ignore_globs())
    ignored = {s.path for s in skipped if s.reason.startswith("ignored by ")}
    return [f for f in change.diff.files if f.path not in ignored]


def sensitive(path: str) -> str | None:
    """What a sensitive ``path`` holds (``authentication`` …), or None."""
    for kind, test in _sensitive_tests():
        if test(path):
            return kind
    return None


@cache
def _sensitive_tests() -> list[tuple[str, Callable[[str], bool]]]:
    # A name without "/" is a file name in any directory, even where it has no wildcard.
    return [
        (kind, any_glob_matcher([g if "/" in g else f"**/{g}" for g in globs]))
        for kind, globs in SENSITIVE
    ]


def is_doc(path: str) -> bool:
    name = posixpath.basename(path)
    return name not in _NOT_DOCS and posixpath.splitext(name)[1].lower() in DOC_EXTENSIONS


def _rule_applies(rule: RouteRule, paths: Sequence[str]) -> bool:
    test = any_glob_matcher(rule.paths)
    if rule.effort == "max":
        return any(test(p) for p in paths)
    return all(test(p) for p in paths)


def _named(paths: Sequence[str]) -> str:
    more = len(paths) - _NAMED
    return ", ".join(paths[:_NAMED]) + (f" and {more} more" if more > 0 else "")

"""``.gitneural.toml``: every setting, its default, and its validation.

The file is read from a trusted revision (the default branch for the App, HEAD for the
hook and CLI), never from the change under review. Unknown keys and bad values are
errors with a message that names the key, so a typo never silently means "default".
"""

from __future__ import annotations

import dataclasses
import os
import tomllib
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, get_args, get_origin

from bot.domain.change import Snapshot
from bot.domain.route import RouteRule, route_rules
from bot.domain.setting_tables import glob_list, tables
from bot.effort import EFFORTS, Effort
from bot.errors import ConfigError, UsageError

CONFIG_FILE = ".gitneural.toml"

SeverityName = Literal["critical", "major", "minor", "nit"]
CheckConclusion = Literal["neutral", "failure"]
AutoReview = Literal["always", "label", "off"]
VerifyMode = Literal["off", "critical", "all"]

#: ``review.passes`` lies within these bounds.
MIN_PASSES, MAX_PASSES = 1, 5

#: Paths no reviewer wants to read: lock files, vendored and generated code, minified
#: assets. Matched with ``fnmatch`` semantics against the whole path (``*`` spans ``/``).
DEFAULT_IGNORES: tuple[str, ...] = (
    "*.lock",
    "*-lock.json",
    "*-lock.yaml",
    "package-lock.json",
    "pnpm-lock.yaml",
    "yarn.lock",
    "poetry.lock",
    "Cargo.lock",
    "go.sum",
    "composer.lock",
    "Gemfile.lock",
    "uv.lock",
    "*.min.js",
    "*.min.css",
    "*.map",
    "vendor/*",
    "*/vendor/*",
    "third_party/*",
    "*/third_party/*",
    "node_modules/*",
    "*/node_modules/*",
    "*_pb2.py",
    "*_pb2_grpc.py",
    "*.pb.go",
    "*.generated.*",
    "*/generated/*",
    "dist/*",
    "build/*",
    "*.svg",
    "*.snap",
)


@dataclass(frozen=True)
class PathInstruction:
    """One ``[[review.path_instructions]]`` table: ``text`` shown to the model when the
    change touches a path matching one of ``paths`` (globs, ``**`` spans directories)."""

    paths: tuple[str, ...]
    text: str


#: Instruction files other tools' users already keep, read next to AGENTS.md.
DEFAULT_INSTRUCTIONS: tuple[str, ...] = (
    "AGENTS.md",
    "CLAUDE.md",
    ".github/copilot-instructions.md",
    "CONTRIBUTING.md",
)

#: Where the path-scoped instruction files are (Copilot's, then Cursor's).
SCOPED_INSTRUCTION_DIRS: tuple[str, ...] = (".github/instructions", ".cursor/rules")


@dataclass
class ReviewSettings:
    """What a review reads, what it sends to K3, and how much it reports."""

    #: Reasoning effort for reviews started by the App and ``gitneural review``.
    effort: Effort = "max"
    #: At most this many findings are posted; the most severe are kept.
    max_comments: int = 20
    #: ``gitneural review`` exits 1 when a finding is at least this severe.
    fail_on: SeverityName = "critical"
    #: Extra ignore globs (``["docs/*", "*.pb.py"]``), added to the defaults unless
    #: ``default_ignores = false``.
    ignore: list[str] = field(default_factory=list)
    #: Skip lock files, vendored, minified and generated code (the default ignore globs).
    default_ignores: bool = True
    #: Budget for one prompt (estimated tokens); what does not fit is listed as skipped.
    max_prompt_tokens: int = 200_000
    #: ``gitneural review`` asks first (exit 2 unless ``--yes``) when the whole review's
    #: prompts are estimated above this many tokens; 0: never asks.
    confirm_above_tokens: int = 150_000
    #: Sent as ``max_completion_tokens``; K3's reasoning counts against it.
    max_completion_tokens: int = 32_768
    #: Repository instructions read from the trusted revision, in this order.
    instructions: list[str] = field(default_factory=lambda: list(DEFAULT_INSTRUCTIONS))
    #: Also read the path-scoped instruction files, shown only when the change touches a
    #: file they apply to: ``.github/instructions/*.instructions.md`` (front matter
    #: ``applyTo``) and ``.cursor/rules/*.mdc`` (front matter ``globs``).
    scoped_instructions: bool = True
    #: Instructions for some paths only: ``[[review.path_instructions]]`` tables of
    #: ``paths`` (a list of globs) and ``text``, shown when the change touches a match.
    path_instructions: list[PathInstruction] = field(default_factory=list)
    #: Characters of all those instructions kept, at most, all files together; what is
    #: cut is said in the review's summary.
    instructions_max_chars: int = 12_000
    #: Grow each hunk to its enclosing function or class.
    expand_context: bool = True
    #: Add callers of changed functions and definitions of used symbols up front.
    related_context: bool = True
    #: Tokens of that related code per prompt, at most.
    related_max_tokens: int = 8_000
    #: Seconds ``gitneural review`` may take in all (``--timeout``); then it gives up.
    timeout: float = 1200.0
    #: Seconds without a byte from the model before a request is given up as stalled.
    stall_timeout: float = 120.0
    #: After the review, hand its findings back to K3 in the same conversation (its
    #: prompt served from K3's prefix cache) to confirm or refute each with evidence;
    #: refuted ones are dropped (``dropped: refuted``). ``off``, ``critical`` (only
    #: critical and major findings) or ``all``. Off until measured with a real model
    #: (``gitneural replay --compare``; see docs/quality.md).
    verify: VerifyMode = "off"
    #: Independent reviews of the same prompt (1 to 5); a finding is kept when a strict
    #: majority of them report it at the same place. Each extra pass costs a review's
    #: completion tokens, its prompt mostly from K3's prefix cache. 1 until measured.
    passes: int = 1
    #: Show K3 the change's images: the description's (from GitHub's attachment hosts
    #: only) and the PNG, JPEG, GIF and WebP files it adds or modifies (after, and before
    #: when modified). ``KIMI_IMAGES=0`` turns them off for a text-only deployment. Needs
    #: the ``images`` extra (in ``[app]`` and the Action); without it they are named, not sent.
    images: bool = True
    #: Images one review sends, at most; the others are named in its summary.
    images_max: int = 6
    #: Bytes one image may have, as served or stored, at most; larger ones are named.
    image_max_bytes: int = 5_000_000
    #: The pre-commit hook sends the images the commit adds or modifies too.
    images_in_hook: bool = False
    #: Route each change before the model is asked: formatting only (no request), docs
    #: only (``low``), sensitive paths (``max``, whatever the effort), else the effort;
    #: the default lists are in docs/configuration.md. ``false``: every change at the effort.
    routing: bool = True
    #: The team's routes, tried first, first match wins: ``[[review.route]]`` tables of
    #: ``paths`` (globs), ``effort`` (``low``, ``high``, ``max`` or ``skip``) and
    #: optionally ``model = "routine"`` (the ``KIMI_ROUTINE_*`` endpoint). A route at
    #: ``max`` applies when any file of the change matches; any other when every file does.
    route: list[RouteRule] = field(default_factory=list)


@dataclass
class AgentSettings:
    """Budget of the agentic review (K3 reading the repository with read-only tools)."""

    #: Let K3 read the repository at ``high`` and ``max`` effort (``low`` is always one-shot).
    enabled: bool = True
    #: Model requests in one review conversation, at most.
    max_turns: int = 8
    #: Tool calls (``read_file``, ``search``, ``find_references`` …), at most.
    max_tool_calls: int = 40
    #: Prompt plus completion tokens over the whole conversation.
    max_tokens: int = 600_000
    #: Seconds the conversation may take; then K3 is told to submit.
    max_seconds: float = 900.0
    #: Groups of a large change reviewed at once.
    concurrency: int = 4
    #: A change too large for one prompt is reviewed in at most this many parts;
    #: files beyond are listed as skipped.
    max_parts: int = 40


@dataclass
class HookSettings:
    """The pre-commit hook (``gitneural hook run``); its flags override these."""

    #: The commit is refused when a finding is at least this severe.
    fail_on: SeverityName = "critical"
    #: Reasoning effort of the hook's review: someone is waiting to commit.
    effort: Effort = "low"
    #: Seconds before the hook gives up on the model (and, unless strict, lets the commit pass).
    timeout: float = 20.0
    #: A change whose prompts are estimated above this many tokens is not reviewed by the
    #: hook: the commit goes through with one line (``gitneural review --yes`` reviews
    #: it); 0: no limit.
    confirm_above_tokens: int = 50_000
    #: Refuse the commit when the review cannot run (no key, network down, timeout).
    strict: bool = False


@dataclass
class GitHubSettings:
    """The GitHub App and the Action: a repository may narrow the deployment's gates,
    never widen them."""

    #: Which pull requests are reviewed when opened or pushed to: ``always``, ``label``
    #: (only those labelled ``review_label``) or ``off`` (``/review`` only); ``true`` and
    #: ``false`` still mean ``always`` and ``off``.
    auto_review: AutoReview = "always"
    #: With ``auto_review = "label"``: the label that asks for automatic reviews.
    review_label: str = "gitneural"
    #: A pull request with this label gets no automatic review (``/review`` still works).
    skip_label: str = "gitneural:skip"
    #: Base branches whose pull requests are reviewed automatically (globs, ``release/*``);
    #: empty: every branch.
    base_branches: list[str] = field(default_factory=list)
    #: A pull request changing more lines than this (added plus deleted) gets no automatic
    #: review and a ``skipped`` check run; 0: no limit. With ``check_conclusion =
    #: "failure"`` the run is ``failure`` instead: branch protection counts ``skipped`` as
    #: passing, so an author could pad a pull request past the cap to pass the gate.
    max_review_lines: int = 0
    #: Likewise for the number of changed files; 0: no limit.
    max_review_files: int = 0
    #: Review draft pull requests too.
    review_drafts: bool = False
    #: ``author_association`` values allowed to use ``/review``, reply, ``/ask`` and ``/learn``.
    allowed_associations: list[str] = field(
        default_factory=lambda: ["OWNER", "MEMBER", "COLLABORATOR"]
    )
    #: Check run conclusion: always ``neutral``, or ``failure`` at ``check_fail_on`` (and
    #: for a pull request over ``max_review_lines`` or ``max_review_files``, never reviewed
    #: automatically: a gate must not pass what it did not read).
    check_conclusion: CheckConclusion = "neutral"
    #: With ``check_conclusion = "failure"``: the least severe finding that fails the check.
    check_fail_on: SeverityName = "critical"


@dataclass
class ConversationSettings:
    """Answers in the threads of GitNeural's findings and to ``/ask`` (the App only)."""

    #: Answer replies in GitNeural's threads and ``/ask`` (from github.allowed_associations).
    enabled: bool = True
    #: Reasoning effort of an answer: someone is waiting for it, so not ``max``.
    effort: Effort = "high"


@dataclass
class WalkthroughSettings:
    """The walkthrough that opens a pull request's review: what the change does, its
    files, where to look hardest, the linked issues; later reviews say what changed."""

    #: Ask K3 for the walkthrough (in the same request as the findings).
    enabled: bool = True
    #: A Mermaid sequence diagram when the change alters how components call each other.
    diagram: bool = False
    #: Read the issues the pull request closes (at most 3, same repository) and say
    #: whether the change addresses each.
    linked_issues: bool = True


@dataclass
class Config:
    review: ReviewSettings = field(default_factory=ReviewSettings)
    agent: AgentSettings = field(default_factory=AgentSettings)
    hook: HookSettings = field(default_factory=HookSettings)
    github: GitHubSettings = field(default_factory=GitHubSettings)
    conversation: ConversationSettings = field(default_factory=ConversationSettings)
    walkthrough: WalkthroughSettings = field(default_factory=WalkthroughSettings)

    def ignore_globs(self) -> list[str]:
        base = list(DEFAULT_IGNORES) if self.review.default_ignores else []
        return base + list(self.review.ignore)


AUTHOR_ASSOCIATIONS = frozenset(
    {
        "OWNER",
        "MEMBER",
        "COLLABORATOR",
        "CONTRIBUTOR",
        "FIRST_TIMER",
        "FIRST_TIME_CONTRIBUTOR",
        "MANNEQUIN",
        "NONE",
    }
)


def _check_value(key: str, value: Any, hint: Any) -> Any:
    origin = get_origin(hint)
    if origin is Literal:
        choices = get_args(hint)
        if value not in choices:
            raise ConfigError(f"{key} must be one of {', '.join(choices)}, not {value!r}")
        return value
    if hint is bool:
        if not isinstance(value, bool):
            raise ConfigError(f"{key} must be true or false, not {value!r}")
        return value
    if hint is str:
        if not isinstance(value, str) or not value.strip() or not value.isprintable():
            raise ConfigError(f"{key} must be a non-empty string, not {value!r}")
        return value
    if hint is int:
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ConfigError(f"{key} must be a whole number >= 0, not {value!r}")
        return value
    if hint is float:
        if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
            raise ConfigError(f"{key} must be a number > 0, not {value!r}")
        return float(value)
    if origin is list and get_args(hint) == (PathInstruction,):
        return _path_instructions(key, value)
    if origin is list and get_args(hint) == (RouteRule,):
        return route_rules(key, value)
    if origin is list:
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ConfigError(f"{key} must be a list of strings, not {value!r}")
        return list(value)
    raise AssertionError(f"unhandled setting type {hint!r}")  # pragma: no cover


def _path_instructions(key: str, value: Any) -> list[PathInstruction]:
    shape = f"{key} must be a list of tables with paths (a list of globs) and text"
    found = []
    for where, table in tables(key, value, shape, ("paths", "text")):
        paths, text = glob_list(where, table.get("paths")), table.get("text")
        if not isinstance(text, str) or not text.strip():
            raise ConfigError(f"{where}.text must be a non-empty string, not {text!r}")
        found.append(PathInstruction(paths, text))
    return found


def _keys(cls: type[Any]) -> set[str]:
    return {f.name for f in dataclasses.fields(cls)}


#: Settings that took a boolean before they took a word: the boolean still means this.
_WERE_BOOLEAN: dict[str, dict[bool, str]] = {
    "github.auto_review": {True: "always", False: "off"},
}


def _section(name: str, cls: type[Any], table: Any) -> Any:
    if not isinstance(table, dict):
        raise ConfigError(f"[{name}] must be a table, not {table!r}")
    hints = typing.get_type_hints(cls)
    known = {f.name for f in dataclasses.fields(cls)}
    values: dict[str, Any] = {}
    for key, value in table.items():
        if key not in known:
            raise ConfigError(f"unknown key {name}.{key} (known keys: {', '.join(sorted(known))})")
        old = _WERE_BOOLEAN.get(f"{name}.{key}")
        if old is not None and isinstance(value, bool):
            value = old[value]
        values[key] = _check_value(f"{name}.{key}", value, hints[key])
    return cls(**values)


def parse_config(text: str, source: str = CONFIG_FILE) -> Config:
    """Parse and validate the text of a ``.gitneural.toml``."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{source}: not valid TOML: {exc}") from None
    sections = {f.name: f.type for f in dataclasses.fields(Config)}
    hints = typing.get_type_hints(Config)
    parts: dict[str, Any] = {}
    try:
        for name, table in data.items():
            if name not in sections and not isinstance(table, dict):
                homes = [s for s in sections if name in _keys(hints[s])] or list(sections)
                raise ConfigError(
                    f"{name} is outside any section: put it under "
                    f"{' or '.join(f'[{s}]' for s in homes)}"
                )
            if name not in sections:
                raise ConfigError(
                    f"unknown section [{name}] (known: {', '.join(f'[{s}]' for s in sections)})"
                )
            parts[name] = _section(name, hints[name], table)
        config = Config(**parts)
        if not MIN_PASSES <= config.review.passes <= MAX_PASSES:
            raise ConfigError(
                f"review.passes must be from {MIN_PASSES} to {MAX_PASSES}, "
                f"not {config.review.passes}"
            )
        bad = set(config.github.allowed_associations) - AUTHOR_ASSOCIATIONS
        if bad:
            raise ConfigError(
                f"github.allowed_associations has unknown values {sorted(bad)} "
                f"(known: {', '.join(sorted(AUTHOR_ASSOCIATIONS))})"
            )
    except ConfigError as exc:
        raise ConfigError(f"{source}: {exc}") from None
    return config


def load_config_file(path: Path) -> Config:
    """Read ``path`` if it exists; defaults otherwise."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return Config()
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from None
    return parse_config(text, str(path))


def load_config_bytes(data: bytes | None, source: str = CONFIG_FILE) -> Config:
    """Parse a config blob read from a snapshot; defaults when there is none."""
    if data is None:
        return Config()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ConfigError(f"{source}: not UTF-8") from None
    return parse_config(text, source)


def trusted_config(snapshot: Snapshot | None, explicit: Path | None = None) -> Config:
    """The settings for a review: ``explicit`` if given, else the trusted revision's file.

    Never the reviewed change's own ``.gitneural.toml``: a pull request must not be able
    to loosen the rules it is reviewed by.
    """
    if explicit is not None:
        if not explicit.is_file():
            raise ConfigError(f"config file not found: {explicit}")
        return load_config_file(explicit)
    if snapshot is None:
        return Config()
    return load_config_bytes(snapshot.read(CONFIG_FILE), f"{CONFIG_FILE} at {snapshot.label}")


def config_at(snapshot: Snapshot, path: str) -> Config:
    """The settings file ``path`` names, read at the trusted revision ``snapshot`` (a
    workflow's ``config`` input); unlike ``.gitneural.toml`` it must exist."""
    data = snapshot.read(path.strip().lstrip("/"))
    if data is None:
        raise ConfigError(
            f"config file {path} not found at {snapshot.label}: settings are read from the "
            "trusted branch, so commit it there first"
        )
    return load_config_bytes(data, f"{path} at {snapshot.label}")


def chosen_effort(flag: str | None, configured: Effort) -> Effort:
    """The effort a command runs at: its ``--effort`` (checked by the parser), else
    ``GITNEURAL_REASONING_EFFORT``, else the repository's ``[review] effort``."""
    env = os.environ.get("GITNEURAL_REASONING_EFFORT", "").strip().lower()
    value = flag or env or configured
    if value not in EFFORTS:
        raise UsageError(f"GITNEURAL_REASONING_EFFORT must be one of low, high, max, not {env!r}")
    return value

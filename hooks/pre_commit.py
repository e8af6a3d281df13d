"""``gitneural hook run``: review what is about to be committed (or pushed), then decide.

Order matters for speed: the skip switches, the repository and the staged diff come
first, so empty commits, merges, deletions and skips finish before the review core, the
settings or the model client are imported. A cached result is printed without importing
the openai SDK; a review that cannot run (no key, network down, timeout, quota, a broken
``.gitneural.toml``) prints one line and lets the commit through unless strict.

The hook never changes a file of the repository: it reads the index and the object
database, and writes only its cache and, when asked, the ``--patch-out`` file.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from bot.domain.results import Finding, ReviewResult
from bot.effort import Effort
from bot.errors import EXIT_OK, ConfigError, GitNeuralError
from bot.images.switch import images_for
from bot.settings.repository import HookSettings
from hooks.policy import HookPolicy, cannot_review, resolve_policy, verdict
from hooks.targets import (
    Stage,
    Target,
    is_framework_push,
    open_repository,
    push_targets,
    skip_reason,
    staged_target,
)

if TYPE_CHECKING:
    from bot.code.index import SymbolIndex
    from bot.domain.change import Change
    from bot.llm.settings import LLMSettings
    from bot.settings.repository import Config

#: Hook runs are short: back off briefly between retries (the time budget caps them too).
_BACKOFF_BASE_S = 0.5


@dataclass(frozen=True)
class HookOptions:
    fail_on: str | None = None
    effort: Effort | None = None
    timeout: float | None = None
    strict: bool | None = None
    patch_out: Path | None = None
    stage: Stage | None = None
    config: Path | None = None
    use_cache: bool = True
    progress: bool = True
    #: What git passed to the hook (pre-push: the remote's name and URL).
    hook_args: tuple[str, ...] = ()
    repo: str = "."

    def policy(self, settings: HookSettings) -> HookPolicy:
        return resolve_policy(
            settings,
            fail_on=self.fail_on,
            effort=self.effort,
            timeout=self.timeout,
            strict=self.strict,
        )


@dataclass
class _Reviewed:
    target: Target
    result: ReviewResult
    policy: HookPolicy


class _Refused(Exception):
    """Strict mode: the review could not run and the commit must stop (carries the code)."""

    def __init__(self, code: int) -> None:
        self.code = code


def run(
    options: HookOptions,
    *,
    env: Mapping[str, str],
    stdin: TextIO,
    stdout: TextIO,
    stderr: TextIO,
) -> int:
    reason = skip_reason(env)
    if reason is not None:
        print(f"gitneural: skipped: {reason}", file=stderr)
        return EXIT_OK
    # Until HEAD's settings are read, only the flags and the defaults are known.
    policy = options.policy(HookSettings())
    try:
        targets = _targets(options, env, stdin)
    except GitNeuralError as exc:
        code, warning = cannot_review(exc, policy)
        print(warning, file=stderr)
        return code
    reviewed: list[_Reviewed] = []
    try:
        for target in targets:
            if target.quick is not None or target.change is None:
                print(f"gitneural: {target.quick or 'nothing to review'}", file=stderr)
                continue
            done = _review_target(target, options, env, stdout, stderr)
            if done is not None:
                reviewed.append(done)
    except _Refused as refused:
        return refused.code
    if options.patch_out is not None or any(
        f.suggestion is not None for r in reviewed for f in r.result.findings
    ):
        _suggestions(reviewed, options.patch_out, stdout)
    code = EXIT_OK
    for done in reviewed:
        target_code, refusal = verdict([done.result], done.policy)
        if refusal is not None:
            print(refusal, file=stderr)
        code = max(code, target_code)
    return code


def _targets(options: HookOptions, env: Mapping[str, str], stdin: TextIO) -> list[Target]:
    repo = open_repository(options.repo)
    stage = options.stage or ("pre-push" if is_framework_push(env) else "pre-commit")
    if stage == "pre-commit":
        return [staged_target(repo)]
    remote = options.hook_args[0] if options.hook_args else env.get("PRE_COMMIT_REMOTE_NAME", "")
    # The framework has read git's lines already and names the range in the environment.
    lines = "" if is_framework_push(env) else stdin.read()
    return push_targets(repo, env, remote, lines)


def _review_target(
    target: Target,
    options: HookOptions,
    env: Mapping[str, str],
    stdout: TextIO,
    stderr: TextIO,
) -> _Reviewed | None:
    """Review one target; None when it could not be reviewed and the hook fails open."""
    from bot.llm.settings import LLMSettings
    from bot.render.text import render_text, wants_color
    from bot.settings.repository import trusted_config
    from hooks.cache import ResultCache, cache_key, default_directory

    change = target.change
    assert change is not None
    policy = options.policy(HookSettings())
    try:
        config = trusted_config(change.trusted, options.config)
        # Someone is waiting to commit their own change: no walkthrough of it (it would
        # cost completion tokens, and time, for what the author already knows).
        config.walkthrough.enabled = False
        # The commit's own images only, and only when the repository asks for them.
        change.images = images_for(config, env, hook=True)
        policy = options.policy(config.hook)
        settings = LLMSettings.from_env(
            env,
            effort=policy.effort,
            request_timeout=policy.timeout,
            backoff_base=_BACKOFF_BASE_S,
        )
        cache = ResultCache(default_directory(env)) if options.use_cache else None
        key = None
        if cache is not None:
            from bot.review import PROMPT_VERSION

            key = cache_key(
                change,
                config,
                model=settings.model,
                effort=settings.effort,
                base_url=settings.base_url,
                prompt_version=PROMPT_VERSION,
            )
        result = cache.get(key) if cache is not None and key is not None else None
        if result is not None:
            print(
                f"gitneural: {target.label}: cached review (same change and settings)", file=stderr
            )
        else:
            index = _warm_index(change, target.git_dir)
            too_large = _too_large(change, config, policy, index)
            if too_large is not None:
                print(
                    f"gitneural: {target.label}: not reviewed, going ahead: {too_large}",
                    file=stderr,
                )
                return None
            result = _review(change, config, settings, policy, options.progress, stderr, index)
            if cache is not None and key is not None:
                cache.put(key, result)
    except GitNeuralError as exc:
        code, line = cannot_review(exc, policy)
        print(line, file=stderr)
        if code != EXIT_OK:
            raise _Refused(code) from None
        return None
    stdout.write(render_text(result, change, color=wants_color(stdout)))
    stdout.flush()
    return _Reviewed(target, result, policy)


def _too_large(
    change: Change, config: Config, policy: HookPolicy, index: SymbolIndex | None
) -> str | None:
    """Why the change is too large to review while someone waits to commit (estimated
    before the model is asked; strict or not, the commit goes through), or None."""
    limit = config.hook.confirm_above_tokens
    if limit <= 0:
        return None
    from bot.review import PlanOptions, plan_review

    plan = plan_review(change, config, PlanOptions(effort=policy.effort, symbol_index=index))
    if plan.estimated_tokens <= limit:
        return None
    return (
        f"about {plan.estimated_tokens:,} prompt tokens (estimated), above "
        f"confirm_above_tokens in [hook] ({limit:,}): review it with "
        "`gitneural review --yes` (or --effort low), or raise the setting"
    )


def _warm_index(change: Change, git_dir: str) -> SymbolIndex | None:
    """The symbol index ``gitneural review`` left for the commit under the change, with
    the changed files read again; never built here (the hook's start-up stays fast)."""
    if not git_dir or change.base_sha is None or change.head is None:
        return None
    from bot.code.index import warm_index

    index = warm_index(change.base_sha, git_dir)
    if index is None:
        return None
    return index.with_files(change.head, [f.path for f in change.diff.files])


def _review(
    change: Change,
    config: Config,
    settings: LLMSettings,
    policy: HookPolicy,
    progress_on: bool,
    stderr: TextIO,
    index: SymbolIndex | None = None,
) -> ReviewResult:
    from bot.llm.client import K3Client
    from bot.render.progress import ProgressLine
    from bot.review import review

    progress = ProgressLine(stderr, enabled=progress_on)
    deadline = time.monotonic() + policy.timeout
    try:
        return review(
            change,
            config,
            K3Client(settings),
            on_progress=progress,
            deadline=deadline,
            symbol_index=index,
        )
    finally:
        progress.done()


def _suggestions(reviewed: list[_Reviewed], patch_out: Path | None, stdout: TextIO) -> None:
    from bot.render.sanitize import terminal_text
    from bot.render.text import headline
    from bot.text import encode_text
    from hooks.patch import suggestions_patch

    text = ""
    applied: list[Finding] = []
    left_out: list[tuple[Finding, str]] = []
    for done in reviewed:
        assert done.target.change is not None
        patch = suggestions_patch(done.result.findings, done.target.change)
        text += patch.text
        applied += patch.applied
        left_out += patch.left_out
    lines: list[str] = []
    if patch_out is not None:
        try:
            patch_out.write_bytes(encode_text(text))
        except OSError as exc:
            raise ConfigError(f"cannot write --patch-out {patch_out}: {exc.strerror}") from None
        if applied:
            lines.append(
                f"Wrote {len(applied)} suggestion(s) to {patch_out}: "
                f"review it, then `git apply {patch_out}`"
            )
        else:
            lines.append(f"No suggestion to apply: {patch_out} is empty")
    elif applied:
        lines += [
            f"Suggested patch ({len(applied)} suggestion(s); save it and `git apply` it, "
            "or use --patch-out FILE):",
            terminal_text(text).rstrip("\n"),
        ]
    for finding, reason in left_out:
        lines.append(f"    not in the patch: {headline(finding)} ({terminal_text(reason)})")
    if lines:
        stdout.write("\n".join(["", *lines]) + "\n")
        stdout.flush()

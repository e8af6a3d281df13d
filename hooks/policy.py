"""The hook's policy: when a commit is refused, and what happens when the review can't run.

Flags win over ``[hook]`` in ``.gitneural.toml`` (read from HEAD), which wins over the
defaults: refuse at ``critical``, effort ``low``, 20 seconds, fail open. The exit code of
a cached result is derived here again, so changing ``fail_on`` applies to cached reviews.
"""

from __future__ import annotations

from dataclasses import dataclass

from bot.domain.results import Finding, ReviewResult, Severity
from bot.effort import Effort
from bot.errors import EXIT_FINDINGS, EXIT_OK, GitNeuralError, ModelTimeoutError
from bot.settings.repository import HookSettings

SKIP_HINT = "set GITNEURAL_SKIP=1 to skip the review once"


@dataclass(frozen=True)
class HookPolicy:
    fail_on: Severity
    effort: Effort
    timeout: float
    strict: bool


def resolve_policy(
    settings: HookSettings,
    *,
    fail_on: str | None = None,
    effort: Effort | None = None,
    timeout: float | None = None,
    strict: bool | None = None,
) -> HookPolicy:
    return HookPolicy(
        fail_on=Severity(fail_on or settings.fail_on),
        effort=effort or settings.effort,
        timeout=timeout if timeout is not None else settings.timeout,
        strict=settings.strict if strict is None else strict,
    )


def blocking(result: ReviewResult, policy: HookPolicy) -> list[Finding]:
    """The findings that refuse the commit under ``policy``."""
    return [f for f in result.findings if f.severity.at_least(policy.fail_on)]


def verdict(results: list[ReviewResult], policy: HookPolicy) -> tuple[int, str | None]:
    """Exit code and the closing line for the reviews of one hook run."""
    worst = [f for r in results for f in blocking(r, policy)]
    if not worst:
        return EXIT_OK, None
    count = len(worst)
    noun = "finding" if count == 1 else "findings"
    return EXIT_FINDINGS, (
        f"gitneural: refused: {count} {noun} at or above {policy.fail_on} "
        f"(fail_on in [hook] or --fail-on); fix them, or {SKIP_HINT}"
    )


def _reason(error: GitNeuralError, policy: HookPolicy) -> str:
    """The error, or, when the hook's own time ran out, the setting that gives it more."""
    if not isinstance(error, ModelTimeoutError):
        return str(error)
    lower = "" if policy.effort == "low" else f", or a lower effort than {policy.effort}"
    return (
        f"no answer from the model within the hook's {policy.timeout:.0f}s: raise timeout "
        f"in [hook] of .gitneural.toml (or --timeout){lower}"
    )


def cannot_review(error: GitNeuralError, policy: HookPolicy) -> tuple[int, str]:
    """Fail open (exit 0 with a warning) unless strict: the one line the user sees."""
    error_text = _reason(error, policy)
    if policy.strict:
        return max(error.exit_code, EXIT_FINDINGS), (
            f"gitneural: refused: the review could not run (strict): {error_text}; or {SKIP_HINT}"
        )
    return EXIT_OK, f"gitneural: warning: not reviewed, going ahead: {error_text}"

"""What a command-line review prints, and where: the effort it runs at, the report in
the chosen format, on standard output or in ``-o FILE``, and the exit code. Shared by
``gitneural review`` on a local change and on a pull request (``--pr``)."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from bot.domain.change import Change
from bot.domain.results import ReviewResult, Severity
from bot.effort import Effort
from bot.errors import EXIT_FINDINGS, EXIT_OK, ModelTimeoutError, UsageError
from bot.images.switch import images_for
from bot.settings.repository import CONFIG_FILE, Config, chosen_effort, trusted_config

if TYPE_CHECKING:
    from bot.code.index import SymbolIndex


def exit_code(worst: Severity | None, fail_on: str) -> int:
    """1 when ``worst`` is at least ``fail_on`` (``none``: never), else 0."""
    if fail_on == "none" or worst is None:
        return EXIT_OK
    return EXIT_FINDINGS if worst.at_least(Severity(fail_on)) else EXIT_OK


def settings_source(change: Change, explicit: Path | None) -> str:
    """Which settings file a review reads, and at which revision (the dry run says it)."""
    if explicit is not None:
        return str(explicit)
    if change.trusted is None:
        return "none (no trusted revision): the defaults"
    if change.trusted.read(CONFIG_FILE) is None:
        return f"no {CONFIG_FILE} at {change.trusted.label}: the defaults"
    return f"{CONFIG_FILE} at {change.trusted.label}"


def write_report(text: str, output: str | None, summary: str = "") -> None:
    """The report on standard output, or in ``output`` (then a line on stderr says so,
    with ``summary``: a script's log shows what the file holds)."""
    if output:
        try:
            Path(output).write_text(text, encoding="utf-8")
        except OSError as exc:
            raise UsageError(f"cannot write -o {output}: {exc.strerror}") from None
        tail = f": {summary}" if summary else ""
        print(f"gitneural: wrote {output}{tail}", file=sys.stderr, flush=True)
    else:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
        sys.stdout.flush()


def render(result: ReviewResult, change: Change, fmt: str) -> str:
    from bot import __version__

    if fmt == "json":
        from bot.render.json_report import render_json

        return render_json(result)
    if fmt == "sarif":
        import json

        from bot.render.sarif import render_sarif

        return json.dumps(render_sarif(result, tool_version=__version__, change=change), indent=2)
    from bot.render.text import render_text, wants_color

    return render_text(result, change, color=wants_color(sys.stdout))


def _timeout_advice(timeout: float, config: Config, effort: Effort) -> str:
    """What ran out, and the setting that gives more time (the agent's own budget may be
    the shorter one)."""
    if config.agent.max_seconds < timeout:
        spent, setting = config.agent.max_seconds, "max_seconds in [agent]"
    else:
        spent, setting = timeout, "--timeout, or timeout in [review]"
    lower = "" if effort == "low" else f", or use a lower effort than {effort} (--effort)"
    return (
        f"no answer from the model within {spent:.0f}s: raise {setting} of .gitneural.toml{lower}"
    )


def _size_guard(change: Change, config: Config, effort: Effort, index: SymbolIndex | None) -> None:
    """Refuse, before the model is asked, a review estimated above ``confirm_above_tokens``
    (a person is waiting, and paying): one line with the estimate and how to go on."""
    limit = config.review.confirm_above_tokens
    if limit <= 0:
        return
    from bot.review import PlanOptions, plan_review

    plan = plan_review(change, config, PlanOptions(effort=effort, symbol_index=index))
    if plan.estimated_tokens <= limit:
        return
    lower = "" if effort == "low" else ", or a lower effort (--effort low)"
    raise UsageError(
        f"not sent: about {plan.estimated_tokens:,} prompt tokens (estimated) at effort "
        f"{effort}, above confirm_above_tokens in [review] ({limit:,}): add --yes to send "
        f"it{lower}, or review fewer files (--dry-run lists them)"
    )


def review_and_report(
    change: Change, args: argparse.Namespace, index: SymbolIndex | None = None
) -> int:
    """Review ``change`` (or, with ``--dry-run``, show what would be sent), write the report,
    and say whether a finding reached ``--fail-on`` (or the settings' ``fail_on``)."""
    config = trusted_config(change.trusted, args.config)
    effort = chosen_effort(args.effort, config.review.effort)
    if change.images is None:
        change.images = images_for(config)
    if args.dry_run:
        from bot.cli.dry_run import describe_plan
        from bot.llm.settings import LLMSettings
        from bot.review import PlanOptions, plan_review

        plan = plan_review(change, config, PlanOptions(effort=effort, symbol_index=index))
        settings = LLMSettings.from_env(effort=effort)
        text = describe_plan(
            plan,
            fmt=args.format,
            settings_file=settings_source(change, args.config),
            model=settings.model if args.show_prompt else None,
            max_completion_tokens=config.review.max_completion_tokens,
        )
        write_report(text, args.output, "the dry run")
        return EXIT_OK
    # Imported here: the dry run and the hook's fast path need no model client.
    from bot.llm.client import K3Client
    from bot.llm.settings import LLMSettings
    from bot.render.progress import ProgressLine
    from bot.render.text import count_line
    from bot.review import decide_route, review

    settings = LLMSettings.from_env(effort=effort, stall_timeout=config.review.stall_timeout)
    if not decide_route(change, config, effort).skip:  # a change sent nowhere needs no key
        settings.require_key()
    if not args.yes:
        _size_guard(change, config, effort, index)
    timeout = args.timeout or config.review.timeout
    progress = ProgressLine(enabled=not args.quiet)
    try:
        deadline = time.monotonic() + timeout
        result = review(
            change,
            config,
            K3Client(settings),
            on_progress=progress,
            deadline=deadline,
            symbol_index=index,
        )
    except ModelTimeoutError:
        raise ModelTimeoutError(_timeout_advice(timeout, config, effort)) from None
    finally:
        progress.done()
    write_report(render(result, change, args.format), args.output, count_line(result))
    return exit_code(result.worst(), args.fail_on or config.review.fail_on)

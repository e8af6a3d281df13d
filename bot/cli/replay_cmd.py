"""``gitneural replay``: review past changes of the local repository as the App would
have, post nothing, and score the findings against golden items (later fixes by default,
or a golden file)."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from bot.effort import EFFORTS
from bot.errors import EXIT_OK, RefusedError, UsageError
from bot.replay.items import PastChange

FORMATS = ("text", "json")
JUDGES = ("location", "model")
DEFAULT_MAX_TOKENS = 2_000_000


def add_parser(commands: Any) -> None:
    p: argparse.ArgumentParser = commands.add_parser(
        "replay",
        help="review past changes of this repository and score the findings (posts nothing)",
        description="Review the last merges (or commits) of the current branch exactly as "
        "the App would have, with the settings and instruction files of each change's "
        "base, and score the findings against golden items: lines a later fix changed, "
        "or a golden file. Reviews are kept under the data directory (GITNEURAL_DATA_DIR): "
        "a second run asks the model nothing; Ctrl-C keeps the finished changes.",
        epilog="Before the first model request the estimated prompt tokens are shown; "
        "above --max-tokens the run stops (exit code 4) unless --yes. See docs/quality.md. "
        "Exit codes: 0 fine, 2 usage or configuration, 3 model or API failure, 4 refused.",
    )
    p.add_argument("--last", type=int, default=20, metavar="N", help="the last N changes (20)")
    p.add_argument(
        "--commits",
        action="store_true",
        help="each first-parent commit is a change (c^..c), for a squash-merged history; "
        "default: each first-parent merge (merge^1..merge^2)",
    )
    p.add_argument("--range", dest="revision_range", metavar="A..B", help="walk only A..B")
    p.add_argument(
        "--golden",
        metavar="FILE|github",
        help="golden items from a JSON file or folder (GitNeural's list, or the Code Review "
        "Bench's golden_comments), or 'github': the pull requests' human inline review "
        "comments (needs GITHUB_TOKEN or the App's credentials); default: lines later "
        "fixes changed",
    )
    p.add_argument(
        "--github-repo",
        metavar="OWNER/REPO",
        help="the repository on GitHub for --golden github (default: the origin remote's)",
    )
    p.add_argument(
        "--judge",
        choices=JUDGES,
        default="location",
        help="location: a finding within 3 lines of a golden item of the same file "
        "(default); model: the configured model asked once per change which findings "
        "describe which golden items (answers kept and reused)",
    )
    p.add_argument(
        "--fix-words",
        metavar="WORDS",
        help="comma-separated words that mark a fixing commit's message "
        "(default: fix,fixes,fixed,bug,regression,revert,crash,broken)",
    )
    p.add_argument("--config", type=Path, metavar="FILE", help="one settings file for all")
    p.add_argument(
        "--compare",
        type=Path,
        metavar="OTHER.toml",
        help="review the same changes with this settings file too; one table side by side",
    )
    p.add_argument("--effort", choices=EFFORTS, help="K3 reasoning effort (default: config)")
    p.add_argument("--fresh", action="store_true", help="ask the model again, kept or not")
    p.add_argument("--dry-run", action="store_true", help="plan every change; no model")
    p.add_argument(
        "--max-tokens",
        type=int,
        default=DEFAULT_MAX_TOKENS,
        metavar="N",
        help=f"stop before asking when the estimate is above N ({DEFAULT_MAX_TOKENS:,})",
    )
    p.add_argument("--yes", action="store_true", help="go on above --max-tokens")
    p.add_argument("--timeout", type=float, metavar="SECONDS", help="per change")
    p.add_argument("--format", choices=FORMATS, default="text", help="output format")
    p.add_argument("--out", type=Path, metavar="DIR", help="write report.json/.md/.html here")
    p.add_argument("-C", dest="repo", metavar="DIR", default=".", help="run in DIR")
    p.add_argument("--quiet", action="store_true", help="no progress line")
    p.set_defaults(run=run)


class _Progress:
    """``replay: change k of N, ETA …`` on stderr, before each change the model reviews."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self.started = time.monotonic()
        self.done = 0

    def __call__(self, done: int, total: int, title: str) -> None:
        self.done = done
        if not self.enabled:
            return
        spent = time.monotonic() - self.started
        eta = f", ETA {spent / done * (total - done):.0f}s" if done else ""
        print(
            f"gitneural: replay: change {done + 1} of {total}{eta}: {title[:60]}",
            file=sys.stderr,
            flush=True,
        )


def run(args: argparse.Namespace) -> int:
    from bot.git.repo import open_repo
    from bot.llm.settings import LLMSettings
    from bot.replay.cache import ReviewCache
    from bot.replay.changes import select_changes
    from bot.replay.golden_sources import FIX_WORDS, GITHUB, changes_in_file, golden_items
    from bot.replay.report import build_report
    from bot.replay.run import Judge, judge_all, location_judge, plan_changes, review_all, to_ask
    from bot.settings.environment import data_dir

    for path in (args.config, args.compare):
        if path is not None and not path.is_file():
            raise UsageError(f"settings file not found: {path}")
    repo = open_repo(args.repo)
    changes = select_changes(
        repo, last=args.last, commits=args.commits, revision_range=args.revision_range
    )
    words = (
        tuple(w.strip() for w in args.fix_words.split(",") if w.strip())
        if args.fix_words
        else FIX_WORDS
    )
    # Later fixes are looked for up to the end of the history walked, not the last change.
    until = args.revision_range.partition("..")[2] or "HEAD" if args.revision_range else "HEAD"
    golden = golden_items(
        repo,
        changes,
        args.golden or "history",
        words=words,
        until=until,
        env=os.environ,
        github_repo=args.github_repo,
    )
    if args.golden and args.golden != GITHUB and not any(golden.values()):
        # A golden file of changes the history walked does not hold (a benchmark's pull
        # requests): replay the changes the file names.
        changes = changes_in_file(repo, args.golden)
        golden = golden_items(repo, changes, args.golden)
    model = LLMSettings.from_env().model
    cache = ReviewCache(data_dir(os.environ))
    sides: list[tuple[str, Path | None]] = [
        (str(args.config) if args.config else "each base's .gitneural.toml", args.config)
    ]
    if args.compare is not None:
        sides.append((str(args.compare), args.compare))
    plans = [
        plan_changes(
            repo,
            changes,
            config_file=path,
            effort_flag=args.effort,
            model=model,
            cache=cache,
            fresh=args.fresh,
        )
        for _, path in sides
    ]
    asking = [p for plan in plans for p in to_ask(plan)]
    estimate = sum(p.estimated_tokens for p in asking)
    judging = ""
    if args.judge == "model":
        # One judge request per change and settings file; its findings are not known yet,
        # so this part of the estimate is a lower bound (a kept answer is not asked again).
        from bot.replay.judges import judge_estimate

        judge_tokens = sum(
            judge_estimate(p.past, golden.get(p.past.key, [])) for plan in plans for p in plan
        )
        estimate += judge_tokens
        judging = f", of which about {judge_tokens:,} for the model judge before its findings"
    print(
        f"gitneural: replay: {len(changes)} changes, {len(asking)} to ask the model "
        f"(the others kept from an earlier run): about {estimate:,} prompt tokens "
        f"(estimated{judging})",
        file=sys.stderr,
        flush=True,
    )
    if not args.dry_run and estimate > args.max_tokens and not args.yes:
        raise RefusedError(
            f"about {estimate:,} prompt tokens is above --max-tokens {args.max_tokens:,}: "
            "pass --yes to go on, or replay fewer changes (--last)"
        )
    if not args.dry_run:
        progress = _Progress(not args.quiet)
        total = len(asking)
        try:
            for plan in plans:
                offset = progress.done

                def started(n: int, _total: int, past: PastChange, offset: int = offset) -> None:
                    progress(offset + n, total, past.title)

                review_all(plan, cache, model=model, timeout=args.timeout, on_start=started)
                progress.done = offset + len(to_ask(plan))
        except KeyboardInterrupt:
            print(
                f"gitneural: replay: interrupted; {progress.done} finished changes are kept "
                "(run again to go on)",
                file=sys.stderr,
            )
            raise
    unplaced = sum(1 for items in golden.values() for g in items if g.lines is None)
    if unplaced and args.judge == "location":
        print(
            f"gitneural: replay: {unplaced} golden items have no file and line: only "
            "--judge model can match them",
            file=sys.stderr,
        )
    judge: Judge = location_judge
    if args.judge == "model" and not args.dry_run:
        judge = _model_judge(cache, model, args)
    reports = [
        (
            name,
            build_report(
                judge_all(plan, golden, judge),
                settings=name,
                dry_run=args.dry_run,
                judge=args.judge,
            ),
        )
        for (name, _), plan in zip(sides, plans, strict=True)
    ]
    _write(reports, args)
    return EXIT_OK


def _model_judge(cache: Any, model: str, args: argparse.Namespace) -> Any:
    """The model judge on the configured model (its key needed only when it asks)."""
    from bot.llm.client import K3Client
    from bot.llm.settings import LLMSettings
    from bot.llm.types import ModelClient
    from bot.replay.run import ModelJudge

    def client() -> ModelClient:
        settings = LLMSettings.from_env(model=model, effort=args.effort)
        settings.require_key()
        return K3Client(settings)

    return ModelJudge(client, cache, model=model, fresh=args.fresh)


def _write(reports: list[tuple[str, dict[str, Any]]], args: argparse.Namespace) -> None:
    from bot.replay.report import render_compare, render_markdown, render_text
    from bot.replay.report_html import render_html

    main = reports[0][1]
    if args.format == "json":
        data: dict[str, Any] = dict(main)
        if len(reports) > 1:
            data["compare"] = [{"settings": n, **r} for n, r in reports[1:]]
        text = json.dumps(data, indent=2)
    elif len(reports) > 1:
        text = render_compare(reports)
    else:
        text = render_text(main)
    sys.stdout.write(text + "\n")
    if args.out is not None:
        try:
            args.out.mkdir(parents=True, exist_ok=True)
            (args.out / "report.json").write_text(json.dumps(main, indent=2), encoding="utf-8")
            (args.out / "report.md").write_text(render_markdown(main), encoding="utf-8")
            (args.out / "report.html").write_text(render_html(main), encoding="utf-8")
        except OSError as exc:
            raise UsageError(f"cannot write --out {args.out}: {exc.strerror}") from None
        print(f"gitneural: wrote {args.out}/report.json, .md and .html", file=sys.stderr)

"""What a finished review becomes on GitHub: the review to post and the check run's output.

Findings already posted by an earlier GitNeural review (same fingerprint: same file, same
code at the anchor, same title) are not posted again, and findings dismissed in the
repository, or on this PR by its author (:mod:`bot.usecases.review.memory`), are held back and only
counted, each kind by itself. After an incremental
review, an inline finding must also sit on the PR's own diff (GitHub's view of the whole
PR), or it moves to the body. The check run's conclusion counts every finding still
standing: those the review kept, repeated ones included (they still stand in the reviewed
code), and the earlier findings of the PR neither fixed nor dismissed.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field, replace

from bot.domain.results import Finding, Placement, ReviewResult, Severity, unquoted_text
from bot.gh.checks import CheckOutput, finding_annotations
from bot.gh.post import ReviewDraft
from bot.render.github import (
    Links,
    Marker,
    ReviewText,
    code_span,
    coverage_text,
    dismissed_text,
    inline_comment,
    learnings_left_out,
    review_body,
    severity_counts,
    usage_line,
)
from bot.render.walkthrough import walkthrough_markdown
from bot.settings.repository import GitHubSettings
from bot.usecases.pull_change import PullChange

_NOT_ON_PR = "not on the pull request's diff"
_MAX_TEXT_FINDINGS = 200


@dataclass
class Publication:
    draft: ReviewDraft
    inline: list[Finding]
    listed: list[Finding]
    repeated: list[Finding]
    conclusion: str
    marker: Marker
    #: Findings held back because they were dismissed earlier.
    held: list[Finding] = field(default_factory=list)
    #: Those of :attr:`held` dismissed on this PR only (by its author).
    held_here: int = 0
    #: Severities of the PR's earlier findings still standing (not reported again).
    still_open: list[str] = field(default_factory=list)


def place_on_pr(findings: Sequence[Finding], pc: PullChange) -> list[Finding]:
    """Findings of an incremental review, checked against the whole PR's diff."""
    if pc.since is None:
        return list(findings)
    placed = []
    for finding in findings:
        if finding.placement == Placement.INLINE:
            file = pc.pr_diff.get(finding.path)
            # LEFT lines of an incremental diff number the last reviewed head's file,
            # not the PR base's: they cannot go inline.
            ok = finding.side == "RIGHT" and file is not None
            ok = (
                ok
                and file is not None
                and file.commentable("RIGHT", finding.start_line, finding.end_line)
            )
            if not ok:
                note = f"{finding.note}; {_NOT_ON_PR}" if finding.note else _NOT_ON_PR
                finding = replace(finding, placement=Placement.SUMMARY, note=note)
        placed.append(finding)
    return placed


def conclusion_for(
    findings: Sequence[Finding], settings: GitHubSettings, still_open: Sequence[str] = ()
) -> str:
    if settings.check_conclusion == "neutral":
        return "neutral"
    bar = Severity(settings.check_fail_on)
    known = {str(s) for s in Severity}
    earlier = [Severity(s) for s in still_open if s in known]
    severities = [f.severity for f in findings] + earlier
    return "failure" if any(s.at_least(bar) for s in severities) else "success"


def publish(
    result: ReviewResult,
    pc: PullChange,
    *,
    head_sha: str,
    trigger: str,
    delivery: str,
    web_url: str,
    posted_fingerprints: Collection[str],
    settings: GitHubSettings,
    dismissed: Collection[str] = (),
    still_open: Sequence[str] = (),
    dismissed_here: Collection[str] = (),
) -> Publication:
    """``dismissed``: fingerprints held back; ``dismissed_here``: those of them held back
    because the PR's author dismissed them (on this PR only)."""
    placed = place_on_pr(result.findings, pc)
    held = [f for f in placed if f.fingerprint and f.fingerprint in dismissed]
    here = sum(1 for f in held if f.fingerprint in dismissed_here)
    findings = [f for f in placed if not (f.fingerprint and f.fingerprint in dismissed)]
    seen = set(posted_fingerprints)
    repeated = [f for f in findings if f.fingerprint and f.fingerprint in seen]
    new = [f for f in findings if not (f.fingerprint and f.fingerprint in seen)]
    inline = [f for f in new if f.placement == Placement.INLINE]
    listed = [f for f in new if f.placement != Placement.INLINE]
    conclusion = conclusion_for(findings, settings, still_open)
    worst = max((f.severity for f in findings), key=lambda s: s.rank, default=None)
    marker = Marker(
        head=head_sha,
        trigger=trigger,
        delivery=delivery,
        since=pc.since,
        conclusion=conclusion,
        fingerprints=tuple(f.fingerprint for f in new if f.fingerprint),
        worst=None if worst is None else str(worst),
        findings=len(findings),
    )
    links = Links(web_url, head_sha, pc.change.base_sha)
    text = ReviewText(
        summary=result.summary,
        coverage=result.coverage,
        usage=result.usage,
        model=result.model,
        effort=result.effort,
        duration_s=result.duration_s,
        scope=pc.scope,
        repeated=len(repeated),
        unquoted=result.unquoted(),
        levers=result.lever_counts(),
        dismissed=len(held) - here,
        dismissed_here=here,
        learnings_left_out=result.learnings_left_out,
        walkthrough=walkthrough_markdown(result.walkthrough),
    )
    body = review_body(text, inline=inline, listed=listed, links=links, marker=marker)
    fallback = review_body(text, inline=[], listed=inline + listed, links=links, marker=marker)
    draft = ReviewDraft(head_sha, body, [inline_comment(f) for f in inline], fallback)
    return Publication(
        draft,
        inline,
        listed,
        repeated,
        conclusion,
        marker,
        held=held,
        still_open=list(still_open),
        held_here=here,
    )


def _finding_line(finding: Finding) -> str:
    where = f"line {finding.start_line}" + (" (old file)" if finding.side == "LEFT" else "")
    return f"- **{finding.severity}** {code_span(finding.path)} {where}: {finding.title}"


def check_output(
    result: ReviewResult, pc: PullChange, pub: Publication, review_url: str, moved: bool
) -> CheckOutput:
    """The completed check run: what was posted, coverage, usage, annotations."""
    everything = pub.inline + pub.listed + pub.repeated
    n = len(everything)
    title = (
        f"{n} finding{'s' if n != 1 else ''} ({severity_counts(everything)})"
        if n
        else ("No findings")
    )
    posted = f"[Review posted]({review_url})" if review_url else "Review posted"
    if moved:
        posted += " (GitHub refused the inline comments: they are in the review's body)"
    inline, in_body = len(pub.inline), len(pub.listed)
    if moved:
        inline, in_body = 0, inline + in_body
    counts = f"{inline} inline · {in_body} in the review body"
    if pub.repeated:
        counts += f" · {len(pub.repeated)} already reported earlier"
    if len(pub.held) > pub.held_here:
        counts += f" · {dismissed_text(len(pub.held) - pub.held_here)}"
    if pub.held_here:
        counts += f" · {dismissed_text(pub.held_here, here=True)}"
    if pub.still_open:
        counts += f" · {len(pub.still_open)} still open from earlier reviews"
    unquoted = result.unquoted()
    if unquoted:
        counts += f" · {unquoted_text(unquoted)}"
    counts += "".join(f" · {said}" for said in result.lever_counts())
    summary = "\n\n".join(
        [
            f"{posted}: {counts}.",
            *(
                [learnings_left_out(result.learnings_left_out) + "."]
                if result.learnings_left_out
                else []
            ),
            coverage_text(result.coverage, pc.scope),
            *([result.route.line()] if result.route is not None else []),
            usage_line(result.usage, result.model, result.effort, result.duration_s),
        ]
    )
    lines = [_finding_line(f) for f in everything[:_MAX_TEXT_FINDINGS]]
    if result.dropped:
        lines.append(f"\n{len(result.dropped)} finding(s) the findings check could not keep:")
        lines += [f"- {code_span(f.path)}: {reason}" for f, reason in result.dropped[:50]]
    return CheckOutput(
        conclusion=pub.conclusion,
        title=title,
        summary=summary,
        text="\n".join(lines),
        annotations=finding_annotations(everything),
    )

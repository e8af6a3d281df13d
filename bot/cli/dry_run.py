"""``gitneural review --dry-run``: what a review would send, without a key or a model;
with ``--show-prompt``, the first request of each part exactly as it would leave."""

from __future__ import annotations

import json
from typing import Any

from bot.review import ReviewPlan


def requests(plan: ReviewPlan, model: str, max_completion_tokens: int) -> list[dict[str, Any]]:
    """The body of each part's first request (K3 sees these fields and no others)."""
    return [
        {
            "model": model,
            "messages": g.messages,
            "max_completion_tokens": max_completion_tokens,
            "reasoning_effort": plan.effort,
            "tools": plan.tools,
        }
        for g in plan.groups
    ]


def describe_plan(
    plan: ReviewPlan,
    *,
    fmt: str,
    settings_file: str,
    model: str | None = None,
    max_completion_tokens: int = 0,
) -> str:
    """The dry run's report; ``model`` given: with the requests (``--show-prompt``)."""
    bodies = requests(plan, model, max_completion_tokens) if model is not None else None
    if fmt != "text":
        shown: dict[str, Any] = {"requests": bodies} if bodies is not None else {}
        return json.dumps(
            {
                "dry_run": True,
                "settings": settings_file,
                "effort": plan.effort,
                "route": plan.route.as_dict() if plan.route is not None else None,
                "agentic": plan.agentic,
                "estimated_prompt_tokens": plan.estimated_tokens,
                "files": [{"path": f.file.path, "tokens": f.tokens} for f in plan.files],
                "skipped": [{"path": s.path, "reason": s.reason} for s in plan.skipped],
                "secrets_found": len(plan.secrets),
                "images": [
                    {"name": i.name, "width": i.width, "height": i.height, "tokens": i.tokens}
                    for i in plan.images
                ],
                "images_not_sent": [
                    {"name": n.what, "reason": n.reason} for n in plan.images_named
                ],
                "parts": [
                    {
                        "files": [f.file.path for f in g.files],
                        "estimated_prompt_tokens": g.estimated_tokens,
                        "messages": g.messages,
                    }
                    for g in plan.groups
                ],
                **shown,
            },
            indent=2,
        )
    mode = "agentic, read-only tools" if plan.agentic else "one-shot"
    lines = [
        f"Dry run: nothing was sent. Effort {plan.effort} ({mode}); "
        f"about {plan.estimated_tokens:,} prompt tokens (estimated).",
        f"Settings: {settings_file}.",
        *([plan.route.line()] if plan.route is not None else []),
        f"Files in the prompt ({len(plan.files)}):",
    ]
    lines += [f"  {f.file.path}  ~{f.tokens:,} tokens" for f in plan.files] or ["  (none)"]
    if plan.split:
        lines.append(
            f"Too large for one prompt: reviewed in {len(plan.groups)} parts of related files "
            "(up to [agent] concurrency at once):"
        )
        lines += [
            f"  part {n}: {len(g.files)} files, ~{g.estimated_tokens:,} tokens"
            for n, g in enumerate(plan.groups, 1)
        ]
    if plan.skipped:
        lines.append(f"Skipped ({len(plan.skipped)}):")
        lines += [f"  {s.path}: {s.reason}" for s in plan.skipped]
    if plan.secrets:
        lines.append(
            f"Secrets found on added lines: {len(plan.secrets)} (redacted before sending; "
            "reported as critical findings)"
        )
    if plan.instructions:
        lines.append("Repository instructions: included from the trusted revision.")
    if plan.images:
        lines.append(f"Images in the prompt ({len(plan.images)}):")
        lines += [f"  {i.name}  {i.width}x{i.height}, ~{i.tokens:,} tokens" for i in plan.images]
    if plan.images_named:
        lines.append(f"Images not sent ({len(plan.images_named)}):")
        lines += [f"  {n.what}: {n.reason}" for n in plan.images_named]
    for n, body in enumerate(bodies or [], 1):
        lines += [
            "",
            f"Request {n} of {len(bodies or [])} (JSON, as sent):",
            json.dumps(body, indent=2),
        ]
    return "\n".join(lines)

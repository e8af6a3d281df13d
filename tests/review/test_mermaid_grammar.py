"""GitNeural's diagram checker against Mermaid's own parser (the ``mermaid`` package, run
by Node): every diagram the checker accepts, Mermaid parses. Diagrams are generated from
the whole subset at random (seeded), plus the hand-written ones of the other tests and
every keyword the checker refuses as an id."""

from __future__ import annotations

import random

from bot.review.walkthrough.mermaid import RESERVED, DiagramError, check_sequence_diagram
from tests.review.test_walkthrough import VALID
from tests.support.mermaid import mermaid_errors
from tests.support.walkthrough import DIAGRAM

ARROWS = ("->", "-->", "->>", "-->>", "-x", "--x", "-)", "--)")
IDS = ("A", "B", "api_1", "Worker", "end_user", "loop2", "x")
TEXTS = ("", "hi", "GET /pulls/7 (retried), 50% of 'calls'", 'say "ok" & done!', "a: b")


def _diagram(rng: random.Random) -> str:
    lines = ["sequenceDiagram"]
    if rng.random() < 0.3:
        lines.append("autonumber")
    for name in rng.sample(IDS, rng.randint(0, 3)):
        kind = rng.choice(("participant", "actor"))
        label = rng.choice(("", " as The API (v2), public"))
        lines.append(f"{kind} {name}{label}")
    open_blocks: list[str] = []
    for _ in range(rng.randint(1, 12)):
        roll = rng.random()
        a, b = rng.choice(IDS), rng.choice(IDS)
        if roll < 0.5:
            lines.append(f"{a}{rng.choice(ARROWS)}{b}: {rng.choice(TEXTS)}")
        elif roll < 0.6:
            lines.append(f"{a}->>+{b}: call")
            lines.append(f"{b}-->>-{a}: back")
        elif roll < 0.7:
            where = rng.choice(("left of", "right of", "over"))
            pair = f"{a},{b}" if where == "over" and rng.random() < 0.5 else a
            lines.append(f"Note {where} {pair}: {rng.choice(TEXTS[1:])}")
        elif roll < 0.85:
            block = rng.choice(("loop", "alt", "opt", "par", "critical", "break"))
            lines.append(f"{block} {rng.choice(TEXTS)}".rstrip())
            lines.append(f"{a}->>{b}: inside")
            split = {"alt": "else", "par": "and", "critical": "option"}.get(block)
            if split:
                lines.append(f"{split} {rng.choice(TEXTS)}".rstrip())
                lines.append(f"{b}-->>{a}: other")
            open_blocks.append(block)
        elif open_blocks:
            open_blocks.pop()
            lines.append("end")
        else:
            lines.append(f"activate {a}")
            lines.append(f"{a}->>{b}: busy")
            lines.append(f"deactivate {a}")
    lines += ["end"] * len(open_blocks)
    return "\n".join(lines)


def test_every_diagram_the_checker_accepts_mermaid_parses() -> None:
    rng = random.Random(21)
    generated = [_diagram(rng) for _ in range(300)]
    accepted = []
    for text in [VALID, DIAGRAM, *generated]:
        try:
            accepted.append(check_sequence_diagram(text))
        except DiagramError as exc:
            # The generator stays inside the subset but may exceed its limits, write
            # notes only, or put ``-`` before ``x`` (refused: Mermaid reads an arrow).
            allowed = ("over", "no message", "before an id starting with x")
            assert any(reason in str(exc) for reason in allowed), (text, exc)
    assert len(accepted) > 250
    verdicts = mermaid_errors(accepted)
    refused = [(text, error) for text, error in zip(accepted, verdicts, strict=True) if error]
    assert refused == []


def test_keywords_the_checker_refuses_as_ids_include_those_mermaid_refuses() -> None:
    words = sorted(RESERVED)
    verdicts = mermaid_errors([f"sequenceDiagram\n{w}->>B: x" for w in words])
    refused_by_mermaid = {w for w, error in zip(words, verdicts, strict=True) if error}
    assert {"note", "end", "participant", "activate", "loop"} <= refused_by_mermaid
    for word in words:
        try:
            check_sequence_diagram(f"sequenceDiagram\n{word}->>B: x")
        except DiagramError as exc:
            assert "Mermaid keyword" in str(exc)
        else:
            raise AssertionError(f"{word} accepted as an id")

"""Secret redaction: recall on the planted corpus, false positives on real code.

- **Found / planted**: every secret of ``tests/support/secret_corpus.py`` (formats and
  placements, made at run time) must be redacted so that no piece of it remains, and
  reported (a reportable hit, or a summary note for a title or description). Budget: all.
- **False positives**: the benchmarks' corpus (:mod:`benchmarks.corpus_files`: the
  standard library, which holds no real secret) is redacted file by file; every line
  the redaction changes is a false positive, named on stderr (path, line, kind).
  Budget: a handful. Reported ones (those that would be a "secret committed" finding)
  are counted apart.
- **Throughput**: the same files, redacted as one pass each (the cost on every diff).
"""

from __future__ import annotations

import sys
import time

from benchmarks.common import Row, row
from benchmarks.corpus_files import corpus_paths, stdlib_root
from benchmarks.standalone import main
from bot.review.secrets.redaction import redact_path, redact_text, secret_notes
from tests.support.secret_corpus import Planted, corpus

#: False positives allowed on the standard library ("a handful", issue 19).
FALSE_POSITIVE_BUDGET = 5


def _found(case: Planted) -> bool:
    if case.where == "file":
        shown, hits = redact_text(case.content)
        reported = any(h.report for h in hits)
    elif case.where == "name":
        shown = redact_path(case.path)
        reported = any(h.report for h in redact_text(case.path)[1])
    else:
        shown = redact_text(case.content)[0]
        title = case.content if case.where == "title" else ""
        reported = bool(secret_notes(title, case.content if case.where == "description" else ""))
    size = 12
    leaked = any(
        n[i : i + size] in shown for n in case.needles for i in range(max(1, len(n) - size + 1))
    )
    return reported and not leaked


def _false_positives(paths: list[str]) -> tuple[list[tuple[str, int, str, bool]], int, float]:
    """(path, line, kind, reported) of each hit, bytes scanned, seconds spent."""
    root = stdlib_root()
    hits: list[tuple[str, int, str, bool]] = []
    size, spent = 0, 0.0
    for path in paths:
        text = (root / path).read_bytes().decode("utf-8", "surrogateescape")
        size += len(text)
        started = time.perf_counter()
        _, found = redact_text(text)
        spent += time.perf_counter() - started
        hits += [(path, h.line, h.kind, h.report) for h in found]
    return hits, size, spent


def run(quick: bool = False) -> list[Row]:
    cases = corpus()
    missed = [c.name for c in cases if not _found(c)]
    for name in missed:
        print(f"missed: {name}", file=sys.stderr)
    share = 100.0 * (len(cases) - len(missed)) / len(cases)
    paths = list(corpus_paths())
    if quick:
        paths = paths[:40]
    redact_text("warm = 1\n")  # imports made late, not counted as throughput
    hits, size, spent = _false_positives(paths)
    for path, line, kind, reported in hits:
        print(f"false positive: {path}:{line}: {kind}{' (reported)' if reported else ''}")
    reported = sum(1 for h in hits if h[3])
    return [
        row(
            f"secrets found / planted ({len(cases) - len(missed)} / {len(cases)})",
            round(share, 1),
            "%",
            "100%",
            not missed,
        ),
        row(
            f"false positives on the standard library ({len(paths)} files): lines redacted",
            len(hits),
            "",
            f"<= {FALSE_POSITIVE_BUDGET}",
            len(hits) <= FALSE_POSITIVE_BUDGET,
        ),
        row("  of which reported as a secret committed", reported),
        row("redaction throughput on the standard library", round(size / spent / 1e6, 2), "MB/s"),
    ]


if __name__ == "__main__":
    sys.exit(main(run))

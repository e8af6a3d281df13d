"""The maintainers' instructions, read from the TRUSTED revision only, within one limit.

Three kinds, in this order (the prompt's trusted part, before the learnings):

1. the files named by ``[review] instructions`` (``AGENTS.md``, ``CLAUDE.md``,
   ``.github/copilot-instructions.md``, ``CONTRIBUTING.md`` by default), always shown;
2. path-scoped instruction files other tools' users already keep, shown only when the
   change touches a file they apply to: ``.github/instructions/*.instructions.md``
   (Copilot: front matter ``applyTo``, comma-separated globs) and ``.cursor/rules/*.mdc``
   (Cursor: front matter ``globs``; ``alwaysApply: true`` applies everywhere; a rule
   with neither is for Cursor's agent to pick and is not shown);
3. ``[[review.path_instructions]]`` from ``.gitneural.toml`` (``paths`` + ``text``).

All of them share ``instructions_max_chars``. A file cut short says so in the prompt, and
:attr:`Instructions.cut` names what was cut or left out, for the review's summary.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field

from bot.domain.change import Snapshot
from bot.review.tools.globs import any_glob_matcher
from bot.settings.repository import SCOPED_INSTRUCTION_DIRS, PathInstruction
from bot.text import decode_text, printable

COPILOT_DIR, CURSOR_DIR = SCOPED_INSTRUCTION_DIRS
COPILOT_SUFFIX = ".instructions.md"
CURSOR_SUFFIX = ".mdc"
#: Scoped files read per directory, at most (a directory of hundreds is not instructions).
MAX_SCOPED_FILES = 50


@dataclass
class Instructions:
    text: str = ""
    #: What was cut short or left out, one phrase each (``CLAUDE.md cut: 900 of 4,000
    #: characters shown``).
    cut: list[str] = field(default_factory=list)

    def summary_note(self) -> str:
        """The review summary's sentence about what the limit cut, or ""."""
        if not self.cut:
            return ""
        return "Instructions over the limit (instructions_max_chars): " + "; ".join(self.cut) + "."


@dataclass(frozen=True)
class _Source:
    name: str
    text: str


def front_matter(text: str) -> tuple[dict[str, str | list[str]], str]:
    """The ``---`` front matter's keys (strings, or lists for ``[a, b]`` and ``- a``
    lines) and the text after it; no front matter: ``({}, text)``."""
    lines = text.split("\n")
    if not lines or lines[0].strip() != "---":
        return {}, text
    try:
        end = next(i for i in range(1, len(lines)) if lines[i].strip() == "---")
    except StopIteration:
        return {}, text
    found: dict[str, str | list[str]] = {}
    key = ""
    for line in lines[1:end]:
        stripped = line.strip()
        if stripped.startswith("- ") and key:
            items = found.get(key)
            found[key] = [*(items if isinstance(items, list) else []), _unquote(stripped[2:])]
            continue
        name, sep, value = line.partition(":")
        if not sep or line[:1].isspace():
            continue
        key, value = name.strip(), value.strip()
        if value.startswith("[") and value.endswith("]"):
            found[key] = [_unquote(v) for v in value[1:-1].split(",") if v.strip()]
        else:
            found[key] = _unquote(value)
    return found, "\n".join(lines[end + 1 :])


def _unquote(value: str) -> str:
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return value[1:-1]
    return value


def _globs(value: str | list[str] | None) -> list[str]:
    items = value if isinstance(value, list) else (value or "").split(",")
    return [g.strip() for g in items if g.strip()]


def _touches(globs: Iterable[str], paths: Collection[str]) -> bool:
    test = any_glob_matcher(globs)
    return any(test(path) for path in paths)


def _read(trusted: Snapshot, path: str) -> str:
    data = trusted.read(path)
    return "" if data is None else printable(decode_text(data)).strip()


def _scoped_files(trusted: Snapshot, directory: str, suffix: str) -> list[str]:
    names = sorted(
        e.name for e in trusted.list_dir(directory) if e.kind == "file" and e.name.endswith(suffix)
    )
    return [f"{directory}/{name}" for name in names[:MAX_SCOPED_FILES]]


def _scoped(trusted: Snapshot, paths: Collection[str]) -> list[_Source]:
    found = []
    for path in _scoped_files(trusted, COPILOT_DIR, COPILOT_SUFFIX):
        meta, body = front_matter(_read(trusted, path))
        if _touches(_globs(meta.get("applyTo")), paths):
            found.append(_Source(f"{path} (applies to {_shown_globs(meta.get('applyTo'))})", body))
    for path in _scoped_files(trusted, CURSOR_DIR, CURSOR_SUFFIX):
        meta, body = front_matter(_read(trusted, path))
        always = str(meta.get("alwaysApply", "")).lower() == "true"
        if always or _touches(_globs(meta.get("globs")), paths):
            scope = "always" if always else f"applies to {_shown_globs(meta.get('globs'))}"
            found.append(_Source(f"{path} ({scope})", body))
    return found


def _shown_globs(value: str | list[str] | None) -> str:
    return ", ".join(_globs(value))


def read_instructions(
    trusted: Snapshot | None,
    names: Sequence[str],
    max_chars: int,
    *,
    paths: Collection[str] = (),
    scoped: bool = False,
    path_rules: Sequence[PathInstruction] = (),
) -> Instructions:
    """The instructions for a change touching ``paths``, at most ``max_chars`` in all."""
    if trusted is None:
        return Instructions()
    sources = [_Source(name, _read(trusted, name)) for name in names]
    if scoped:
        sources += _scoped(trusted, paths)
    for index, rule in enumerate(path_rules):
        if _touches(rule.paths, paths):
            name = f"path_instructions[{index}] (applies to {', '.join(rule.paths)})"
            sources.append(_Source(name, printable(rule.text).strip()))
    return _within(sources, max_chars)


def _within(sources: Iterable[_Source], max_chars: int) -> Instructions:
    """Each text headed by its name; a cut is stated in the text so neither the model
    nor a maintainer reading the prompt mistakes a truncated file for the whole."""
    parts: list[str] = []
    cut: list[str] = []
    used = 0
    for source in sources:
        name, text = source.name, source.text.strip()
        if not text:
            continue
        room = max_chars - used
        if room <= 0:
            parts.append(f"[{name} left out: the instructions limit of {max_chars} is reached]")
            cut.append(f"{name} left out")
            continue
        if len(text) > room:
            end = text.rfind("\n", 0, room)
            kept = text[: end if end > room // 2 else room]
            text = f"{kept}\n[… {name} cut: {len(kept)} of {len(text)} characters shown]"
            cut.append(f"{name} cut ({len(kept):,} of {len(source.text.strip()):,} characters)")
            used = max_chars
        else:
            used += len(text)
        parts.append(f"## {name}\n\n{text}")
    return Instructions("\n\n".join(parts), cut)


def load_instructions(trusted: Snapshot | None, names: Sequence[str], max_chars: int) -> str:
    """The named instruction files only (what an answer in a thread shows)."""
    return read_instructions(trusted, names, max_chars).text

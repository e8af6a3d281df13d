"""A ``.gitneural.toml`` holding every setting at its default, commented, made from the
settings' own definitions (:mod:`bot.config`: the dataclasses, their defaults and their
``#:`` comments), so it can never fall behind them. ``gitneural init`` writes it.

Every setting is written commented out (``# effort = "max"``): the file means "the
defaults" today and keeps meaning it when a default changes; uncommenting a line
changes that setting alone.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import typing
from dataclasses import dataclass
from typing import Any

from bot.config import CONFIG_FILE, Config

HEADER = f"""\
# {CONFIG_FILE}: GitNeural's settings for this repository.
#
# Read from the trusted revision (HEAD for the hook and `gitneural review`, the default
# branch for the App and the Action), never from the change under review.
# Every setting is shown at its default, commented out: uncomment a line to change it.
"""


@dataclass(frozen=True)
class Setting:
    name: str
    default: Any
    #: The ``#:`` comment above the field, joined into one paragraph ("" if none).
    doc: str


@dataclass(frozen=True)
class Section:
    name: str
    doc: str
    settings: tuple[Setting, ...]


def _field_docs(cls: type[Any]) -> dict[str, str]:
    """Each field's ``#:`` comment lines, read from the class's source."""
    docs: dict[str, str] = {}
    pending: list[str] = []
    for raw in inspect.getsource(cls).splitlines():
        line = raw.strip()
        if line.startswith("#:"):
            pending.append(line[2:].strip())
            continue
        name, colon, _ = line.partition(":")
        is_field = colon and name.isidentifier() and not line.startswith(("def ", "class "))
        if is_field and pending:
            docs[name] = " ".join(pending)
        pending = []
    return docs


def _doc(comment: str, hint: Any) -> str:
    """The comment as plain text, and the values a setting takes when they are few."""
    text = comment.replace("``", "`")
    if typing.get_origin(hint) is typing.Literal:
        text = f"{text} One of: {', '.join(typing.get_args(hint))}.".strip()
    return text


def sections() -> tuple[Section, ...]:
    """Every section of the settings file and every setting in it, with its default."""
    found: list[Section] = []
    defaults = Config()
    for part in dataclasses.fields(Config):
        value = getattr(defaults, part.name)
        cls = type(value)
        docs = _field_docs(cls)
        hints = typing.get_type_hints(cls)
        settings = tuple(
            Setting(f.name, getattr(value, f.name), _doc(docs.get(f.name, ""), hints[f.name]))
            for f in dataclasses.fields(cls)
        )
        doc = inspect.cleandoc(cls.__doc__ or "")
        if doc.startswith(f"{cls.__name__}("):
            doc = ""  # the signature dataclasses give a class without a docstring
        found.append(Section(part.name, doc.replace("``", "`"), settings))
    return tuple(found)


def toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    raise TypeError(f"no TOML form for {value!r}")  # pragma: no cover


def _comment(text: str, width: int = 88) -> list[str]:
    lines: list[str] = []
    current = ""
    for word in text.split():
        if current and len(current) + 1 + len(word) > width - 2:
            lines.append(f"# {current}")
            current = word
        else:
            current = f"{current} {word}" if current else word
    if current:
        lines.append(f"# {current}")
    return lines


def default_settings_file() -> str:
    """The whole file: header, then each section with its settings commented out."""
    out = [HEADER.rstrip("\n")]
    for section in sections():
        out.append("")
        out += _comment(section.doc)
        out.append(f"[{section.name}]")
        for setting in section.settings:
            out += _comment(setting.doc)
            out.append(f"# {setting.name} = {toml_value(setting.default)}")
    return "\n".join(out) + "\n"

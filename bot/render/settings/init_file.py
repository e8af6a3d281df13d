"""A ``.gitneural.toml`` holding every setting at its default, commented, made from the
settings' own definitions (:mod:`bot.settings.repository`: the dataclasses, their defaults and their
``#:`` comments), so it can never fall behind them. ``gitneural init`` writes it.

Every setting is written commented out (``# effort = "max"``): the file means "the
defaults" today and keeps meaning it when a default changes; uncommenting a line
changes that setting alone.
"""

from __future__ import annotations

from bot.render.settings.reference import Setting, sections
from bot.settings.repository import CONFIG_FILE

__all__ = ["default_settings_file", "sections"]

HEADER = f"""\
# {CONFIG_FILE}: GitNeural's settings for this repository.
#
# Read from the trusted revision (HEAD for the hook and `gitneural review`, the default
# branch for the App and the Action), never from the change under review.
# Every setting is shown at its default, commented out: uncomment a line to change it.
"""


def _plain(text: str) -> str:
    """A definition's comment as plain text for a TOML comment."""
    return text.replace("``", "`")


def _doc(setting: Setting) -> str:
    """The setting's comment, and the values it takes when they are few."""
    if setting.kind.startswith("one of "):
        choices = setting.kind.removeprefix("one of ").replace("`", "")
        return f"{_plain(setting.description)} One of: {choices}.".strip()
    return _plain(setting.description)


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
        out += _comment(_plain(section.description))
        out.append(f"[{section.name}]")
        for setting in section.settings:
            out += _comment(_doc(setting))
            out.append(f"# {setting.name} = {setting.default}")
    return "\n".join(out) + "\n"

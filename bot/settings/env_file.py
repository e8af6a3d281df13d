"""The settings file, ``gitneural.env``: the App's settings as ``NAME=value`` lines, read
besides the environment (the environment wins) and written by ``gitneural setup``.

The format is the one systemd's ``EnvironmentFile=`` and Compose's ``env_file:`` read, so
one file serves ``gitneural serve``, a service unit and a container: ``#`` comments,
blank lines, an optional ``export``, values bare, in single quotes (literal) or in double
quotes (``\\n``, ``\\"`` and ``\\\\`` escapes). The private key is written on one line with
``\\n`` escapes, which every one of those readers keeps or turns back into newlines.
One grammar for reading and writing: lines end at ``\\n`` only (``\\r\\n`` too), no line
holds a control character, and the writer refuses a value it cannot write on one line
that reads back exactly (a ``\\r`` once split a value into settings of its own).

Which file: ``GITNEURAL_SETTINGS_FILE`` if set (it must exist), else ``gitneural.env`` in
the current directory if there is one.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Mapping, MutableMapping
from pathlib import Path
from typing import Final

from bot.errors import ConfigError

SETTINGS_FILE_ENV: Final = "GITNEURAL_SETTINGS_FILE"
DEFAULT_NAME: Final = "gitneural.env"
_LINE: Final = re.compile(r"\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*?)\s*")
_ESCAPES: Final = {"n": "\n", '"': '"', "\\": "\\", "$": "$"}
#: Characters no line of the file holds (a tab aside): every C0 and C1 control, DEL and
#: the Unicode line separators. Lines end at ``\n`` only, as systemd and Compose read
#: them; a value the writer cannot keep on one line of this grammar is refused.
_CONTROL: Final = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029]")


def settings_path(env: Mapping[str, str], cwd: Path | None = None) -> Path | None:
    """The settings file to read, or None when there is none."""
    raw = env.get(SETTINGS_FILE_ENV, "").strip()
    if raw:
        path = Path(raw).expanduser()
        if not path.is_file():
            raise ConfigError(f"{SETTINGS_FILE_ENV} names {path}, which is not a file")
        return path
    path = (cwd or Path.cwd()) / DEFAULT_NAME
    return path if path.is_file() else None


def read_settings(path: Path) -> dict[str, str]:
    """The file's ``NAME=value`` pairs; a line that is neither is an error naming it."""
    try:
        text = path.read_bytes().decode("utf-8")  # no universal newlines: \n ends a line
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) else "not UTF-8 text"
        raise ConfigError(f"cannot read the settings file {path}: {reason}") from None
    return _parse(text, str(path))


def _lines(text: str) -> list[str]:
    """The file's lines: ends at ``\n`` (``\r\n`` too), and nowhere else."""
    return [line.removesuffix("\r") for line in text.split("\n")]


def _parse(text: str, where: str) -> dict[str, str]:
    values: dict[str, str] = {}
    for number, line in enumerate(_lines(text), 1):
        if _CONTROL.search(line):
            raise ConfigError(f"{where}:{number} holds a control character: remove it")
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        match = _LINE.fullmatch(line)
        value = _unquote(match.group(2)) if match else None
        if match is None or value is None:
            raise ConfigError(f"{where}:{number} is not a NAME=value line (values may be quoted)")
        values[match.group(1)] = value
    return values


def _unquote(raw: str) -> str | None:
    if raw[:1] == "'":
        return raw[1:-1] if len(raw) > 1 and raw.endswith("'") else None
    if raw[:1] != '"':
        return None if " #" in raw else raw
    if len(raw) < 2 or not raw.endswith('"'):
        return None
    out, chars = [], iter(raw[1:-1])
    for char in chars:
        if char == "\\":
            nxt = next(chars, "")
            # systemd keeps an unknown escape as written; so do we.
            out.append(_ESCAPES.get(nxt, "\\" + nxt))
        else:
            out.append(char)
    return "".join(out)


def load_settings_file(
    environ: MutableMapping[str, str] | None = None, given: Path | None = None
) -> Path | None:
    """Put the settings file's values into ``environ`` (default ``os.environ``) where it
    has none of its own, so every part of the App and its child processes read them;
    returns the file read. ``given`` (a command's ``--settings-file``) wins over
    ``GITNEURAL_SETTINGS_FILE`` and becomes it, for the child processes."""
    environ = os.environ if environ is None else environ
    if given is not None:
        environ[SETTINGS_FILE_ENV] = str(given)
    path = settings_path(environ)
    if path is None:
        return None
    for name, value in read_settings(path).items():
        if not environ.get(name, "").strip():
            environ[name] = value
    return path


def quoted(value: str) -> str:
    """``value`` as a double-quoted one-line value (newlines as ``\\n``); a value holding
    any other control character is refused (a ``\\r`` once split a value into settings
    of its own for every reader that breaks lines on it)."""
    escaped = value.replace("\\", "\\\\").replace('"', '\\"').replace("$", "\\$")
    line = '"' + escaped.replace("\n", "\\n") + '"'
    if _CONTROL.search(line):
        raise ConfigError("a control character in a value: nothing written")
    return line


def write_settings(path: Path, values: Mapping[str, str], header: str) -> None:
    """Write ``values`` to ``path`` readable by its owner only (0600 from its creation:
    the key is never readable by others, even for a moment), keeping the file's other
    lines; replaces it atomically."""
    kept: list[str] = []
    if path.exists():
        for line in _lines(path.read_bytes().decode("utf-8").rstrip("\n")):
            match = _LINE.fullmatch(line)
            if not (match and match.group(1) in values) and not line.startswith("# gitneural:"):
                kept.append(line)
    lines = [f"# gitneural: {_CONTROL.sub('?', row)}" for row in header.splitlines()]
    for name, value in values.items():
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            raise ConfigError(f"{name!r} is not a setting's name: nothing written")
        try:
            lines.append(f"{name}={quoted(value)}")
        except ConfigError:
            raise ConfigError(f"{name} holds a control character: nothing written") from None
    text = "\n".join([*lines, *([""] if kept else []), *kept]).rstrip("\n") + "\n"
    # One grammar: what is written reads back as exactly these values, or nothing is.
    read_back = _parse(text, str(path))
    if any(read_back.get(name) != value for name, value in values.items()):
        raise ConfigError(f"{path}: the values would not read back as written: nothing written")
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
        tmp.chmod(0o600)  # whatever the umask said
        tmp.replace(path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise

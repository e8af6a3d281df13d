"""The settings reference, generated from the settings' own definitions.

Two parts. First a repository's ``.gitneural.toml``: every section of
:class:`bot.settings.repository.Config` is a dataclass; its docstring describes the section, and the
``#:`` comment above each field describes the setting. This module reads them (the
comments with :mod:`ast` from the dataclass's source, so nothing is written twice). Then
the deployment's environment variables (the App's ``gitneural.env``), from the table in
:mod:`bot.settings.server`: each row's name, default, description, group and the
processes that refuse to start without it. It renders ``docs/configuration.md``;
``tests/project/test_config_reference.py`` fails when the committed page differs from what
it renders, or when a setting of either part has no description. A setting added to
``bot/settings/repository.py`` or to the table appears here with no other change.

``python -m bot.render.settings.reference`` rewrites the page; ``--check`` only compares.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import inspect
import json
import sys
import textwrap
import typing
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Literal, Protocol, get_args, get_origin

from bot.review import DOC_EXTENSIONS, SENSITIVE
from bot.settings.repository import CONFIG_FILE, DEFAULT_IGNORES, Config
from bot.settings.server import SERVER_SETTINGS

PAGE = Path("docs") / "configuration.md"


@dataclass(frozen=True)
class Setting:
    section: str
    name: str
    kind: str  # the values it takes, in words
    default: str  # as TOML
    description: str  # "" when the field has no ``#:`` comment


@dataclass(frozen=True)
class Section:
    name: str
    description: str  # the dataclass's docstring, "" when it has none
    settings: tuple[Setting, ...]


class EnvSetting(Protocol):
    """A row of an environment settings table (:class:`bot.settings.server.ServerSetting`)."""

    @property
    def name(self) -> str: ...
    @property
    def default(self) -> str: ...
    @property
    def description(self) -> str: ...
    @property
    def required_for(self) -> tuple[str, ...]: ...
    @property
    def alternatives(self) -> tuple[str, ...]: ...
    @property
    def group(self) -> str: ...


@cache
def _class_text(cls: type[Any]) -> tuple[str, dict[str, str]]:
    """``cls``'s own docstring (not the signature ``dataclass`` makes up when it has none),
    and field name -> its ``#:`` comment lines joined, read from ``cls``'s source."""
    source = inspect.getsource(sys.modules[cls.__module__])
    lines = source.splitlines()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ClassDef) and node.name == cls.__name__:
            break
    else:  # pragma: no cover - a dataclass always has a class statement
        raise LookupError(f"no class {cls.__name__} in {cls.__module__}")
    comments: dict[str, str] = {}
    for stmt in node.body:
        if not (isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)):
            continue
        above: list[str] = []
        index = stmt.lineno - 2  # the line above, 0-based
        while index >= 0 and lines[index].strip().startswith("#:"):
            above.insert(0, lines[index].strip()[2:].strip())
            index -= 1
        comments[stmt.target.id] = " ".join(above)
    return ast.get_docstring(node) or "", comments


def _kind(hint: Any) -> str:
    if get_origin(hint) is Literal:
        choices = [f"`{c}`" for c in get_args(hint)]
        return "one of " + ", ".join(choices)
    if hint is bool:
        return "`true` or `false`"
    if hint is str:
        return "a string"
    if hint is int:
        return "a whole number >= 0"
    if hint is float:
        return "a number > 0"
    if get_origin(hint) is list and dataclasses.is_dataclass(get_args(hint)[0]):
        keys = " and ".join(f"`{f.name}`" for f in dataclasses.fields(get_args(hint)[0]))
        return f"an array of tables, each with {keys}"
    if get_origin(hint) is list:
        return "a list of strings"
    raise TypeError(f"no words for a setting of type {hint!r}")


def toml_value(value: Any) -> str:
    """``value`` as TOML writes it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    raise TypeError(f"no TOML for {value!r}")


def sections(config: type[Any] = Config) -> list[Section]:
    """Every section of ``config`` and every setting in it, in the order they are defined."""
    found = []
    defaults = config()
    for part in dataclasses.fields(config):
        cls = typing.get_type_hints(config)[part.name]
        hints = typing.get_type_hints(cls)
        docstring, comments = _class_text(cls)
        values = getattr(defaults, part.name)
        settings = tuple(
            Setting(
                section=part.name,
                name=f.name,
                kind=_kind(hints[f.name]),
                default=toml_value(getattr(values, f.name)),
                description=comments.get(f.name, ""),
            )
            for f in dataclasses.fields(cls)
        )
        found.append(Section(part.name, docstring, settings))
    return found


def undocumented(found: Sequence[Section]) -> list[str]:
    """``section`` or ``section.key`` for every section and setting without a description."""
    missing = [f"[{s.name}]" for s in found if not s.description]
    missing += [f"{s.section}.{s.name}" for p in found for s in p.settings if not s.description]
    return missing


def undocumented_env(table: Sequence[EnvSetting]) -> list[str]:
    """The name of every environment setting without a description."""
    return [s.name for s in table if not s.description.strip()]


def _markdown(text: str) -> str:
    # The comments are reStructuredText-ish (``code``); the page is Markdown.
    return " ".join(text.replace("``", "`").split())


def _cell(text: str) -> str:
    return _markdown(text).replace("|", "\\|")


INTRO = f"""\
# Configuration reference

<!-- Generated by `python -m bot.render.settings.reference` from bot/settings/repository.py and
bot/settings/server.py: do not edit. -->

A repository's settings live in `{CONFIG_FILE}` at its root. GitNeural reads the file
from the **trusted** revision, never from the change under review, so a pull request
cannot loosen the rules it is reviewed by:

- the GitHub App and `gitneural review --pr`: the repository's default branch;
- the GitHub Action: the pull request's base branch;
- `gitneural review` and the pre-commit hook: `HEAD`, or the revision `--base` names;
- anywhere: the file `--config FILE` names (the Action's `config` input).

Every setting is optional. An unknown section or key, or a value of the wrong type, is an
error that names the key, so a typo never silently means "the default".
Settings of the deployment (keys, URLs, brokers) are environment variables: see
[the App's settings](#the-apps-settings-environment-and-gitneuralenv) below.
"""

ENV_INTRO = """\
## The App's settings (environment and `gitneural.env`)

The GitHub App's processes (`gitneural serve`, `worker`, `doctor`) read these from the
environment and from the settings file: `gitneural.env` in the current directory, or the
file `GITNEURAL_SETTINGS_FILE` names, with lines `NAME=value` (quotes allowed, `#`
comments); a variable set in the environment wins. `gitneural setup` writes the App's
credentials there. Before starting, `serve` and `worker` check every one and name every
missing or malformed setting in one message. *Required by* names the processes that
refuse to start without it (`web`: the webhook server; `worker`: the review workers;
`serve` with the embedded broker is both). The command line (`gitneural review`, the hook,
the Action) reads only the model's variables, `GITHUB_API_URL` and
`GITNEURAL_ALLOW_INSECURE_GITHUB`. More on each: [Deploying the App](deploying.md),
[Operating the App](operating.md), [Kimi K3 settings](model.md).
"""


def render_toml(found: Sequence[Section]) -> str:
    """Every setting at its default, each with its description as a comment."""
    blocks = []
    for part in found:
        lines = [f"[{part.name}]"]
        for s in part.settings:
            # Wrapped to fit a narrow page or editor beside the key it describes.
            lines += [f"# {line}" for line in textwrap.wrap(_markdown(s.description), 86)]
            lines.append(f"{s.name} = {s.default}")
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks) + "\n"


def render_env(table: Sequence[EnvSetting]) -> str:
    """The environment settings, one table per group, in the table's order."""
    groups: dict[str, list[EnvSetting]] = {}
    for setting in table:
        groups.setdefault(setting.group, []).append(setting)
    listed = {s.name for s in table}
    out = [ENV_INTRO]
    for group, rows in groups.items():
        out.append(f"### {group[:1].upper()}{group[1:]}\n")
        out.append("| variable | default | required by | meaning |")
        out.append("|---|---|---|---|")
        for s in rows:
            # An alternative with no row of its own is named beside the one it stands for.
            others = [n for n in s.alternatives if n not in listed]
            name = " or ".join(f"`{n}`" for n in (s.name, *others))
            default = f"`{_cell(s.default)}`" if s.default else "—"
            required = ", ".join(f"`{r}`" for r in s.required_for) or "—"
            if required != "—" and len(others) < len(s.alternatives):
                required += (
                    " (or " + ", ".join(f"`{n}`" for n in s.alternatives if n in listed) + ")"
                )
            out.append(f"| {name} | {default} | {required} | {_cell(s.description)} |")
        out.append("")
    return "\n".join(out)


def render_page(found: Sequence[Section], env: Sequence[EnvSetting] = SERVER_SETTINGS) -> str:
    out = [INTRO, "## Every setting at its default\n", "```toml", render_toml(found) + "```\n"]
    for part in found:
        out.append(f"## `[{part.name}]`\n")
        out.append(_markdown(part.description) + "\n")
        out.append("| setting | default | values | meaning |")
        out.append("|---|---|---|---|")
        for s in part.settings:
            out.append(
                f"| `{s.name}` | `{_cell(s.default)}` | {_cell(s.kind)} | {_cell(s.description)} |"
            )
        out.append("")
    globs = ", ".join(f"`{g}`" for g in DEFAULT_IGNORES)
    out.append("## The default ignores\n")
    out.append(
        f"With `default_ignores = true`, these globs are skipped (`*` spans `/`): {globs}.\n"
    )
    out.append(render_routes())
    out.append(render_env(env))
    return "\n".join(out).rstrip("\n") + "\n"


ROUTES_INTRO = """\
## Routes

Before the model is asked, each change is routed from the change alone (the files the
ignore globs keep), and the route is said with its reason in the review's summary, the
check run and the JSON report (`route`). The first that applies wins:

1. **formatting only**: the change is empty once trailing whitespace is ignored, or no
   file's tokens changed (text inside string literals counts; in Python the tokenizer,
   which sees indentation, judges; in YAML and Makefiles only trailing whitespace may
   move). No model request at all: one line, exit 0, a passing check run.
2. the team's `[[review.route]]` tables, in their order. `paths` are globs (without `/` a
   file name in any directory, `**` spans directories); `effort` is `low`, `high`, `max`
   or `skip` (no request); `model = "routine"` sends the review to the routine endpoint
   (`KIMI_ROUTINE_MODEL`, `KIMI_ROUTINE_BASE_URL`, `KIMI_ROUTINE_API_KEY`, each the main
   one's when unset). A route at `max` applies when any file of the change matches, any
   other when every file does: a change is never reviewed less because one of its files
   is routine.
3. **sensitive**: any file matching the globs below: effort `max`, whatever the
   configured effort.
4. **docs only**: every file is documentation (the extensions below): effort `low`.
5. the configured effort (`--effort`, `GITNEURAL_REASONING_EFFORT`, `[review] effort`).

With `routing = false` only the team's routes apply. For example:

```toml
[[review.route]]
paths = ["docs/**", "*.md"]
effort = "low"
model = "routine"

[[review.route]]
paths = ["billing/**"]
effort = "max"
```
"""


def render_routes() -> str:
    """The routes, and the default globs of the sensitive and docs routes."""
    lines = [ROUTES_INTRO, "| sensitive | globs |", "|---|---|"]
    lines += [f"| {kind} | {', '.join(f'`{g}`' for g in globs)} |" for kind, globs in SENSITIVE]
    docs = ", ".join(f"`{e}`" for e in sorted(DOC_EXTENSIONS))
    lines += [
        "",
        "A glob without `/` is a file name in any directory. Docs are the files ending in "
        f"{docs} (but `CMakeLists.txt`).",
        "",
    ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bot.render.settings.reference", description="Write docs/configuration.md."
    )
    parser.add_argument("--check", action="store_true", help="compare only; 1 if it differs")
    parser.add_argument("--output", type=Path, default=PAGE, metavar="FILE")
    args = parser.parse_args(argv)
    found = sections()
    missing = undocumented(found) + undocumented_env(SERVER_SETTINGS)
    if missing:
        print(f"no description (a #: comment or docstring): {', '.join(missing)}", file=sys.stderr)
        return 1
    text = render_page(found, SERVER_SETTINGS)
    if args.check:
        current = args.output.read_text(encoding="utf-8") if args.output.exists() else ""
        if current != text:
            print(f"{args.output} is stale: run {parser.prog}", file=sys.stderr)
            return 1
        return 0
    args.output.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""The house's structure, read from the code's own imports (with :mod:`ast`, nothing runs).

- no import cycle among the modules of ``bot/``, ``workers/``, ``hooks/`` and ``prompts/``;
- no module outside ``tests/`` over 500 lines (size is a smell past ~400: the rule is one
  subject per module, never a cut to meet a number), and no folder of more than 15;
- no ``# fmt: skip`` without its reason on the same line: the formatter decides layout;
- nothing outside the core imports a module inside it: only its face, ``bot.review``;
- the layers below import only downward, and each module stands in one of them;
- the core depends on the model client's protocol, never on the client, and on no web,
  queue or GitHub library;
- the one ``except Exception`` is the job runner's outer boundary;
- every package of the product is listed in ``pyproject.toml``, so an install ships it.

``docs/architecture.md`` explains the layers; a new module takes its place in ``LAYERS``.
Tests and benchmarks may reach into the core: they check and time its stages one by one.
"""

from __future__ import annotations

import ast
import re
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from tests.support.paths import ROOT

PRODUCT = ("bot", "workers", "hooks", "prompts")
MAX_LINES = 500
MAX_MODULES_PER_FOLDER = 15
CORE = "bot.review"

#: From the bottom up. A module may import its own group, and any group of a lower layer;
#: never a group of its own layer or of a higher one. A group is a package or a module,
#: with everything under it.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "small shared modules",
        (
            "bot",
            "bot.errors",
            "bot.text",
            "bot.effort",
            "bot.usage",
            "bot.retry_after",
            "prompts",
        ),
    ),
    ("vocabulary: the diff, the change, the results", ("bot.domain",)),
    (
        "settings and jobs, budgets, metrics and log lines",
        (
            "bot.settings.repository",
            "bot.settings.environment",
            "bot.extras",
            "bot.jobs",
            "bot.settings.budgets",
            "bot.metrics",
            "bot.logs",
            "bot.settings.server",
            "bot.settings.env_file",
            "bot.settings.broker",
        ),
    ),
    (
        "git, the parsers, the images and the model client",
        ("bot.git", "bot.code", "bot.images", "bot.llm"),
    ),
    ("the review core", (CORE,)),
    ("output", ("bot.render",)),
    ("GitHub, and the store of what GitNeural remembers", ("bot.gh", "bot.store")),
    (
        "the use cases: a pull request reviewed, a conversation answered, history replayed",
        ("bot.usecases", "bot.replay"),
    ),
    (
        "the commands: one module each, routed by the entrances through their registry",
        ("bot.commands",),
    ),
    ("the workers' settings", ("workers.settings",)),
    ("the workers' state: the PRs' locks and records, fencing, no Celery", ("workers.state",)),
    ("the review schedule: fair turns, claims and leases, no Celery", ("workers.schedule",)),
    ("entrances", ("bot.web", "workers", "hooks")),
    ("the GitHub Action, on the App's router and the use cases", ("bot.action",)),
    ("the command line, which starts every entrance", ("bot.cli",)),
)

#: Libraries of the entrances and of GitHub access: the core, and what it stands on, know
#: nothing of them.
ENTRANCE_LIBRARIES = frozenset(
    {"flask", "werkzeug", "celery", "kombu", "gunicorn", "redis", "sqlalchemy", "github"}
)


@dataclass(frozen=True)
class Module:
    name: str
    path: Path
    tree: ast.Module

    @property
    def is_package(self) -> bool:
        return self.path.name == "__init__.py"


def _name_of(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _python_files(*tops: str) -> Iterator[Path]:
    """Every ``.py`` file under the given top-level folders, in a stable order."""
    for top in tops:
        yield from sorted((ROOT / top).rglob("*.py"))


@cache
def modules() -> dict[str, Module]:
    found = {}
    for path in _python_files(*PRODUCT):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        found[_name_of(path)] = Module(_name_of(path), path, tree)
    return found


def _imported(module: Module) -> Iterator[tuple[str, int]]:
    """Every name ``module`` imports (a module, or a package's attribute), with its line;
    lazy and ``TYPE_CHECKING`` imports too: they are dependencies all the same."""
    for node in ast.walk(module.tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.name if module.is_package else module.name.rpartition(".")[0]
                for _ in range(node.level - 1):
                    base = base.rpartition(".")[0]
                target = f"{base}.{node.module}" if node.module else base
            else:
                target = node.module or ""
            for alias in node.names:
                yield f"{target}.{alias.name}", node.lineno


def _resolve(name: str) -> str | None:
    """The product module ``name`` is, or is an attribute of; None for other libraries."""
    known = modules()
    while name:
        if name in known:
            return name
        name = name.rpartition(".")[0]
    return None


@cache
def edges() -> dict[str, set[tuple[str, int]]]:
    """Module -> the product modules it imports (with the line)."""
    graph: dict[str, set[tuple[str, int]]] = {name: set() for name in modules()}
    for name, module in modules().items():
        for imported, line in _imported(module):
            target = _resolve(imported)
            if target is not None and target != name:
                graph[name].add((target, line))
    return graph


def _group(name: str) -> tuple[int, str]:
    """(layer index, group) of a module: the longest group that holds it."""
    best: tuple[int, str] | None = None
    for index, (_, groups) in enumerate(LAYERS):
        for group in groups:
            if (name == group or name.startswith(group + ".")) and (
                best is None or len(group) > len(best[1])
            ):
                best = (index, group)
    assert best is not None, f"{name} stands in no layer: give it a place in LAYERS"
    return best


def _where(name: str, line: int) -> str:
    return f"{modules()[name].path.relative_to(ROOT)}:{line}"


def test_the_product_is_read_whole() -> None:
    # Guards the checks below against reading nothing.
    assert {
        "bot.review",
        "bot.review.pipeline",
        "bot.review.plan",
        "bot.usecases.review.run",
        "hooks.pre_commit",
    } <= set(modules())
    assert any(target == CORE for target, _ in edges()["bot.render.text"])


def test_no_import_cycle() -> None:
    graph = {name: {target for target, _ in targets} for name, targets in edges().items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(node: str) -> None:  # Tarjan's strongly connected components
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for name in sorted(graph):
        if name not in index:
            visit(name)
    assert cycles == []


def test_no_module_outside_the_tests_is_over_500_lines() -> None:
    long = []
    for path in _python_files(*PRODUCT, "benchmarks"):
        count = len(path.read_text(encoding="utf-8").splitlines())
        if count > MAX_LINES:
            long.append(f"{path.relative_to(ROOT)}: {count} lines")
    assert long == []


#: ``# fmt: skip`` and what follows it on its line; a reason is any word after it.
FMT_SKIP = re.compile(r"#\s*fmt:\s*(?:skip|off)\b(.*)$")


def test_no_fmt_skip_without_a_reason_beside_it() -> None:
    bare = []
    for path in _python_files(*PRODUCT, "benchmarks", "tests"):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            found = FMT_SKIP.search(line)
            if found and not re.search(r"\w", found.group(1)):
                bare.append(f"{path.relative_to(ROOT)}:{number}")
    assert bare == []


def test_outside_the_core_only_its_face_is_imported() -> None:
    reached_in = [
        f"{_where(name, line)} imports {target}"
        for name, targets in edges().items()
        if not (name == CORE or name.startswith(CORE + "."))
        for target, line in targets
        if target.startswith(CORE + ".")
    ]
    assert reached_in == []


def test_the_core_never_imports_its_own_face() -> None:
    # The face imports the stages: a stage importing it would go round in a circle.
    inward = [
        _where(name, line)
        for name, targets in edges().items()
        if name.startswith(CORE + ".")
        for target, line in targets
        if target == CORE
    ]
    assert inward == []


def test_layers_import_only_downward() -> None:
    wrong = []
    for name, targets in edges().items():
        layer, group = _group(name)
        for target, line in targets:
            target_layer, target_group = _group(target)
            if target_group != group and target_layer >= layer:
                wrong.append(
                    f"{_where(name, line)}: {group} ({LAYERS[layer][0]}) imports "
                    f"{target} ({LAYERS[target_layer][0]})"
                )
    assert wrong == []


def test_the_core_depends_on_the_model_protocol_not_the_client() -> None:
    used = {
        target
        for name, targets in edges().items()
        if name == CORE or name.startswith(CORE + ".")
        for target, _ in targets
        if target.startswith("bot.llm")
    }
    assert used == {"bot.llm.types"}


def test_the_core_and_what_it_stands_on_know_no_web_queue_or_github_library() -> None:
    below_entrances = (
        "bot.domain",
        "bot.git",
        "bot.llm",
        CORE,
        "bot.settings.repository",
        "bot.text",
    )
    found = []
    for name, module in modules().items():
        if not any(name == top or name.startswith(top + ".") for top in below_entrances):
            continue
        for imported, line in _imported(module):
            if imported.partition(".")[0] in ENTRANCE_LIBRARIES:
                found.append(f"{_where(name, line)} imports {imported}")
    assert found == []


def _function_at(tree: ast.Module, line: int) -> str:
    """The innermost function around ``line`` (``""`` at module level)."""
    around = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.lineno <= line <= (node.end_lineno or node.lineno)
    ]
    return max(around, key=lambda node: node.lineno).name if around else ""


def test_the_one_except_exception_is_the_job_runners_outer_boundary() -> None:
    broad = []
    for name, module in modules().items():
        for node in ast.walk(module.tree):
            if isinstance(node, ast.ExceptHandler) and (
                node.type is None
                or (isinstance(node.type, ast.Name) and node.type.id == "Exception")
            ):
                broad.append(f"{name}.{_function_at(module.tree, node.lineno)}")
    assert broad == ["bot.usecases.review.run.run_review_job"]


def test_every_except_base_exception_cleans_up_and_raises_again() -> None:
    swallowed = []
    for name, module in modules().items():
        for node in ast.walk(module.tree):
            if (
                isinstance(node, ast.ExceptHandler)
                and isinstance(node.type, ast.Name)
                and node.type.id == "BaseException"
                and not (isinstance(node.body[-1], ast.Raise) and node.body[-1].exc is None)
            ):
                swallowed.append(_where(name, node.lineno))
    assert swallowed == []


def test_every_package_of_the_product_ships() -> None:
    listed = set(
        tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]
    )
    packages = {name for name, module in modules().items() if module.is_package}
    assert packages == listed


def test_no_folder_holds_more_than_15_modules() -> None:
    crowded = []
    for top in PRODUCT:
        for folder in sorted({(ROOT / top), *(p.parent for p in (ROOT / top).rglob("*.py"))}):
            count = sum(1 for p in folder.glob("*.py") if p.name != "__init__.py")
            if count > MAX_MODULES_PER_FOLDER:
                crowded.append(f"{folder.relative_to(ROOT)}: {count} modules")
    assert crowded == []


#: What the use cases must never need: the queue and the web server are entrances' business.
SERVER_LIBRARIES = frozenset({"flask", "werkzeug", "celery", "kombu", "gunicorn"})


def test_the_use_cases_import_no_celery_or_flask() -> None:
    found = [
        f"{_where(name, line)} imports {imported}"
        for name, module in modules().items()
        if name == "bot.usecases" or name.startswith("bot.usecases.")
        for imported, line in _imported(module)
        if imported.partition(".")[0] in SERVER_LIBRARIES
    ]
    assert found == []


def _reached_from(start: str) -> set[str]:
    seen: set[str] = set()
    todo = [start]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        todo.extend(target for target, _ in edges()[name])
    return seen


def test_the_action_and_review_pr_reach_nothing_in_workers() -> None:
    # Directly or through other modules: the Action and ``review --pr`` run the use cases,
    # never the Celery package.
    starts = [name for name in modules() if name.startswith("bot.action")]
    starts.append("bot.cli.pr_review")
    reached = {
        f"{start} -> {name}"
        for start in starts
        for name in _reached_from(start)
        if name == "workers" or name.startswith("workers.")
    }
    assert starts and reached == set()


#: One word per idea: a reply, a question or a command answered is a "conversation".
RETIRED_WORDS = ("discussion",)


def test_no_module_or_folder_is_named_with_a_retired_word() -> None:
    named = [
        path.relative_to(ROOT).as_posix()
        for top in (*PRODUCT, "tests", "benchmarks")
        for path in (ROOT / top).rglob("*")
        if "__pycache__" not in path.parts
        and any(word in path.name.lower() for word in RETIRED_WORDS)
    ]
    assert named == []


def test_no_lua_is_written_inside_python() -> None:
    # Lua lives in .lua files beside the module that sends it (package data), where an
    # editor, a linter and a reviewer see it as Lua.
    inline = [
        _where(name, node.lineno)
        for name, module in modules().items()
        for node in ast.walk(module.tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and "redis.call(" in node.value
    ]
    assert inline == []

"""What installing GitNeural costs: the default install (the CLI, the hook, ``review
--pr``, the Action's runner) against the full one with the ``app`` extra (the server).

- **closure in this environment** (quick and full): the distributions each install
  pulls in, followed through their requirements as installed here, and the megabytes
  of their files on disk. No network, no install: the same numbers a fresh install
  gives, minus pip's own bytecode choices;
- **fresh virtual environments** (full runs only): ``.`` and ``'.[app]'`` installed into
  new environments the way pipx (the docs' install) makes them: no pip or setuptools
  inside, the installing pip runs from outside (``pip --python``). Timed, then the
  packages and megabytes of each environment's ``site-packages``: what the install put
  there. What ``python -m venv`` adds to either (its own pip and setuptools, the same
  megabytes in both) is a row of its own;
- **the hook's first run**: ``pre-commit install-hooks`` with an empty
  ``PRE_COMMIT_HOME``, the environment the pre-commit framework builds on a developer's
  first commit (full runs only).

pip's cache is off for every install, so each one pays the same (packages come from the
configured index). Budget (issue 20): the default install at most half of the full one,
in megabytes.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import time
import tomllib
import venv
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement

from benchmarks.common import Row, row
from benchmarks.standalone import main
from tests.support.paths import ROOT
from tests.support.repos import commit, make_repo

MB = 1_000_000
HALF = 0.5


def _name(text: str) -> str:
    return re.sub(r"[-_.]+", "-", text).lower()


def _closure(requirements: list[str], extras: tuple[str, ...] = ()) -> set[str]:
    """Every distribution the requirements pull in, as installed in this environment."""
    seen: set[str] = set()
    todo = [(Requirement(r), set(extras)) for r in requirements]
    while todo:
        req, wanted = todo.pop()
        name = _name(req.name)
        if req.marker is not None and not any(
            req.marker.evaluate({"extra": e}) for e in (wanted or {""})
        ):
            continue
        if name == "gitneural":
            continue  # the project's own extras are expanded by the caller
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue
        new = name not in seen
        seen.add(name)
        if new or req.extras:
            for sub in dist.requires or []:
                todo.append((Requirement(sub), set(req.extras)))
    return seen


def _megabytes(names: set[str]) -> float:
    total = 0
    for name in names:
        for file in metadata.distribution(name).files or []:
            path = Path(str(file.locate()))
            if path.is_file():
                total += path.stat().st_size
    return total / MB


def _project() -> tuple[list[str], dict[str, list[str]]]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return project["dependencies"], project["optional-dependencies"]


def _expanded(extra: str, extras: dict[str, list[str]]) -> list[str]:
    out: list[str] = []
    for req in extras[extra]:
        inner = re.fullmatch(r"gitneural\[(\w+)\]", req)
        out += _expanded(inner[1], extras) if inner else [req]
    return out


def _closure_rows() -> list[Row]:
    light_reqs, extras = _project()
    light = _closure(light_reqs)
    full = light | _closure(_expanded("app", extras))
    parsers = _closure(_expanded("parsers", extras)) - light
    images = _closure(_expanded("images", extras)) - light
    light_mb, full_mb = _megabytes(light), _megabytes(full)
    ratio = light_mb / full_mb
    return [
        row("default install: distributions (closure here)", len(light), "packages"),
        row("with [app]: distributions (closure here)", len(full), "packages"),
        row("default install: size on disk (closure here)", round(light_mb, 1), "MB"),
        row("with [app]: size on disk (closure here)", round(full_mb, 1), "MB"),
        row(
            "default / full, megabytes (closure here)",
            round(ratio, 2),
            "",
            f"<= {HALF}",
            ratio <= HALF,
        ),
        # What docs/getting-started.md quotes for the grammars (benchmarks/install_sizes.py).
        row(
            "[parsers] extra alone: size on disk (closure here)",
            round(_megabytes(parsers), 1),
            "MB",
        ),
        # And for Pillow, the images extra.
        row(
            "[images] extra alone: size on disk (closure here)",
            round(_megabytes(images), 1),
            "MB",
        ),
    ]


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_NO_", "PRE_COMMIT"))}
    env["PIP_NO_CACHE_DIR"] = "1"
    return env


def _site_megabytes(where: Path) -> float:
    site = next((where / "lib").glob("python3*/site-packages"))
    size = sum(p.stat().st_size for p in site.rglob("*") if p.is_file() and not p.is_symlink())
    return size / MB


def _fresh(where: Path, target: str) -> tuple[float, int, float]:
    """Seconds to install ``target`` into a new environment; its packages and megabytes."""
    venv.EnvBuilder(with_pip=False).create(where)
    pip = [sys.executable, "-m", "pip", "--python", str(where / "bin" / "python")]
    started = time.perf_counter()
    subprocess.run(
        [*pip, "install", "--quiet", target],
        env=_env(),
        check=True,
        capture_output=True,
        timeout=1800,
    )
    seconds = time.perf_counter() - started
    listed = subprocess.run([*pip, "list", "--format=freeze"], capture_output=True, text=True)
    return seconds, len(listed.stdout.split()), _site_megabytes(where)


def _venv_own_megabytes(where: Path) -> float:
    """What ``python -m venv`` puts in an environment before anything is installed."""
    venv.EnvBuilder(with_pip=True).create(where)
    return _site_megabytes(where)


def _pre_commit_first_install(root: Path) -> float:
    rev = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.strip()
    scratch = root / "scratch"
    config = f"repos:\n  - repo: {ROOT}\n    rev: {rev}\n    hooks: [{{id: gitneural}}]\n"
    commit(make_repo(scratch), {".pre-commit-config.yaml": config}, "config")
    env = {**_env(), "PRE_COMMIT_HOME": str(root / "pre-commit-home")}
    started = time.perf_counter()
    subprocess.run(
        [str(Path(sys.executable).parent / "pre-commit"), "install-hooks"],
        cwd=scratch,
        env=env,
        check=True,
        capture_output=True,
        timeout=1800,
    )
    return time.perf_counter() - started


def run(quick: bool = False) -> list[Row]:
    rows = _closure_rows()
    if quick:
        return rows
    with tempfile.TemporaryDirectory(prefix="bench-install-") as tmp:
        root = Path(tmp)
        light_s, light_n, light_mb = _fresh(root / "light", str(ROOT))
        full_s, full_n, full_mb = _fresh(root / "full", f"{ROOT}[app]")
        hook_s = _pre_commit_first_install(root)
        venv_mb = _venv_own_megabytes(root / "plain")
    ratio = light_mb / full_mb
    return [
        *rows,
        row("fresh venv, pip install . : seconds", round(light_s, 1), "s"),
        row("fresh venv, pip install '.[app]' : seconds", round(full_s, 1), "s"),
        row("fresh venv, default install: packages (pip list)", light_n, "packages"),
        row("fresh venv, with [app]: packages (pip list)", full_n, "packages"),
        row("fresh venv, default install: site-packages", round(light_mb, 1), "MB"),
        row("fresh venv, with [app]: site-packages", round(full_mb, 1), "MB"),
        row(
            "fresh venv, default / full, megabytes",
            round(ratio, 2),
            "",
            f"<= {HALF}",
            ratio <= HALF,
        ),
        row("python -m venv's own pip and setuptools (either install)", round(venv_mb, 1), "MB"),
        # The same two installs in a plain `python -m venv` (pip and setuptools inside), as
        # `pip install` in a virtual environment makes them; pipx's have neither.
        row(
            "plain venv (its pip and setuptools counted), default / full, megabytes",
            round((light_mb + venv_mb) / (full_mb + venv_mb), 2),
        ),
        row("pre-commit install-hooks, first time (hook environment)", round(hook_s, 1), "s"),
    ]


if __name__ == "__main__":
    # python -m benchmarks.install_sizes runs this module and writes its sizes into the docs.
    raise SystemExit(main(run))

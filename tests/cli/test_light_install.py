"""Two installs. The default one (the CLI, the hook, ``review --pr``, the Action's runner)
carries none of the server's packages, and its entrances load none of them even where
they are installed; the server's commands say in one line how to get the ``app`` extra.

The newcomer's test builds a fresh virtual environment with the default install (once
per session: the packages come from the index) and reviews a repository in it; a commit
adding a PNG is reviewed there without the image (no Pillow: the ``images`` extra), the
summary saying so in one line.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
import tomllib
import venv
import zipfile
from pathlib import Path

import pytest

from bot.extras import EXTRAS
from tests.cli.test_cli_review import submit as cli_submit
from tests.fakes.k3 import K3Stub
from tests.fakes.k3.handler import image_urls
from tests.support.hook import submit as hook_submit
from tests.support.images import photo_png
from tests.support.job_world import REPO, job_world, submit
from tests.support.paths import ROOT
from tests.support.planted import PLANTED_BUG
from tests.support.repos import commit, make_repo

#: The server's stack, by the name it is imported as.
SERVER = frozenset(
    {
        "flask",
        "werkzeug",
        "celery",
        "kombu",
        "billiard",
        "gunicorn",
        "redis",
        "sqlalchemy",
        "alembic",
        "psycopg",
        "prometheus_client",
    }
)
#: Runs ``gitneural ARGS…`` in this process, then names the server modules it loaded.
PROBE = (
    "import sys\n"
    "from bot.cli.main import main\n"
    "rc = main(sys.argv[1:])\n"
    f"loaded = sorted({{m.split('.')[0] for m in sys.modules}} & {set(SERVER)!r})\n"
    "print('RC', rc, 'SERVER', ','.join(loaded), file=sys.stderr)\n"
)


def _probe(
    args: list[str], cwd: Path, env: dict[str, str] | None = None
) -> tuple[int, list[str], str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("KIMI_", "MOONSHOT_"))}
    base.pop("PROMETHEUS_MULTIPROC_DIR", None)
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *args],
        cwd=cwd,
        env={**base, **(env or {})},
        capture_output=True,
        text=True,
        timeout=180,
    )
    tail = [ln for ln in done.stderr.splitlines() if ln.startswith("RC ")]
    assert tail, done.stderr
    rc_text, _, loaded = tail[-1].removeprefix("RC ").partition(" SERVER ")
    return int(rc_text), [m for m in loaded.split(",") if m], done.stdout + done.stderr


def test_the_dry_run_and_init_load_no_server_package(planted: Path) -> None:
    rc, loaded, out = _probe(["review", "--dry-run"], planted)
    assert rc == 0 and "Dry run" in out
    assert loaded == []
    rc, loaded, out = _probe(["init"], planted)
    assert rc == 0 and (planted / ".gitneural.toml").is_file(), out
    assert loaded == []


def test_a_review_and_a_hook_run_that_ask_the_model_load_no_server_package(
    planted: Path,
) -> None:
    with K3Stub([cli_submit(), hook_submit()]) as stub:
        env = {"KIMI_API_KEY": stub.api_key, "KIMI_BASE_URL": stub.base_url}
        rc, loaded, out = _probe(["review", "--quiet", "--effort", "low"], planted, env)
        assert rc == 1, out  # the planted bug, found by asking the model
        assert loaded == []
        hook_env = {**env, "GITNEURAL_CACHE_DIR": str(planted.parent / "cache")}
        rc, loaded, out = _probe(["hook", "run", "--quiet"], planted, hook_env)
        assert len(stub.chat_requests) == 2, out
    assert rc == 1, out
    assert loaded == []


def test_review_pr_loads_no_server_package(tmp_path: Path) -> None:
    with job_world(tmp_path) as w:
        w.stub.push(submit(PLANTED_BUG))
        env = {
            "GITHUB_TOKEN": w.gh.user_token(REPO, "alice"),
            "GITHUB_API_URL": w.gh.api_url,
            "GITNEURAL_DATA_DIR": str(tmp_path / "data"),
            "KIMI_API_KEY": w.stub.api_key,
            "KIMI_BASE_URL": w.stub.base_url,
        }
        rc, loaded, out = _probe(["review", "--pr", f"{REPO}#{w.number}", "--quiet"], tmp_path, env)
        assert len(w.stub.chat_requests) == 1
    assert rc == 1, out
    assert "people.py:2: critical" in out
    assert loaded == []


def test_the_extras_split_the_server_from_the_default_install() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]

    def names(deps: list[str]) -> set[str]:
        return {d.split(">")[0].split("[")[0].strip().lower() for d in deps}

    light = names(project["dependencies"])
    assert not light & {"flask", "celery", "kombu", "redis", "gunicorn", "sqlalchemy"}
    assert not light & {"alembic", "psycopg", "prometheus_client"}
    assert {"flask", "celery", "gunicorn", "psycopg", "prometheus_client"} <= names(extras["app"])
    assert "gitneural[store]" in extras["app"] and "gitneural[app]" in extras["test"]
    assert names(extras["store"]) == {"sqlalchemy", "alembic"}
    # The grammars (tens of MB) are an extra too; the App's server and the Action take it.
    assert "tree-sitter" not in light and "tree-sitter" in names(extras["parsers"])
    assert "gitneural[parsers]" in extras["app"]
    # Pillow (about 22 MB) too: the App's server and the Action take it.
    assert "pillow" not in light and names(extras["images"]) == {"pillow"}
    assert "gitneural[images]" in extras["app"]
    # What the code checks for an extra is what the extra installs.
    assert set(EXTRAS["app"]) <= {n.replace("-", "_") for n in names(extras["app"])} | set(
        EXTRAS["store"]
    )


# -- the newcomer: a fresh virtual environment with the default install ---------------------


@pytest.fixture(scope="session")
def light_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A virtual environment with the wheel ``python -m build`` makes of this project and
    no extra, as a release would install it (once)."""
    where = tmp_path_factory.mktemp("light-venv") / "venv"
    venv.EnvBuilder(with_pip=True).create(where)
    [wheel] = built(tmp_path_factory).glob("*.whl")
    done = subprocess.run(
        [str(where / "bin" / "python"), "-m", "pip", "install", "--quiet", str(wheel)],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return where


_BUILT: list[Path] = []


def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sdist and the wheel of this project, as the release workflow makes them."""
    if not _BUILT:
        out = tmp_path_factory.mktemp("dist")
        done = subprocess.run(
            [sys.executable, "-m", "build", "--outdir", str(out), str(ROOT)],
            capture_output=True,
            text=True,
            timeout=900,
        )
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        _BUILT.append(out)
    return _BUILT[0]


@pytest.mark.slow
@pytest.mark.timeout(1800)  # the install fetches every package from the index
def test_the_light_install_reviews_a_repository_and_lacks_the_server(
    light_venv: Path, planted: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    [wheel] = built(tmp_path_factory).glob("*.whl")
    python = str(light_venv / "bin" / "python")
    present = subprocess.run(
        [
            python,
            "-c",
            "import importlib.util as u, sys; "
            "print(','.join(m for m in sys.argv[1:] if u.find_spec(m)))",
            *sorted(SERVER),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    assert present.stdout.strip() == ""  # none of the server's packages is installed
    pillow = subprocess.run([python, "-c", "import PIL"], capture_output=True, text=True)
    assert pillow.returncode == 1 and "No module named 'PIL'" in pillow.stderr
    gitneural = str(light_venv / "bin" / "gitneural")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KIMI_", "MOONSHOT_"))}
    dry = subprocess.run(
        [gitneural, "review", "--dry-run"], cwd=planted, env=env, capture_output=True, text=True
    )
    assert dry.returncode == 0, dry.stderr
    assert "Dry run: nothing was sent" in dry.stdout and "people.py" in dry.stdout
    with K3Stub([cli_submit()]) as stub:
        reviewed = subprocess.run(
            [gitneural, "review", "--quiet", "--effort", "low"],
            cwd=planted,
            env={**env, "KIMI_API_KEY": stub.api_key, "KIMI_BASE_URL": stub.base_url},
            capture_output=True,
            text=True,
        )
    assert reviewed.returncode == 1, reviewed.stderr
    assert "people.py:2: critical" in reviewed.stdout
    for command in (["serve"], ["worker"], ["db", "current"], ["usage"]):
        refused = subprocess.run(
            [gitneural, *command], cwd=planted, env=env, capture_output=True, text=True
        )
        assert refused.returncode == 2, refused.stderr
        [line] = refused.stderr.splitlines()
        # The one install command that works here: from the wheel it came from, since
        # no release need exist on the index.
        assert f"-m pip install '{wheel}[app]'" in line and f"gitneural {command[0]}" in line
    summary = _review_of_a_png(gitneural, planted.parent / "pictured", env)
    # The one line, with the command that installs the images extra here (from the wheel).
    assert f"1 image not sent: Pillow is not installed ({python} -m pip install " in summary
    assert f"'{wheel}[images]')." in summary and "Images looked at" not in summary


def _review_of_a_png(gitneural: str, where: Path, env: dict[str, str]) -> str:
    """The summary of the light install's review of a commit adding a PNG, having checked
    that no image part reached the model."""
    repo = make_repo(where)
    commit(repo, {"app.py": "TITLE = 'old'\n"}, "base")
    commit(repo, {"app.py": "TITLE = 'new'\n", "docs/screen.png": photo_png()}, "new title")
    with K3Stub([cli_submit({"summary": "Looked.", "findings": []})]) as stub:
        done = subprocess.run(
            [gitneural, "review", "--base", "HEAD~1", "--effort", "low", "--format", "json"],
            cwd=where,
            env={**env, "KIMI_API_KEY": stub.api_key, "KIMI_BASE_URL": stub.base_url},
            capture_output=True,
            text=True,
        )
        [request] = stub.chat_requests
    assert done.returncode == 0, done.stderr
    assert image_urls(request.body) == []
    return str(json.loads(done.stdout)["summary"])


@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_the_release_build_passes_twine_and_ships_no_private_file(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    dist = built(tmp_path_factory)
    files = sorted(dist.iterdir(), key=lambda f: f.suffix)
    assert [f.suffix for f in files] == [".gz", ".whl"]  # the sdist, then the wheel
    checked = subprocess.run(
        [sys.executable, "-m", "twine", "check", "--strict", *map(str, files)],
        capture_output=True,
        text=True,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert checked.stdout.count("PASSED") == 2
    with tarfile.open(files[0]) as sdist:
        names = sdist.getnames()
    with zipfile.ZipFile(files[1]) as wheel:
        shipped = wheel.namelist()
    # The package data a review cannot run without, in the wheel.
    assert {"prompts/change.md.j2", "bot/gh/app.yml"} <= set(shipped)
    names += shipped
    private = [n for n in names if n.endswith(".env") or "/.git/" in n or "/.venv/" in n]
    assert private == []

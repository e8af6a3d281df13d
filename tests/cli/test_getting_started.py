"""``docs/getting-started.md`` walks from a fresh machine to a running App with no step
missing: every command the page gives (each line of its ``sh`` blocks, each code span
that starts like a command) is, in the page's order, in :data:`WALK` below, which either
runs it as the page says (``RUN``) or names the test that runs it, or why none can.

The slow test runs the ``RUN`` commands verbatim with ``sh -c``, in order, on this
machine: a clone, ``pipx install`` from it (packages from the index), the dry run, ``init``
and the hooks in a repository of the user's, the App's install, the settings file,
``gitneural serve`` until ``/readyz`` answers and a delivery gets a review, and
``gitneural doctor`` with every check passing. Only what must point at this machine is
put in: the clone's URL (the repository here) and the model key (the K3 stub's); GitHub
is the fake one, reached through ``GITHUB_API_URL``, and ``setup``'s browser flow (which
writes the settings file) is ``tests/system/test_newcomer.py``'s.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from bot.settings.env_file import write_settings
from tests.support.paths import ROOT
from tests.support.repos import commit, make_repo
from tests.support.services import app_world, free_port, wait_for
from tests.support.webhooks import SECRET, encode, headers_for, http_get, http_post

PAGE = ROOT / "docs" / "getting-started.md"
#: How a code span that is a command starts.
STARTS = ("git ", "pipx ", "pip ", "gitneural ", "pre-commit ", "echo ", "ssh ", "GITHUB_TOKEN=")
RUN = "run"
#: Where the walk runs a command: the clone, a repository of the user's (with the
#: pre-commit framework), another one (git's own hook), the App's directory.
CLONE, REPO, PLAIN, APP = "clone", "repo", "plain", "app"

#: Every command of the page, in its order: (command, where it runs, or the test that
#: runs it, or why nothing here can).
WALK: list[tuple[str, str]] = [
    ("gitneural review --pr", "tests/cli/test_review_pr.py"),
    ("pipx install .", RUN),
    ("pipx install git+https://github.com/gitneural/gitneural", "needs github.com"),
    ("pipx install gitneural", "needs a release on PyPI"),
    ("gitneural serve", RUN),
    ("pipx install '.[app]'", "as: pipx install --force '.[app]'"),
    (
        "pip install 'gitneural[app] @ git+https://github.com/gitneural/gitneural'",
        "needs github.com",
    ),
    ("gitneural review", "tests/cli/test_cli_review.py"),
    ("git clone https://github.com/gitneural/gitneural && cd gitneural", RUN),
    ("gitneural review --dry-run --base HEAD~1", RUN),
    (
        "GITHUB_TOKEN=$(gh auth token) gitneural review --pr octo/app#7",
        "tests/cli/test_review_pr.py",
    ),
    ("gitneural init --hook", RUN),
    ("pre-commit install", RUN),
    ("pre-commit install -t pre-push", RUN),
    ("gitneural hook install", RUN),
    ("gitneural init --action", RUN),
    ("pipx install --force '.[app]'", RUN),
    ("gitneural setup", "tests/system/test_newcomer.py"),
    ("ssh -L 3000:127.0.0.1:3000 HOST", "another program, and a host of the reader's"),
    ("echo 'KIMI_API_KEY=sk-…' >> gitneural.env", RUN),
    ("gitneural doctor", RUN),
    ("gitneural relay", "tests/system/test_relay_e2e.py"),
    (
        "gitneural relay https://smee.io/YOUR-CHANNEL      # --to http://127.0.0.1:8000/webhook",
        "tests/system/test_relay_e2e.py",
    ),
    ("gitneural init", RUN),
]


def page_commands() -> list[str]:
    """Each command of the page once, in the order it first appears."""
    text = PAGE.read_text("utf-8")
    found: list[str] = []
    block_or_span = re.compile(r"^( *)```sh\n(.*?)^\1```$|`([^`\n]+)`", re.S | re.M)
    for match in block_or_span.finditer(text):
        if match[2] is not None:
            found += [line.strip() for line in match[2].splitlines() if line.strip()]
        elif match[3].startswith(STARTS):
            found.append(match[3])
    return list(dict.fromkeys(found))


def test_every_command_of_the_page_is_in_the_walk_in_its_order() -> None:
    assert page_commands() == [command for command, _ in WALK]


def test_each_command_the_walk_does_not_run_names_a_test_or_a_reason() -> None:
    for command, how in WALK:
        if how.startswith("tests/"):
            test = ROOT / how
            program = command.split()[1] if command.startswith("gitneural") else ""
            assert test.is_file(), (command, how)
            assert program in test.read_text("utf-8"), (command, how)
        elif how.startswith("as: "):  # the same install, where the walk makes it
            assert dict(WALK).get(how.removeprefix("as: ")) == RUN, (command, how)
        else:
            assert how == RUN or how.startswith(("needs ", "another program")), (command, how)


# -- the walk -----------------------------------------------------------------------------


def _tools(where: Path) -> Path:
    """A folder with only pipx and pre-commit (the test environment's), for ``PATH``: the
    test environment's own ``gitneural`` must not answer for the one pipx installs."""
    where.mkdir()
    for name in ("pipx", "pre-commit"):
        (where / name).symlink_to(Path(sys.executable).parent / name)
    return where


class Walker:
    def __init__(self, tmp: Path, env: dict[str, str]) -> None:
        self.env = env
        self.cwd = {CLONE: tmp / "home", REPO: tmp / REPO, PLAIN: tmp / PLAIN, APP: tmp / APP}
        # The repository here, under the name the page's URL ends in (the clone's folder).
        source = tmp / "origin" / "gitneural"
        source.parent.mkdir()
        source.symlink_to(ROOT)
        self.replace = {"https://github.com/gitneural/gitneural": str(source)}
        self.ran: set[str] = set()

    def run(self, command: str, where: str, timeout: float = 120) -> str:
        assert dict(WALK).get(command) == RUN, f"{command!r} is not a command the page gives"
        line = command
        for old, new in self.replace.items():
            line = line.replace(old, new)
        done = subprocess.run(
            ["sh", "-c", line],
            cwd=self.cwd[where],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        assert done.returncode == 0, f"{command}:\n{done.stdout[-2000:]}{done.stderr[-3000:]}"
        self.ran.add(command)
        if (cd := re.search(r"&& cd (\S+)$", line)) is not None:
            self.cwd[CLONE] = self.cwd[CLONE] / cd[1]
        return done.stdout + done.stderr


@pytest.mark.slow
@pytest.mark.timeout(1800)  # two installs, every package from the index
def test_the_page_walked_from_a_clone_to_a_running_app(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    bin_dir = tmp_path / "bin"
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("GITNEURAL_", "GITHUB_", "KIMI_", "MOONSHOT_", "PIPX_", "VIRTUAL_ENV"))
    }
    env.update(
        HOME=str(home),
        PATH=f"{bin_dir}:{_tools(tmp_path / 'tools')}:/usr/bin:/bin",
        PIPX_HOME=str(tmp_path / "pipx"),
        PIPX_BIN_DIR=str(bin_dir),
        PIPX_MAN_DIR=str(tmp_path / "man"),
    )
    env.pop("PROMETHEUS_MULTIPROC_DIR", None)
    walk = Walker(tmp_path, env)

    # The command line, from a clone.
    walk.run("git clone https://github.com/gitneural/gitneural && cd gitneural", CLONE)
    walk.run("pipx install .", CLONE, timeout=1200)
    assert (bin_dir / "gitneural").exists()
    dry = walk.run("gitneural review --dry-run --base HEAD~1", CLONE)
    assert "Dry run: nothing was sent" in dry

    # A repository of the reader's: the hook with the framework, the Action, the settings.
    commit(make_repo(tmp_path / REPO), {"app.py": "x = 1\n"}, "first")
    walk.run("gitneural init --hook", REPO)
    walk.run("pre-commit install", REPO)
    walk.run("pre-commit install -t pre-push", REPO)
    walk.run("gitneural init --action", REPO)
    walk.run("gitneural init", REPO)
    repo = tmp_path / REPO
    assert "id: gitneural" in (repo / ".pre-commit-config.yaml").read_text()
    assert (repo / ".github" / "workflows" / "gitneural.yml").is_file()
    assert (repo / ".gitneural.toml").is_file()
    assert {"pre-commit", "pre-push"} <= {p.name for p in (repo / ".git" / "hooks").iterdir()}
    # And one without the framework: git's own hook.
    commit(make_repo(tmp_path / PLAIN), {"app.py": "x = 1\n"}, "first")
    walk.run("gitneural hook install", PLAIN)
    assert (tmp_path / PLAIN / ".git" / "hooks" / "pre-commit").is_file()

    # The App: its install over the default one, the settings file, serve, doctor.
    walk.run("pipx install --force '.[app]'", CLONE, timeout=1200)
    app_dir = tmp_path / APP
    app_dir.mkdir()
    with app_world(tmp_path / "world") as world:
        # What `gitneural setup` writes (its browser flow: tests/system/test_newcomer.py).
        credentials = {
            "GITHUB_APP_ID": str(world.gh.app_id),
            "GITHUB_PRIVATE_KEY": world.gh.private_key_pem,
            "GITHUB_WEBHOOK_SECRET": SECRET,
        }
        write_settings(app_dir / "gitneural.env", credentials, "as gitneural setup writes it")
        walk.replace["sk-…"] = world.stub.api_key
        walk.run("echo 'KIMI_API_KEY=sk-…' >> gitneural.env", APP)
        port = free_port()
        walk.env = {
            **env,
            "GITHUB_API_URL": world.gh.api_url,
            "KIMI_BASE_URL": world.stub.base_url,
            "GITNEURAL_BOT_LOGIN": world.gh.bot_login,
            "GITNEURAL_PORT": str(port),
            "GITNEURAL_DATA_DIR": str(tmp_path / "data"),
        }
        log = (tmp_path / "serve.log").open("wb")
        walk.ran.add("gitneural serve")  # in the background, as in a terminal of its own
        served = subprocess.Popen(
            ["sh", "-c", "exec gitneural serve"],
            cwd=app_dir,
            env=walk.env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        address = f"127.0.0.1:{port}"
        try:

            def ready() -> bool:
                assert served.poll() is None, (tmp_path / "serve.log").read_text()
                try:
                    return http_get(address, "/readyz").status == 200
                except OSError:
                    return False

            wait_for(ready, "gitneural serve's /readyz", 180, 0.2)
            doctor = walk.run("gitneural doctor", APP)
            assert "every check passed" in doctor, doctor
            number = world.new_pull()
            body = encode(world.opened(number))
            headers = headers_for("pull_request", body, delivery=str(uuid.uuid4()))
            assert http_post(address, "/webhook", body, headers).status == 202
            [review] = wait_for(lambda: world.reviews(number), "the review", 180, 0.2)
        finally:
            served.send_signal(signal.SIGTERM)
            try:
                served.wait(timeout=60)
            finally:
                if served.poll() is None:
                    served.kill()
                log.close()
    assert review["comments"], review
    assert walk.ran == {command for command, how in WALK if how == RUN}
    shutil.rmtree(tmp_path / "pipx", ignore_errors=True)

"""The project's own promises: the README's commands, CI, packaging, lower bounds."""

from __future__ import annotations

import re
import tomllib

from tests.support.paths import ROOT


def _readme_commands() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    first_screen = text[: text.index("\n## ", text.index("## Quick start") + 1)]
    return re.findall(r"```sh\n(.+?)\n```", first_screen, re.DOTALL)


def _readme_test_command() -> str:
    [command] = [c for c in _readme_commands() if "pytest" in c]
    return command.strip()


def test_readme_first_screen_has_the_two_commands() -> None:
    # The first block installs GitNeural (pipx, or pip in a venv) and runs a review; one
    # block installs the test dependencies and runs the tests.
    install_and_run = _readme_commands()[0]
    assert (
        re.search(r"\bpipx? install\b", install_and_run) and "gitneural review" in install_and_run
    )
    install_and_test = _readme_test_command()
    assert "pip install" in install_and_test and "pytest" in install_and_test


def test_ci_runs_exactly_the_readme_test_command() -> None:
    script = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert _readme_test_command() in script.splitlines()


def test_dependencies_have_lower_bounds() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    # The extras may name the project's own (``gitneural[store]``): no bound to give.
    deps = project["dependencies"] + [
        d for extra in extras.values() for d in extra if not d.startswith("gitneural[")
    ]
    for dep in deps:
        assert ">=" in dep, f"{dep} has no lower bound"

    def names(listed: list[str]) -> set[str]:
        return {re.split(r"[\[>=<]", d)[0].lower() for d in listed}

    assert {"pygithub", "pygit2", "openai", "unidiff"} <= names(project["dependencies"])
    assert {"flask", "celery"} <= names(extras["app"])
    assert "pytest" in names(deps)


def test_prompt_files_ship_as_package_data() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert {"bot", "workers", "hooks", "prompts"} <= set(config["packages"])
    shipped = config["package-data"]["prompts"]
    for path in (ROOT / "prompts").iterdir():
        if path.suffix in (".j2", ".json"):
            assert any(path.match(glob) for glob in shipped), path.name

"""The Action installs pinned packages checked against their hashes: action.yml installs
``action/requirements.txt`` with ``--require-hashes``; every package there has an exact
version and a hash; the file holds every package GitNeural's default install, the store,
parsers and images extras and its build need; and ``docs/releasing.md`` gives the command that
wrote it. That the lock really installs (pip refuses a missing package or a hash that
differs) is ``test_action_install.py``'s, run for real."""

from __future__ import annotations

import re
import tomllib
from importlib import metadata

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from tests.support.actions import load_action
from tests.support.paths import ROOT

LOCK = ROOT / "action" / "requirements.txt"
HASH = re.compile(r"--hash=sha256:[0-9a-f]{64}")


def _entries() -> list[str]:
    """The lock's requirement lines, each joined with its continuation lines."""
    joined = re.sub(r"\\\n\s*", " ", LOCK.read_text("utf-8"))
    lines = (line.strip() for line in joined.splitlines())
    return [line for line in lines if line and not line.startswith("#")]


def _pinned() -> dict[str, tuple[str, Requirement]]:
    """Name -> (version, requirement) of each package of the lock."""
    out: dict[str, tuple[str, Requirement]] = {}
    for entry in _entries():
        req = Requirement(HASH.sub("", entry).strip())
        [spec] = req.specifier
        out[canonicalize_name(req.name)] = (spec.version, req)
    return out


def _applies(req: Requirement, extras: set[str]) -> bool:
    if req.marker is None:
        return True
    return any(req.marker.evaluate({"extra": e}) for e in extras or {""})


def _what_the_action_asks_for() -> list[Requirement]:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))
    extras = pyproject["project"]["optional-dependencies"]
    wanted = [
        *pyproject["project"]["dependencies"],
        *extras["store"],
        *extras["parsers"],
        *extras["images"],
        *pyproject["build-system"]["requires"],
    ]
    return [Requirement(r) for r in wanted]


def test_action_yml_installs_the_lock_with_hashes_and_nothing_unpinned() -> None:
    install = load_action()["runs"]["steps"][0]["run"]
    pip_lines = [line.strip() for line in install.splitlines() if " install " in line]
    assert pip_lines == [
        '"${pip[@]}" install --require-hashes -r "$GITNEURAL_ACTION_PATH/action/requirements.txt"',
        '"${pip[@]}" install --no-deps --no-build-isolation "$GITNEURAL_ACTION_PATH"',
    ]
    # GitNeural's own requirements were all met by the lock (it installs without deps).
    assert '"${pip[@]}" check' in install


def test_every_package_of_the_lock_has_an_exact_version_and_a_hash() -> None:
    entries = _entries()
    assert len(entries) > 20
    for entry in entries:
        assert HASH.search(entry), f"no sha256 hash: {entry[:60]}"
        assert not entry.startswith(("-e", "file:", "git+", ".")), entry
        req = Requirement(HASH.sub("", entry).strip())
        [spec] = req.specifier
        assert spec.operator == "==" and not req.url, entry
    assert len(_pinned()) == len(entries), "a package is pinned twice"


def _installed_at_the_locked_version(
    pinned: dict[str, tuple[str, Requirement]],
) -> dict[str, metadata.Distribution]:
    found = {}
    for name, (version, _) in pinned.items():
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue
        if dist.version == version:
            found[name] = dist
    return found


def test_the_lock_is_closed_over_the_requirements_of_its_packages() -> None:
    """Followed from what the Action asks for, through each package installed here at the
    locked version: what it requires (for this Python, with the extras asked of it) is
    locked too, at a version it accepts. A package installed here at another version says
    nothing of the locked one: its requirements are not followed."""
    pinned = _pinned()
    dists = _installed_at_the_locked_version(pinned)
    todo = [(req, "pyproject.toml") for req in _what_the_action_asks_for()]
    seen: set[tuple[str, frozenset[str]]] = set()
    while todo:
        req, by = todo.pop()
        name = canonicalize_name(req.name)
        assert name in pinned, f"{by} needs {req}, not in the lock"
        assert req.specifier.contains(pinned[name][0], prereleases=True), (by, str(req))
        key = (name, frozenset(req.extras))
        if key in seen or name not in dists:
            continue
        seen.add(key)
        for text in dists[name].requires or []:
            sub = Requirement(text)
            if _applies(sub, set(req.extras)):
                todo.append((sub, f"{name} {pinned[name][0]}"))
    # Not a count of the whole lock: a newer release installed here is no fault of it.
    assert seen, "no locked version is installed here: nothing was followed"


def test_the_lock_says_the_command_the_release_checklist_gives() -> None:
    header = LOCK.read_text("utf-8").splitlines()[:2]
    assert header[0] == "# This file was autogenerated by uv via the following command:"
    command = header[1].removeprefix("#").strip()
    assert command.startswith("uv pip compile pyproject.toml ") and "--generate-hashes" in command
    assert command in (ROOT / "docs" / "releasing.md").read_text("utf-8")

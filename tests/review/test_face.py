"""``bot.review`` loads its public names on first use: every name it exports is one it
can load, and is the very object of the module that holds it."""

from __future__ import annotations

import importlib
import subprocess
import sys

import bot.review
from bot.review import _HOMES


def test_every_exported_name_has_a_home_and_only_those() -> None:
    assert set(_HOMES) == set(bot.review.__all__)


def test_each_name_is_the_object_of_its_home_module() -> None:
    # In a fresh interpreter, so that no earlier import has filled the package already.
    code = (
        "import importlib, bot.review as r\n"
        "for name, (module, attribute) in r._HOMES.items():\n"
        "    assert getattr(r, name) is getattr(importlib.import_module(module), attribute), name\n"
        "print('ok', len(r._HOMES))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"ok {len(_HOMES)}\n"
    assert importlib.import_module("bot.review.plan").plan_review is bot.review.plan_review

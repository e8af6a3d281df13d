"""Headless Chromium for the tests of pages: Debian's ``chromium`` and ``chromium-driver``,
driven by selenium through the system chromedriver (nothing is downloaded).

The packages are installed by the test set-up itself when missing (``apt-get install``,
as root); where that cannot be done the test is skipped with a reason saying how to
install them, except under ``CI=true``, where it fails. Screenshots go to
``test-artifacts/`` at the repository's root (ignored by git), or to
``$GITNEURAL_TEST_ARTIFACTS``.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.paths import ROOT

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
PACKAGES = ("chromium", "chromium-driver")
#: The machine's network is closed: nothing in the browser may try to reach out.
FLAGS = (
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--window-size=1200,1400",
)
_install_lock = threading.Lock()


def artifacts_dir() -> Path:
    path = Path(os.environ.get("GITNEURAL_TEST_ARTIFACTS") or ROOT / "test-artifacts")
    path.mkdir(parents=True, exist_ok=True)
    return path


def _unavailable(reason: str) -> None:
    message = (
        f"headless Chromium is not available ({reason}); install Debian's packages: "
        "`apt-get install -y chromium chromium-driver` (as root)"
    )
    if os.environ.get("CI") == "true":
        pytest.fail(message)
    pytest.skip(message)


def ensure_chromium() -> None:
    """Install ``chromium`` and ``chromium-driver`` if they are missing (root only)."""
    # One installer at a time, across pytest-xdist's processes too (apt holds a lock).
    with _install_lock, Path(tempfile.gettempdir(), "gitneural-chromium.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if CHROMIUM.exists() and CHROMEDRIVER.exists():
            return
        if os.geteuid() != 0 or shutil.which("apt-get") is None:
            _unavailable("not installed, and this user cannot run apt-get")
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        install = ["apt-get", "install", "-y", "--no-install-recommends", *PACKAGES]
        done = subprocess.run(install, env=env, capture_output=True, text=True, timeout=900)
        if done.returncode != 0:  # the package lists may be missing or stale
            subprocess.run(["apt-get", "update"], env=env, capture_output=True, timeout=600)
            done = subprocess.run(install, env=env, capture_output=True, text=True, timeout=900)
        if done.returncode != 0 or not (CHROMIUM.exists() and CHROMEDRIVER.exists()):
            _unavailable(f"apt-get install failed: {done.stderr.strip()[-300:]}")


@contextlib.contextmanager
def chromium(headers: dict[str, str] | None = None) -> Iterator[Any]:
    """A selenium WebDriver on headless Chromium with a fresh profile; ``headers`` are sent
    with every request (for the status page's bearer token)."""
    ensure_chromium()
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    with tempfile.TemporaryDirectory(prefix="gn-chromium-") as profile:
        options = webdriver.ChromeOptions()
        options.binary_location = str(CHROMIUM)
        for flag in (*FLAGS, f"--user-data-dir={profile}"):
            options.add_argument(flag)
        driver = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)
        try:
            if headers:
                driver.execute_cdp_cmd("Network.enable", {})
                driver.execute_cdp_cmd("Network.setExtraHTTPHeaders", {"headers": headers})
            yield driver
        finally:
            driver.quit()

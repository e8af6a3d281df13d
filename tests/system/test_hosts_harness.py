"""The multi-host harness itself (:mod:`tests.support.netns`): hosts reach the bridge,
a cut takes away what it names from one host only, and every namespace and link is gone
after the test, when it fails too, and after a run that crashed (the sweep)."""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from tests.support.netns import (
    REGISTRY,
    HostNetwork,
    NetHost,
    leftovers,
    require_netns,
    sweep,
    sweep_lock,
)


def _reaches(host: NetHost, address: str, port: int) -> bool:
    probe = (
        "import socket,sys\n"
        f"try: socket.create_connection(({address!r}, {port}), timeout=2).close()\n"
        "except OSError: sys.exit(1)\n"
    )
    run = subprocess.run([*host.run_prefix, sys.executable, "-c", probe], timeout=30)
    return run.returncode == 0


def _listen(address: str) -> tuple[socket.socket, int]:
    server = socket.create_server((address, 0))

    def accept() -> None:
        while True:
            try:
                server.accept()[0].close()
            except OSError:
                return

    threading.Thread(target=accept, daemon=True).start()
    return server, server.getsockname()[1]


def test_a_cut_takes_one_host_off_and_heal_brings_it_back() -> None:
    with HostNetwork(3) as net:
        server, port = _listen(net.git)
        try:
            h1, h2, h3 = net.hosts
            assert len({h.address for h in net.hosts}) == 3
            assert all(_reaches(h, net.git, port) for h in net.hosts)
            net.block(h1, net.git)
            assert not _reaches(h1, net.git, port)
            assert _reaches(h2, net.git, port)  # the others go on
            net.link(h3, up=False)
            assert not _reaches(h3, net.git, port)
            for host in (h1, h3):
                net.heal(host)
            assert all(_reaches(h, net.git, port) for h in net.hosts)
        finally:
            server.close()


def test_nothing_is_left_behind_when_the_test_fails() -> None:
    with pytest.raises(RuntimeError), HostNetwork(2) as net:
        run_id = net.id
        assert len(leftovers(run_id)) == 5  # bridge, two namespaces, two veths
        raise RuntimeError("the test failed here")
    assert leftovers(run_id) == []
    assert not (REGISTRY / run_id).exists()


def test_the_sweep_removes_what_a_crashed_run_left() -> None:
    require_netns()
    # A run whose process is gone: registered, its namespace and bridge still there.
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    run_id = "c0ffee"
    # Under the sweep's lock: a network another xdist worker opens meanwhile sweeps first
    # and would remove these before the sweep under test (a full run saw it remove none).
    with sweep_lock():
        REGISTRY.mkdir(parents=True, exist_ok=True)
        (REGISTRY / run_id).write_text(str(dead.pid))
        subprocess.run(["ip", "netns", "add", f"gnh-{run_id}-1"], check=True)
        subprocess.run(["ip", "link", "add", f"gnb{run_id}", "type", "bridge"], check=True)
        assert len(leftovers(run_id)) == 2
        removed = sweep(lock_held=True)
    assert {f"gnh-{run_id}-1", f"gnb{run_id}"} <= set(removed)
    assert leftovers(run_id) == []
    assert not (REGISTRY / run_id).exists()


_STRESS_ROUND = """
import sys
from tests.support.netns import HostNetwork

# One process's share of a round: two networks open at once, each one's bridge holding
# the addresses it was given, then both closed.
for _ in range(int(sys.argv[1])):
    with HostNetwork(1) as first, HostNetwork(1) as second:
        assert first.hub != second.hub, (first.hub, second.hub)
        for net in (first, second):
            shown = subprocess.run(
                ["ip", "-o", "addr", "show", "dev", net.bridge],
                capture_output=True, text=True, check=True,
            ).stdout
            assert f"{net.hub}/24" in shown and f"{net.git}/24" in shown, shown
"""


@pytest.mark.slow
def test_twelve_networks_opened_by_six_processes_at_once_all_get_their_addresses() -> None:
    """Six processes, each opening two networks at once and closing them, 20 rounds: the
    subnet's choice, the bridge and its addresses must not race between processes (a
    fresh-clone run saw `ip addr add` refused for a /24 another worker had taken), nor a
    sweep remove a bridge another process had just made."""
    require_netns()
    script = "import subprocess\n" + _STRESS_ROUND
    rounds = 20
    runs = [
        subprocess.Popen(
            [sys.executable, "-c", script, str(rounds)],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            cwd=Path(__file__).resolve().parents[2],
        )
        for _ in range(6)
    ]
    failures = []
    for run in runs:
        out, _ = run.communicate(timeout=240)
        if run.returncode != 0:
            failures.append(out[-1500:])
    assert failures == []

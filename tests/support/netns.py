"""Worker hosts as Linux network namespaces on one bridge, for tests that need several
machines: each host has its own address and network, and can be cut off and healed.

    with HostNetwork(3) as net:                 # bridge + 3 namespaces + veth pairs
        net.hub                                 # 10.231.N.1: the host side (services)
        net.git                                 # 10.231.N.2: the fake GitHub's git address
        net.hosts[0].run_prefix                 # ["ip", "netns", "exec", "gnh-…-1"]
        net.block(net.hosts[0], net.git)        # new connections to it refused in that host
        net.link(net.hosts[0], up=False)        # its cable pulled: nothing gets through
        net.heal(net.hosts[0])

Every name carries the run's id (namespaces ``gnh-<id>-<n>``, bridge ``gnb<id>``, veths
``gnv<id><n>``), registered under :data:`REGISTRY` with the owner's pid before anything is
made: :meth:`HostNetwork.close` removes what it made even when the test failed, and
:func:`sweep` removes what a crashed run (its pid gone) left behind. The traffic stays on
the bridge's own /24 in 10.231.0.0/16, chosen unused on this machine.

Needs root and iproute2. Under ``CI=true`` a machine that cannot make namespaces fails
the test; elsewhere it is skipped with the reason (:func:`require_netns`).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import random
import re
import shutil
import subprocess
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

REGISTRY = Path("/run/gitneural-test-netns")
# Beside the registry, not in it: every entry in it is read as a run's pid.
_SWEEP_LOCK = Path("/run/gitneural-test-netns.lock")
_NAME = re.compile(r"^gn[hbv]-?([0-9a-f]{6})")


class IpError(RuntimeError):
    """An ``ip`` command refused: its arguments, exit status and what it said on stderr
    (without it a failure in a busy run cannot be told apart from another)."""


def _ip(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(["ip", *args], capture_output=True, text=True, timeout=30)
    if check and done.returncode != 0:
        said = done.stderr.strip() or done.stdout.strip() or "(nothing on stderr)"
        raise IpError(f"`ip {' '.join(args)}` exited {done.returncode}: {said[:500]}")
    return done


def _veth_into(name: str, namespace: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    """A veth pair: ``name`` on this side, its peer ``eth0`` inside ``namespace``."""
    return _ip(
        "link", "add", name, "type", "veth", "peer", "name", "eth0", "netns", namespace, check=check
    )


def _fail_or_skip(message: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(message)
    pytest.skip(message)


def require_netns() -> None:
    """Skips (fails under ``CI=true``) unless this machine lets the test make a network
    namespace with a veth pair: iproute2, root, and a kernel that allows both."""
    if shutil.which("ip") is None:
        _fail_or_skip("multi-host tests need iproute2's `ip` (apt-get install iproute2)")
    if os.geteuid() != 0:
        _fail_or_skip("multi-host tests make network namespaces: run them as root")
    probe = f"gnh-probe{uuid.uuid4().hex[:6]}"
    try:
        made = _ip("netns", "add", probe, check=False)
        if made.returncode != 0:
            _fail_or_skip(f"`ip netns add` failed here: {made.stderr.strip()[:200]}")
        veth = _veth_into(f"gnp{probe[-6:]}", probe, check=False)
        if veth.returncode != 0:
            _fail_or_skip(f"a veth pair cannot be made here: {veth.stderr.strip()[:200]}")
    finally:
        _ip("link", "del", f"gnp{probe[-6:]}", check=False)
        _ip("netns", "del", probe, check=False)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _live_runs() -> set[str]:
    live: set[str] = set()
    for entry in REGISTRY.glob("*") if REGISTRY.is_dir() else []:
        try:
            pid = int(entry.read_text().strip() or 0)
        except (OSError, ValueError):
            continue
        if pid and _pid_alive(pid):
            live.add(entry.name)
        else:
            entry.unlink(missing_ok=True)
    return live


@contextlib.contextmanager
def sweep_lock() -> Iterator[None]:
    """Held by every sweep. The test of the sweep holds it while it makes a crashed run's
    leftovers, so that another xdist worker's sweep cannot remove them before its own."""
    with open(_SWEEP_LOCK, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def sweep(*, lock_held: bool = False) -> list[str]:
    """Remove the namespaces and links of runs whose process is gone; what was removed.
    ``lock_held``: the caller holds :func:`sweep_lock` (a flock is per open file: taking
    it again here would wait for ourselves)."""
    if not lock_held:
        with sweep_lock():
            return sweep(lock_held=True)
    live = _live_runs()
    removed: list[str] = []
    names = _ip("netns", "list", check=False).stdout.split("\n")
    links = _ip("-o", "link", "show", check=False).stdout.split("\n")
    found = [line.split()[0] for line in names if line.strip()]
    found += [line.split(":")[1].strip().split("@")[0] for line in links if line.count(":") > 1]
    for name in found:
        match = _NAME.match(name)
        if match is None or match.group(1) in live:
            continue
        kind = ("netns", "del", name) if name.startswith("gnh-") else ("link", "del", name)
        if _ip(*kind, check=False).returncode == 0:
            removed.append(name)
    return removed


def _free_subnet() -> int:
    used = set(re.findall(r"10\.231\.(\d+)\.", _ip("-o", "addr", "show", check=False).stdout))
    choices = [n for n in range(1, 255) if str(n) not in used]
    if not choices:
        raise RuntimeError("no free /24 left in 10.231.0.0/16 for a test network")
    return random.choice(choices)


@dataclass(frozen=True)
class NetHost:
    """One worker host: its namespace, address and the host side of its veth pair."""

    index: int
    name: str
    namespace: str
    address: str
    veth: str

    @property
    def run_prefix(self) -> list[str]:
        """Put before a command to run it on this host."""
        return ["ip", "netns", "exec", self.namespace]


class HostNetwork:
    def __init__(self, hosts: int) -> None:
        self.id = uuid.uuid4().hex[:6]
        self.bridge = f"gnb{self.id}"
        self._subnet = -1
        self.hosts: list[NetHost] = []
        self._count = hosts
        self._blocked: dict[str, set[str]] = {}

    @property
    def hub(self) -> str:
        """The host side's address: the services' forwarders and the model listen here."""
        return f"10.231.{self._subnet}.1"

    @property
    def git(self) -> str:
        """A second host-side address, for the fake GitHub (its API and git)."""
        return f"10.231.{self._subnet}.2"

    def open(self) -> HostNetwork:
        require_netns()
        try:
            self._make_bridge()
            self._make_hosts()
        except BaseException:
            self.close()
            raise
        return self

    def _make_bridge(self) -> None:
        """Registers the run, chooses a free /24 and makes the bridge with its addresses,
        all under the sweep's lock, which every process of every run takes: two processes
        cannot choose the same /24, and no sweep can read the registry before this run is
        in it and the links after its bridge is made (and remove the bridge as a crashed
        run's). A refusal there is tried once more with a fresh subnet and name."""
        REGISTRY.mkdir(parents=True, exist_ok=True)
        with sweep_lock():
            sweep(lock_held=True)
            for attempt in (1, 2):
                (REGISTRY / self.id).write_text(str(os.getpid()))
                try:
                    self._subnet = _free_subnet()
                    _ip("link", "add", self.bridge, "type", "bridge")
                    for address in (self.hub, self.git):
                        _ip("addr", "add", f"{address}/24", "dev", self.bridge)
                    _ip("link", "set", self.bridge, "up")
                    return
                except IpError:
                    _ip("link", "del", self.bridge, check=False)
                    (REGISTRY / self.id).unlink(missing_ok=True)
                    if attempt == 2:
                        raise
                    self.id = uuid.uuid4().hex[:6]
                    self.bridge = f"gnb{self.id}"

    def _make_hosts(self) -> None:
        for n in range(1, self._count + 1):
            host = NetHost(
                n,
                f"host{n}",
                f"gnh-{self.id}-{n}",
                f"10.231.{self._subnet}.{10 + n}",
                f"gnv{self.id}{n}",
            )
            self.hosts.append(host)
            _ip("netns", "add", host.namespace)
            _veth_into(host.veth, host.namespace)
            _ip("link", "set", host.veth, "master", self.bridge, "up")
            _ip("-n", host.namespace, "addr", "add", f"{host.address}/24", "dev", "eth0")
            for dev in ("lo", "eth0"):
                _ip("-n", host.namespace, "link", "set", dev, "up")
            self._blocked[host.namespace] = set()

    def block(self, host: NetHost, address: str) -> None:
        """In ``host``, a route that refuses ``address``: new connections fail at once,
        open ones stall (as through a failed router)."""
        if address not in self._blocked[host.namespace]:
            _ip("-n", host.namespace, "route", "add", "prohibit", f"{address}/32")
            self._blocked[host.namespace].add(address)

    def link(self, host: NetHost, *, up: bool) -> None:
        """``host``'s cable: down, nothing gets through either way; up again."""
        _ip("link", "set", host.veth, "up" if up else "down")

    def heal(self, host: NetHost) -> None:
        """Everything ``host`` lost comes back; returns once its cable carries traffic."""
        for address in sorted(self._blocked[host.namespace]):
            _ip("-n", host.namespace, "route", "del", "prohibit", f"{address}/32", check=False)
        self._blocked[host.namespace].clear()
        self.link(host, up=True)
        self._wait_up(host)
        # What was tried while the cable was out left addresses marked unreachable on
        # both sides; a new cable starts with none (else the next connect is refused).
        _ip("-n", host.namespace, "neigh", "flush", "dev", "eth0", check=False)
        _ip("neigh", "flush", "dev", self.bridge, "to", host.address, check=False)

    def _wait_up(self, host: NetHost, timeout: float = 15.0) -> None:
        # A link set up is not yet a link that carries packets: the kernel turns the
        # queues back on in its link watcher, up to a second later (longer on a busy
        # machine), and drops what is sent before. Both ends say "state UP" once it has.
        deadline = time.monotonic() + timeout
        while True:
            outer = _ip("-o", "link", "show", host.veth, check=False).stdout
            inner = _ip("-n", host.namespace, "-o", "link", "show", "eth0", check=False).stdout
            if "state UP" in outer and "state UP" in inner:
                return
            if time.monotonic() > deadline:
                raise RuntimeError(f"{host.name}'s link did not come back up in {timeout:.0f} s")
            time.sleep(0.05)

    def close(self) -> None:
        for host in self.hosts:
            _ip("netns", "del", host.namespace, check=False)  # its end of the veth goes too
            _ip("link", "del", host.veth, check=False)
        _ip("link", "del", self.bridge, check=False)
        (REGISTRY / self.id).unlink(missing_ok=True)

    def __enter__(self) -> HostNetwork:
        return self.open()

    def __exit__(self, *exc: object) -> None:
        self.close()


def leftovers(run_id: str) -> list[str]:
    """Namespaces and links of run ``run_id`` still on this machine (none after close)."""
    names = _ip("netns", "list", check=False).stdout + _ip("-o", "link", check=False).stdout
    return sorted(set(re.findall(rf"gn[hbv]-?{run_id}[-\w]*", names)))

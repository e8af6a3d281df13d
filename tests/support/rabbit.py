"""RabbitMQ for the tests: the machine's broker with a vhost per test, or a node of the
test's own (for restarts and a low ``consumer_timeout``, which the shared broker must
never see).

    with rabbit_vhost() as url:                 # amqp://guest:guest@127.0.0.1:5672/gntest-…
        ...
    with RabbitNode(tmp_path, consumer_timeout_ms=5000) as node:   # its own port and data
        node.url; node.stop(); node.start()     # a real restart: durable queues survive

Both need ``rabbitmqctl`` (the shared broker's vhosts) or ``rabbitmq-server`` (a node of
one's own) on this machine, as root. Under ``CI=true`` a missing RabbitMQ is a failure,
elsewhere a skip whose reason says how to get one.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.services import free_port, wait_for

RABBIT_HOST, RABBIT_PORT = "127.0.0.1", 5672
SBIN = Path("/usr/lib/rabbitmq/bin")
#: The tool itself, not /usr/sbin's wrapper: that one runs it as the rabbitmq user, who
#: may not read a test node's files (they are root's, under the test's tmp).
NODE_CTL = str(SBIN / "rabbitmqctl")
CTL_TIMEOUT = 120
PORT_ATTEMPTS = 3


class _PortTaken(Exception):
    """The node's listener or distribution port was bound by someone else first."""


def _missing(message: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(message)
    pytest.skip(message)


def rabbitmqctl() -> str:
    found = shutil.which("rabbitmqctl") or (NODE_CTL if Path(NODE_CTL).exists() else None)
    if found is None:
        _missing("rabbitmqctl is not installed: `apt-get install rabbitmq-server` (as root)")
    assert found is not None
    return found


def require_rabbitmq() -> None:
    """The RabbitMQ at 127.0.0.1:5672, managed by ``rabbitmqctl`` (vhosts need root)."""
    try:
        with socket.create_connection((RABBIT_HOST, RABBIT_PORT), timeout=1):
            pass
    except OSError:
        _missing(
            "RabbitMQ is not reachable at 127.0.0.1:5672; start it with "
            "`service rabbitmq-server start` (or `docker run -d -p 5672:5672 rabbitmq:3`)"
        )
    if os.geteuid() != 0:
        _missing("the RabbitMQ tests make a vhost each with rabbitmqctl: run them as root")
    rabbitmqctl()


def ctl(
    *args: str, node: str | None = None, env: dict[str, str] | None = None, tool: str = ""
) -> str:
    command = [tool or rabbitmqctl(), *(["-n", node] if node else []), *args]
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=CTL_TIMEOUT, env=env, check=False
    )
    if done.returncode != 0:
        raise AssertionError(f"{' '.join(command)} failed: {done.stderr.strip()[-500:]}")
    return done.stdout


@contextlib.contextmanager
def rabbit_vhost() -> Iterator[str]:
    """A vhost of its own on the shared broker (guest may use it); its URL."""
    require_rabbitmq()
    vhost = f"gntest-{uuid.uuid4().hex[:12]}"
    ctl("add_vhost", vhost)
    try:
        ctl("set_permissions", "-p", vhost, "guest", ".*", ".*", ".*")
        yield f"amqp://guest:guest@{RABBIT_HOST}:{RABBIT_PORT}/{vhost}"
    finally:
        ctl("delete_vhost", vhost)


def queue_depths(
    vhost_url: str, *, node: str | None = None, env: dict[str, str] | None = None, tool: str = ""
) -> dict[str, tuple[int, int, bool]]:
    """``{queue: (ready, unacknowledged, durable)}`` of the URL's vhost."""
    vhost = vhost_url.rsplit("/", 1)[1] or "/"
    out = ctl(
        "list_queues",
        "-p",
        vhost,
        "name",
        "messages_ready",
        "messages_unacknowledged",
        "durable",
        "--no-table-headers",
        "--quiet",
        node=node,
        env=env,
        tool=tool,
    )
    depths = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 4:
            depths[parts[0]] = (int(parts[1]), int(parts[2]), parts[3] == "true")
    return depths


class RabbitNode:
    """A RabbitMQ node of the test's own on a free port: its data under ``root``, its
    Erlang cookie in ``root/home``; nothing of the machine's broker is touched."""

    def __init__(self, root: Path, *, consumer_timeout_ms: int | None = None) -> None:
        server = SBIN / "rabbitmq-server"
        if not server.exists() or os.geteuid() != 0:
            _missing("a RabbitMQ node of the test's own needs rabbitmq-server and root")
        self.root = root
        self.name = f"gntest{uuid.uuid4().hex[:8]}@localhost"
        for sub in ("mnesia", "log", "home"):
            (root / sub).mkdir(parents=True, exist_ok=True)
        (root / "enabled_plugins").write_text("[].\n")
        rabbit = ["{channel_tick_interval, 500}"]
        if consumer_timeout_ms is not None:
            rabbit.append(f"{{consumer_timeout, {consumer_timeout_ms}}}")
        (root / "advanced.config").write_text(f"[{{rabbit, [{', '.join(rabbit)}]}}].\n")
        self.env = {
            **{k: v for k, v in os.environ.items() if not k.startswith("RABBITMQ_")},
            "HOME": str(root / "home"),
            "RABBITMQ_NODENAME": self.name,
            "RABBITMQ_NODE_IP_ADDRESS": "127.0.0.1",
            "RABBITMQ_MNESIA_BASE": str(root / "mnesia"),
            "RABBITMQ_LOG_BASE": str(root / "log"),
            "RABBITMQ_CONFIG_FILE": str(root / "rabbitmq"),
            "RABBITMQ_ADVANCED_CONFIG_FILE": str(root / "advanced.config"),
            "RABBITMQ_ENABLED_PLUGINS_FILE": str(root / "enabled_plugins"),
            "RABBITMQ_PID_FILE": str(root / "pid"),
            # A node that crashes writes its dump (and Mnesia's core) to the working
            # directory: keep them in the test's tmp, never in the checkout.
            "ERL_CRASH_DUMP": str(root / "erl_crash.dump"),
        }
        self.proc: subprocess.Popen[bytes] | None = None
        self.started_once = False
        self._choose_ports()

    def _choose_ports(self) -> None:
        # Free when chosen, not reserved: another test may take one before the node binds
        # it, so a first start that finds its port taken chooses again (see start).
        self.port, self.dist_port = free_port(), free_port()
        self.url = f"amqp://guest:guest@127.0.0.1:{self.port}/"
        (self.root / "rabbitmq.conf").write_text(f"listeners.tcp.default = 127.0.0.1:{self.port}\n")
        self.env["RABBITMQ_NODE_PORT"] = str(self.port)
        self.env["RABBITMQ_DIST_PORT"] = str(self.dist_port)

    def ctl(self, *args: str) -> str:
        return ctl(*args, node=self.name, env=self.env, tool=NODE_CTL)

    def queue_depths(self) -> dict[str, tuple[int, int, bool]]:
        return queue_depths(self.url, node=self.name, env=self.env, tool=NODE_CTL)

    def start(self) -> RabbitNode:
        """Start the node and wait until it takes connections. A first start whose port
        another process took in the meantime tries again on new ports (a CI run saw the
        node die at once with ``dist_port_already_used``); a restart keeps its ports, since
        the test holds the URL."""
        for attempt in range(1, PORT_ATTEMPTS + 1):
            with (self.root / "server.log").open("ab") as out:
                self.proc = subprocess.Popen(
                    [str(SBIN / "rabbitmq-server")],
                    env=self.env,
                    stdout=out,
                    cwd=self.root,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
            try:
                self._wait_up()
            except _PortTaken as taken:
                self._kill()
                if self.started_once or attempt == PORT_ATTEMPTS:
                    raise AssertionError(f"RabbitMQ node {self.name}: {taken}") from None
                self._choose_ports()
                continue
            except BaseException:
                self._kill()  # a node that failed to come up must not outlive the test
                raise
            self.started_once = True
            return self
        raise AssertionError("unreachable")  # the loop returns or raises

    def _wait_up(self) -> None:
        """``rabbitmqctl wait`` for the pid file and the boot, while watching the server: a
        node that exits at once must not cost the wait's whole two minutes."""
        assert self.proc is not None
        wait = ["wait", str(self.root / "pid"), "--timeout", str(CTL_TIMEOUT)]
        waiter = subprocess.Popen(
            [NODE_CTL, "-n", self.name, *wait],
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            deadline = time.monotonic() + CTL_TIMEOUT + 10
            while waiter.poll() is None:
                if self.proc.poll() is not None:
                    log = self._log_tail()
                    if "already_used" in log or "eaddrinuse" in log:
                        raise _PortTaken(f"a port was taken before the node bound it: {log}")
                    raise AssertionError(
                        f"RabbitMQ node {self.name} exited ({self.proc.returncode}) before "
                        f"it was up: {log}"
                    )
                if time.monotonic() > deadline:
                    raise AssertionError(f"RabbitMQ node {self.name} not up in {CTL_TIMEOUT} s")
                time.sleep(0.2)
        finally:
            if waiter.poll() is None:
                waiter.kill()
            _, err = waiter.communicate()
        if waiter.returncode != 0:
            raise AssertionError(f"rabbitmqctl wait failed: {err.strip()[-500:]}")
        wait_for(self._listening, f"RabbitMQ node {self.name} on port {self.port}", 60)

    def _log_tail(self) -> str:
        path = self.root / "server.log"
        text = path.read_text(errors="replace") if path.exists() else ""
        return " ".join(text[-600:].split())

    def _kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()

    def _listening(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                return True
        except OSError:
            return False

    def stop(self) -> None:
        """A clean stop (what ``service rabbitmq-server restart`` does first)."""
        if self.proc is None or self.proc.poll() is not None:
            return
        with contextlib.suppress(AssertionError):
            self.ctl("stop")
        try:
            self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self._kill()
        # The Erlang port mapper forgets the node a moment later.
        time.sleep(0.5)

    def __enter__(self) -> RabbitNode:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
        self._kill()

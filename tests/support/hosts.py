"""GitNeural's worker hosts, each in a network namespace of its own
(:mod:`tests.support.netns`), with everything they reach on the bridge and the means to
cut them off from part of it.

    with HostNetwork(2) as net, app_world(root, gh_host=net.git) as world:
        with deployment("rabbitmq", world, root, GITNEURAL_DATABASE_URL=db) as d:
            with Cluster(net, world, d, root) as cluster:
                h1, h2 = cluster.hosts
                cluster.start(h1); cluster.start(h2)
                cluster.cut(h1, "services")     # broker, schedule/state store, database
                cluster.cut(h1, "github")       # the GitHub API and git
                cluster.cut(h1, "everything")   # all of it, and its cable pulled
                cluster.heal(h1)

The shared services listen on 127.0.0.1 only, which no namespace reaches: each host gets
a TCP forwarder of its own per service (:class:`~tests.support.tcpproxy.CuttableProxy`,
on the bridge's host-side address), and its URLs point at them. Cutting a host resets
the connections of its forwarders and refuses new ones; the others' go on. The fake
GitHub listens on the bridge itself (the worker fetches only from the host its API is
on, and PyGithub follows the URLs GitHub gives out): cutting it adds a route that
refuses its address inside the namespace, so new connections fail at once and open ones
stall until the client's timeout, as behind a failed router. The K3 stub is reached
through a forwarder (``everything`` cuts it, and pulls the host's cable).
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

from tests.support.deployments import Deployment
from tests.support.netns import HostNetwork, NetHost
from tests.support.services import AppWorld, GitNeuralProcess, worker_ready
from tests.support.tcpproxy import CuttableProxy

Cut = Literal["services", "github", "everything"]
#: The variables naming what a worker reaches, by the group a cut takes away.
REACHES: dict[str, tuple[str, ...]] = {
    "services": ("GITNEURAL_BROKER_URL", "GITNEURAL_STATE_URL", "GITNEURAL_DATABASE_URL"),
    "model": ("KIMI_BASE_URL",),
}


@dataclass
class WorkerHost:
    net: NetHost
    env: dict[str, str]
    #: The host's forwarders by group (``services``, ``model``).
    proxies: dict[str, list[CuttableProxy]] = field(default_factory=dict)
    workers: list[GitNeuralProcess] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.net.name

    @property
    def data_dir(self) -> Path:
        return Path(self.env["GITNEURAL_DATA_DIR"])

    def log(self) -> str:
        return "".join(w.log() for w in self.workers)


def _upstream(url: str) -> tuple[str, int]:
    parts = urlsplit(url)
    assert parts.hostname and parts.port, f"a URL without host and port: {url[:40]}"
    return parts.hostname, parts.port


class Cluster:
    def __init__(self, net: HostNetwork, world: AppWorld, d: Deployment, root: Path) -> None:
        self.net, self.world, self.d, self.root = net, world, d, root
        self.hosts = [self._host(h) for h in net.hosts]

    def _host(self, net_host: NetHost) -> WorkerHost:
        env = dict(self.d.env)
        env["GITNEURAL_WORKER_HOST"] = net_host.name
        env["GITNEURAL_DATA_DIR"] = str(self.root / net_host.name / "data")
        # The bridge is not loopback; it is the test's own network.
        env["GITNEURAL_ALLOW_INSECURE_GITHUB"] = "1"
        host = WorkerHost(net_host, env)
        for group, names in REACHES.items():
            made: dict[tuple[str, int], CuttableProxy] = {}
            for name in names:
                if name not in env:
                    continue
                upstream = _upstream(env[name])
                if upstream not in made:
                    made[upstream] = CuttableProxy(upstream, listen=(self.net.hub, 0))
                old, new = f"{upstream[0]}:{upstream[1]}", f"{self.net.hub}:{made[upstream].port}"
                env[name] = env[name].replace(old, new, 1)
            host.proxies[group] = list(made.values())
        return host

    def start(self, host: WorkerHost, *args: str, wait: bool = True) -> GitNeuralProcess:
        """A ``gitneural worker`` on ``host`` (``-Q reviews`` unless ``args`` say)."""
        n = len(host.workers) + 1
        command = ["worker", *(args or ("-Q", "reviews"))]
        log = self.root / f"{host.name}-w{n}.log"
        proc = GitNeuralProcess(command, host.env, log, prefix=host.net.run_prefix).start()
        host.workers.append(proc)
        if wait:
            worker_ready(proc)
        return proc

    def stop(self, host: WorkerHost) -> None:
        for proc in host.workers:
            if proc.alive():
                proc.stop(timeout=30)

    def cut(self, host: WorkerHost, what: Cut) -> None:
        groups = {"services": ["services"], "github": []}.get(what, list(host.proxies))
        for group in groups:
            for proxy in host.proxies[group]:
                proxy.cut()
        if what in ("github", "everything"):
            self.net.block(host.net, self.net.git)
        if what == "everything":
            self.net.link(host.net, up=False)

    def heal(self, host: WorkerHost) -> None:
        self.net.heal(host.net)
        for proxies in host.proxies.values():
            for proxy in proxies:
                proxy.restore()

    def close(self) -> None:
        for host in self.hosts:
            with contextlib.suppress(Exception):
                self.heal(host)  # a worker stops sooner when it can say goodbye
            with contextlib.suppress(Exception):
                self.stop(host)
            for proxies in host.proxies.values():
                for proxy in proxies:
                    proxy.close()

    def __enter__(self) -> Cluster:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

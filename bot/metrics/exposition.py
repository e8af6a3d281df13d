"""Serving the metrics: one process's, or the sum over every process of a host.

In multi-process mode (``PROMETHEUS_MULTIPROC_DIR``) each process writes its own file
and the scrape sums them with prometheus_client's ``MultiProcessCollector``; a process
that exited still counts (a counter must not go down when a gunicorn worker is
replaced). The directory is emptied when the top process starts, never by its children.
Gauges of things outside the process (queue depths) are measured at scrape time by a
collector the caller hands in.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Final

from bot.errors import ConfigError, GitNeuralError
from bot.metrics import catalog

if TYPE_CHECKING:
    from prometheus_client.registry import Collector, CollectorRegistry

log = logging.getLogger("gitneural.metrics")

MULTIPROC_ENV: Final = "PROMETHEUS_MULTIPROC_DIR"


def multiprocess_dir() -> Path | None:
    raw = os.environ.get(MULTIPROC_ENV, "").strip()
    return Path(raw) if raw else None


def prepare_multiprocess_dir(path: Path) -> Path:
    """Use ``path`` for this process and the processes it starts, emptied first (the
    files of a previous run would add its counts to this one's). Call it before any
    metric is made: prometheus_client chooses its storage once."""
    if catalog._families:
        raise RuntimeError("metrics were made before their multi-process directory was set")
    try:
        path.mkdir(parents=True, exist_ok=True)
        for stale in path.glob("*.db"):
            stale.unlink()
    except OSError as exc:
        raise ConfigError(
            f"cannot prepare the metrics directory {path} ({exc.strerror}): set "
            "GITNEURAL_DATA_DIR to a writable directory"
        ) from None
    os.environ[MULTIPROC_ENV] = str(path)
    return path


def inherit_or_prepare(path: Path) -> Path:
    """The directory a parent process chose (``gitneural serve`` for its children), else
    ``path``, prepared."""
    inherited = multiprocess_dir()
    if inherited is not None:
        inherited.mkdir(parents=True, exist_ok=True)
        return inherited
    return prepare_multiprocess_dir(path)


class _Gauges:
    """``name{label}`` gauges measured when Prometheus scrapes."""

    def __init__(
        self, name: str, doc: str, label: str, measure: Callable[[], Mapping[str, float]]
    ) -> None:
        self.name, self.doc, self.label, self.measure = name, doc, label, measure

    def collect(self) -> Iterator[object]:
        from prometheus_client.core import GaugeMetricFamily

        try:
            values = self.measure()
        except GitNeuralError as exc:
            # No value is better than a wrong one: the scrape still answers.
            log.warning("metrics: %s not measured: %s", self.name, exc)
            return
        family = GaugeMetricFamily(self.name, self.doc, labels=[self.label])
        for key, value in sorted(values.items()):
            family.add_metric([key], float(value))
        yield family


def queue_depth_collector(measure: Callable[[], Mapping[str, int]]) -> Collector:
    """``gitneural_queue_depth{queue}``: messages waiting, measured at scrape time."""
    collector = _Gauges("gitneural_queue_depth", "Jobs waiting in each queue.", "queue", measure)
    return collector  # type: ignore[return-value]


def scrape_registry(extra: Iterable[Collector] = ()) -> CollectorRegistry:
    """What a scrape reads: every process of the directory (or this process), plus
    ``extra``."""
    from prometheus_client import REGISTRY, CollectorRegistry
    from prometheus_client.multiprocess import MultiProcessCollector

    catalog.families()  # this process's series exist, at zero, before any event
    registry = CollectorRegistry(auto_describe=False)
    directory = multiprocess_dir()
    if directory is not None:
        MultiProcessCollector(registry, path=str(directory))  # type: ignore[no-untyped-call]
    else:
        registry.register(REGISTRY)
    for collector in extra:
        registry.register(collector)
    return registry


def render(registry: CollectorRegistry) -> tuple[bytes, str]:
    """The text exposition format, and its content type."""
    from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

    return generate_latest(registry), CONTENT_TYPE_LATEST


def serve_metrics(host: str, port: int, registry: CollectorRegistry) -> None:
    """``GET /metrics`` on ``host:port`` from a daemon thread (``gitneural worker
    --metrics-port``)."""
    from prometheus_client import start_http_server

    try:
        start_http_server(port, addr=host, registry=registry)
    except OSError as exc:
        raise ConfigError(
            f"cannot serve metrics on {host}:{port} ({exc.strerror}): choose another --metrics-port"
        ) from None
    log.info("metrics on http://%s:%d/metrics", host, port)

"""Reading ``/metrics`` back as Prometheus would: prometheus_client's own text parser."""

from __future__ import annotations

import http.client
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from prometheus_client.parser import text_string_to_metric_families


@dataclass(frozen=True)
class Scrape:
    #: Family name -> its type (``counter``, ``histogram``, ``gauge``…).
    types: dict[str, str]
    #: ``(sample name, sorted label items) -> value``.
    samples: dict[tuple[str, tuple[tuple[str, str], ...]], float]

    def value(self, name: str, **labels: str) -> float:
        """The sample ``name{labels}``; 0 when absent (a counter never incremented)."""
        return self.samples.get((name, tuple(sorted(labels.items()))), 0.0)

    def by_label(self, name: str, label: str) -> dict[str, float]:
        """``name`` summed by one label's values."""
        out: dict[str, float] = {}
        for (sample, labels), value in self.samples.items():
            if sample == name:
                key = dict(labels).get(label, "")
                out[key] = out.get(key, 0.0) + value
        return {key: value for key, value in out.items() if value}


def parse(text: str) -> Scrape:
    types: dict[str, str] = {}
    samples: dict[tuple[str, tuple[tuple[str, str], ...]], float] = {}
    for family in text_string_to_metric_families(text):
        types[family.name] = family.type
        for sample in family.samples:
            key = (sample.name, tuple(sorted(sample.labels.items())))
            samples[key] = samples.get(key, 0.0) + sample.value
    return Scrape(types, samples)


def scrape(address: str, path: str = "/metrics") -> Scrape:
    conn = http.client.HTTPConnection(address, timeout=10)
    try:
        conn.request("GET", path)
        response = conn.getresponse()
        body = response.read().decode()
    finally:
        conn.close()
    assert response.status == 200, f"GET {path}: {response.status} {body[:300]}"
    assert response.getheader("Content-Type", "").startswith("text/plain")
    return parse(body)


def statuses(values: Iterable[int | str]) -> dict[str, float]:
    """How many of each status, as the metrics count them."""
    return {key: float(n) for key, n in Counter(str(v) for v in values).items()}

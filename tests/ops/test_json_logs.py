"""``GITNEURAL_LOG_FORMAT=json``: one JSON object per line, with the delivery id,
installation, repository, PR, head and job id where known, from the webhook and from
the workers; the format is checked at start."""

from __future__ import annotations

import json
import logging
import re
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest

from bot.logs import JsonFormatter, log_context
from tests.support.ops import deliver, served
from tests.support.services import app_world, outcomes, worker_ready

GITNEURAL = [sys.executable, "-m", "bot.cli.main"]


def json_lines(text: str) -> tuple[list[dict[str, Any]], list[str]]:
    parsed, other = [], []
    for line in text.splitlines():
        try:
            value = json.loads(line)
        except json.JSONDecodeError:
            other.append(line)
            continue
        if isinstance(value, dict):
            parsed.append(value)
        else:
            other.append(line)
    return parsed, other


def test_a_record_is_one_json_line_with_its_context() -> None:
    record = logging.LogRecord(
        "gitneural.worker", logging.ERROR, __file__, 1, "job %s\nfailed", ("x",), None
    )
    try:
        raise ValueError("boom")
    except ValueError:
        record.exc_info = sys.exc_info()
    with log_context(delivery="d-1", repository="octo/app", pr=7), log_context(job="t-1"):
        line = JsonFormatter().format(record)
    assert "\n" not in line
    value = json.loads(line)
    assert value["message"] == "job x\nfailed" and value["level"] == "ERROR"
    assert (value["delivery"], value["repository"], value["pr"], value["job"]) == (
        "d-1",
        "octo/app",
        7,
        "t-1",
    )
    assert "installation" not in value and "ValueError: boom" in value["exception"]
    assert "delivery" not in json.loads(JsonFormatter().format(record))  # the block ended
    with pytest.raises(ValueError, match="unknown log context"), log_context(token="nope"):
        pass


def test_serve_and_its_workers_log_json_lines(tmp_path: Path) -> None:
    with app_world(tmp_path) as w:
        env = w.env(tmp_path / "data", GITNEURAL_LOG_FORMAT="json")
        with served(env, tmp_path / "serve.log") as (proc, address):
            worker_ready(proc)
            number = w.new_pull()
            delivery = str(uuid.uuid4())
            assert deliver(address, "pull_request", w.opened(number), delivery) == 202
            [(status, _, _)] = outcomes(proc, delivery)
            assert status == "posted"
            log = proc.log()
    parsed, other = json_lines(log)
    # Every line is JSON: gunicorn's, Celery's (its banner left out), warnings, ours.
    assert len(parsed) > 20 and [line for line in other if line.strip()] == []
    loggers = {v["logger"] for v in parsed}
    assert {"gitneural.web", "gitneural.worker", "gunicorn.error", "py.warnings"} <= loggers
    head = w.gh.head_sha("octo/app", number)[:12]
    [webhook] = [v for v in parsed if "decision=queued" in v["message"]]
    assert webhook["logger"] == "gitneural.web" and webhook["delivery"] == delivery
    [job] = [
        v for v in parsed if v["message"].startswith("review job") and "outcome=" in v["message"]
    ]
    assert job["delivery"] == delivery and job["installation"] == 1
    assert (job["repository"], job["pr"], job["head"]) == ("octo/app", number, head)
    assert re.fullmatch(r"[0-9a-f]{32}", job["job"])  # the scheduled job's id
    # Every line of the job, not only its last, carries the job's context.
    during = [v for v in parsed if v.get("job") == job["job"]]
    assert len(during) > 3 and all(v["delivery"] == delivery for v in during)


def test_a_bad_log_format_is_one_line(tmp_path: Path) -> None:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "GITNEURAL_LOG_FORMAT": "xml"}
    done = subprocess.run(
        [*GITNEURAL, "usage"], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2
    assert (
        done.stderr.strip()
        == "gitneural: error: GITNEURAL_LOG_FORMAT must be text or json, not 'xml'"
    )

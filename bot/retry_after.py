"""How long a server asked us to wait: one parser for K3's and GitHub's answers."""

from __future__ import annotations

import email.utils
import time
from collections.abc import Mapping
from typing import Any


def retry_after_seconds(headers: Mapping[str, Any] | None) -> float | None:
    """Seconds from ``retry-after-ms`` or ``retry-after`` (seconds or an HTTP date)."""
    lowered = {str(k).lower(): str(v).strip() for k, v in (headers or {}).items()}
    value = lowered.get("retry-after", "")
    try:
        if "retry-after-ms" in lowered:
            return max(0.0, float(lowered["retry-after-ms"]) / 1000)
        if not value:
            return None
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())

"""K3's reasoning efforts: the one list the settings, the jobs, the client and the command
line accept."""

from __future__ import annotations

from typing import Final, Literal, get_args

Effort = Literal["low", "high", "max"]
EFFORTS: Final[tuple[Effort, ...]] = get_args(Effort)

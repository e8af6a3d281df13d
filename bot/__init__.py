"""GitNeural: code review with Kimi K3 that only ever suggests."""

__version__ = "0.3.0"

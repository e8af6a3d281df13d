"""Outputs: the GitHub review, the terminal, JSON, SARIF, and model text made safe to show."""

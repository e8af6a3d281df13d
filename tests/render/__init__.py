"""Text, JSON, SARIF and GitHub output; model text made safe to show."""

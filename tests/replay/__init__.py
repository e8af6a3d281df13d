"""``gitneural replay``: past changes reviewed and scored."""

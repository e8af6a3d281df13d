"""Registering and checking the GitHub App: ``setup`` (the manifest flow's local page)
and ``doctor``."""

"""Rendering the settings: the reference page and the commented .gitneural.toml."""

"""Every setting GitNeural reads, in one place.

A repository's `.gitneural.toml` (`repository`), the environment (`environment`), the
App's server settings (`server`), the settings file (`env_file`) and the token budgets
(`budgets`).
"""

"""The pre-commit hook: runs, install, pushes, cache, patches, the pre-commit framework."""

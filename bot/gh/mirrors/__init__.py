"""Bare git mirrors of the repositories under review, fetched by git and kept under a cap."""

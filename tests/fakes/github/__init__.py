"""A fake GitHub (REST API + git smart HTTP) on a real socket, for PyGithub's ``base_url``;
see :mod:`tests.fakes.github.server`. ``python -m tests.fakes.github`` serves it from a
process of its own."""

from tests.fakes.github.rpc import FakeGitHubClient
from tests.fakes.github.server import FakeGitHub

__all__ = ["FakeGitHub", "FakeGitHubClient"]

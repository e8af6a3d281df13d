"""A Kimi K3 protocol stub on a real socket; see :mod:`tests.fakes.k3.stub`.
``python -m tests.fakes.k3`` serves it from a process of its own."""

from tests.fakes.k3.handler import RecordedRequest
from tests.fakes.k3.reply import ErrorReply, Reply
from tests.fakes.k3.stub import K3Stub

__all__ = ["ErrorReply", "K3Stub", "RecordedRequest", "Reply"]

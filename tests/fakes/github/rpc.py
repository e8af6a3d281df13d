"""Driving a fake GitHub in another process: ``POST /_fake/rpc`` calls a helper of
:class:`~tests.fakes.github.server.FakeGitHub` by name, and :class:`FakeGitHubClient` is
the caller."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

from flask import Flask, Response, request

from tests.fakes.github.store import RequestRecord

RPC_METHODS = frozenset(
    {
        "info", "env", "add_installation", "create_repo", "push", "force_push", "delete_branch",
        "create_pull", "close_pull", "reopen_pull", "set_draft", "edit_pull", "set_labels",
        "set_permission", "set_clone_url", "add_issue_comment", "add_review", "mint_token",
        "actions_token", "user_token",
        "expire_tokens", "exhaust_rate_limit", "set_token_lifetime", "fail",
        "fail_secondary_rate_limit", "fail_primary_rate_limit", "clear_faults", "when",
        "requests", "forbidden_requests", "clear_requests", "reviews", "review_comments",
        "issue_comments", "reactions", "check_runs", "pull", "repo_json", "head_sha",
        "branch_sha", "clone_url", "add_review_comment", "add_thread_reply",
        "react_to_review_comment", "resolve_thread", "unresolve_thread", "thread_resolved",
        "review_comment", "registered_manifests", "set_webhook_secret", "create_issue",
        "link_issue",
    }
)  # fmt: skip  # a word list: several to a line


def add_control(app: Flask, fake: Any) -> None:
    def rpc() -> Response:
        call = request.get_json(force=True)
        name = call.get("method")
        if name not in RPC_METHODS:
            return Response(json.dumps({"error": f"no RPC method {name!r}"}), status=400)
        try:
            result = getattr(fake, name)(*call.get("args", []), **call.get("kwargs", {}))
        except (KeyError, ValueError, TypeError, AssertionError) as exc:
            return Response(json.dumps({"error": f"{type(exc).__name__}: {exc}"}), status=400)
        if isinstance(result, list):
            result = [r.to_json() if isinstance(r, RequestRecord) else r for r in result]
        return Response(json.dumps({"result": result}), mimetype="application/json")

    app.add_url_rule("/_fake/rpc", "fake_rpc", rpc, methods=["POST"])


class FakeGitHubClient:
    """Drives a fake served by ``python -m tests.fakes.github`` from another process: every
    helper of :class:`FakeGitHub` is a method here with the same arguments."""

    def __init__(self, web_url: str) -> None:
        self.web_url = web_url.rstrip("/")
        info = self._call("info")
        self.api_url: str = info["api_url"]
        self.app_id: int = info["app_id"]
        self.bot_login: str = info["bot_login"]
        self.private_key_pem: str = info["private_key_pem"]

    @classmethod
    def from_state_dir(cls, state_dir: Path) -> FakeGitHubClient:
        return cls(json.loads((state_dir / "fakegithub.json").read_text())["web_url"])

    def _call(self, method: str, *args: Any, **kwargs: Any) -> Any:
        data = json.dumps({"method": method, "args": args, "kwargs": kwargs}).encode()
        req = urllib.request.Request(
            f"{self.web_url}/_fake/rpc", data=data, headers={"Content-Type": "application/json"}
        )
        try:
            with urllib.request.urlopen(req, timeout=30) as resp:
                result = json.loads(resp.read())["result"]
        except urllib.error.HTTPError as exc:
            raise RuntimeError(json.loads(exc.read()).get("error", str(exc))) from None
        if method in ("requests", "forbidden_requests"):
            return [RequestRecord(**r) for r in result]
        return result

    def __getattr__(self, name: str) -> Callable[..., Any]:
        if name not in RPC_METHODS:
            raise AttributeError(name)
        return lambda *args, **kwargs: self._call(name, *args, **kwargs)

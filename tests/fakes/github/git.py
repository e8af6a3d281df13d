"""Git smart HTTP for the fake GitHub, served by ``git http-backend`` (CGI) on the bare
repositories. Clone and fetch need HTTP Basic auth as ``x-access-token`` with a valid,
unexpired installation token of the repository's installation, as on GitHub. Pushes
(``git-receive-pack``) are refused with 403 and logged as forbidden."""

from __future__ import annotations

import base64
import os
import subprocess

from flask import Blueprint, Response, request

from tests.fakes.github.app import auth_repo, credit, forbid, store
from tests.fakes.github.reviews import pull_diff_of

_CHALLENGE = {"WWW-Authenticate": 'Basic realm="GitHub"'}


def _auth_failure(message: str, status: int = 401) -> Response:
    headers = _CHALLENGE if status == 401 else {}
    return Response(message + "\n", status=status, headers=headers, mimetype="text/plain")


def _check_access(owner: str, name: str) -> Response | None:
    """None when the request may read the repository, else the answer GitHub gives."""
    s = store()
    header = request.headers.get("Authorization", "")
    scheme, _, value = header.partition(" ")
    if scheme.lower() != "basic" or not value:
        return _auth_failure("Authentication required")
    try:
        user, _, password = base64.b64decode(value).decode().partition(":")
    except (ValueError, UnicodeDecodeError):
        return _auth_failure("Invalid credentials")
    token = s.valid_token(password)
    if user != "x-access-token" or token is None:
        return _auth_failure(
            "Invalid username or token. Password authentication is not supported for Git "
            "operations."
        )
    credit(token)
    repo = s.repos.get(f"{owner}/{name}")
    if repo is None or not s.token_allows(token, repo):
        return Response("Repository not found.\n", status=404, mimetype="text/plain")
    return None


def _http_backend(path_info: str) -> Response:
    s = store()
    body = request.get_data()
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(s.root),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_PROJECT_ROOT": str(s.root / "repos"),
        "GIT_HTTP_EXPORT_ALL": "1",
        "PATH_INFO": path_info,
        "REQUEST_METHOD": request.method,
        "QUERY_STRING": request.query_string.decode(),
        "CONTENT_TYPE": request.headers.get("Content-Type", ""),
        "CONTENT_LENGTH": str(len(body)),
        "REMOTE_USER": "x-access-token",
        "REMOTE_ADDR": request.remote_addr or "127.0.0.1",
        "SERVER_PROTOCOL": "HTTP/1.1",
        # GitHub lets clients fetch any reachable commit by SHA.
        "GIT_CONFIG_COUNT": "2",
        "GIT_CONFIG_KEY_0": "uploadpack.allowReachableSHA1InWant",
        "GIT_CONFIG_VALUE_0": "true",
        "GIT_CONFIG_KEY_1": "uploadpack.allowFilter",
        "GIT_CONFIG_VALUE_1": "true",
    }
    if request.headers.get("Content-Encoding"):
        env["HTTP_CONTENT_ENCODING"] = request.headers["Content-Encoding"]
    if request.headers.get("Git-Protocol"):
        env["HTTP_GIT_PROTOCOL"] = env["GIT_PROTOCOL"] = request.headers["Git-Protocol"]
    proc = subprocess.run(
        ["git", "http-backend"], input=body, env=env, capture_output=True, check=False
    )
    head, sep, payload = proc.stdout.partition(b"\r\n\r\n")
    if not sep:
        head, _, payload = proc.stdout.partition(b"\n\n")
    status = 200
    headers: dict[str, str] = {}
    for line in head.decode("latin-1").splitlines():
        key, _, value = line.partition(":")
        if key.lower() == "status":
            status = int(value.strip().split()[0])
        elif key:
            headers[key.strip()] = value.strip()
    if proc.returncode != 0 and not proc.stdout:
        return Response(proc.stderr, status=500, mimetype="text/plain")
    return Response(payload, status=status, headers=headers)


def blueprint() -> Blueprint:
    bp = Blueprint("git", __name__)

    @bp.get("/<owner>/<name>.git/info/refs")
    def info_refs(owner: str, name: str) -> Response:
        if request.args.get("service") == "git-receive-pack":
            forbid("pushes to the repository")
            return Response("Permission denied\n", status=403, mimetype="text/plain")
        denied = _check_access(owner, name)
        if denied is not None:
            return denied
        return _http_backend(f"/{owner}/{name}.git/info/refs")

    @bp.post("/<owner>/<name>.git/git-upload-pack")
    def upload_pack(owner: str, name: str) -> Response:
        denied = _check_access(owner, name)
        if denied is not None:
            return denied
        return _http_backend(f"/{owner}/{name}.git/git-upload-pack")

    @bp.post("/<owner>/<name>.git/git-receive-pack")
    def receive_pack(owner: str, name: str) -> Response:
        forbid("pushes to the repository")
        return Response("Permission denied\n", status=403, mimetype="text/plain")

    @bp.get("/<owner>/<name>/pull/<int:number>.diff")
    def web_diff(owner: str, name: str, number: int) -> Response:
        repo = auth_repo(owner, name)
        pull = repo.pulls.get(number)
        if pull is None:
            return Response("Not Found", status=404)
        return Response(pull_diff_of(repo, pull).text, mimetype="text/plain")

    return bp

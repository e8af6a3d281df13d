"""``gitneural setup``: register the GitHub App from its manifest in one click, and write
its credentials to the settings file (``gitneural.env``, readable by its owner only).

A local page asks whose App it is (an account or an organization), which GitHub
(github.com or a GitHub Enterprise Server) and the public webhook URL; "Register on
GitHub" posts ``app.yml``'s manifest; GitHub's redirect brings a code, traded for the
App's id, key, webhook secret and client credentials; the page then links to "Install on
repositories". Existing credentials are kept unless ``--force``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import re
import sys
import threading
import urllib.parse
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from bot.errors import ConfigError, GitHubError

if TYPE_CHECKING:
    from bot.gh.manifest import RegisteredApp

#: The settings ``setup`` writes: a file holding any of them holds an App's credentials.
APP_SETTINGS = ("GITHUB_APP_ID", "GITHUB_PRIVATE_KEY", "GITHUB_WEBHOOK_SECRET")
_SLUG: Final = re.compile(r"[a-z0-9][a-z0-9-]{0,99}")


def add_parser(commands: Any) -> None:
    setup: argparse.ArgumentParser = commands.add_parser(
        "setup",
        help="register the GitHub App from its manifest and write its credentials",
        description="Serve a local page that registers GitNeural's GitHub App from its "
        "manifest (app.yml) on github.com or GitHub Enterprise Server, then writes the "
        "App's id, private key, webhook secret and client credentials to the settings "
        "file (mode 0600), which `gitneural serve`, `worker` and `doctor` read.",
    )
    setup.add_argument(
        "--settings-file",
        type=Path,
        help="where to write (default GITNEURAL_SETTINGS_FILE, else ./gitneural.env)",
    )
    setup.add_argument("--force", action="store_true", help="replace existing credentials")
    setup.add_argument("--host", default="127.0.0.1", help="address of the local page (127.0.0.1)")
    setup.add_argument(
        "--port", type=int, default=3000, help="port of the local page (default 3000; 0: any)"
    )
    setup.add_argument(
        "--webhook-url",
        default="",
        help="public webhook URL, ending in /webhook, to fill the form",
    )
    setup.add_argument(
        "--public-url",
        default="",
        help="on a server behind its TLS proxy: the server's own address (https://HOST), "
        "for GitHub's callback and the webhook URL, and the one host the page answers",
    )
    setup.add_argument("--organization", default="", help="organization owning the App")
    setup.add_argument(
        "--github-url",
        default="https://github.com",
        help="github.com (default) or a GitHub Enterprise Server, to fill the form",
    )
    setup.set_defaults(run=run_setup)


def settings_target(given: Path | None) -> Path:
    if given is not None:
        return given
    raw = os.environ.get("GITNEURAL_SETTINGS_FILE", "").strip()
    return Path(raw).expanduser() if raw else Path.cwd() / "gitneural.env"


def refuse_overwrite(path: Path) -> None:
    from bot.settings.env_file import read_settings

    if not path.exists():
        return
    held = [name for name in APP_SETTINGS if read_settings(path).get(name, "").strip()]
    if held:
        raise ConfigError(
            f"{path} already holds App credentials ({', '.join(held)}): pass --force to "
            "register a new App and replace them"
        )


def public_url(raw: str) -> str:
    """``--public-url``, checked: http(s), a host, nothing after it."""
    from bot.gh.manifest import site_address

    value = raw.strip().rstrip("/")
    if site_address(value) is None:
        raise ConfigError(
            "--public-url must be the server's address, like https://gitneural.example.com "
            "(no path)"
        )
    return value


def checked_values(app: RegisteredApp, api_url: str) -> dict[str, str]:
    """What setup writes, each value checked as ``serve`` will read it: a numeric id, a
    PEM key, a parsed API URL, a bot login of the slug's letters (the file's writer then
    refuses any control character). GitHub's answer is another party's text."""
    from bot.gh.api.credentials import credential_problems

    values = {
        "GITHUB_APP_ID": str(app.app_id),
        "GITHUB_PRIVATE_KEY": app.pem,
        "GITHUB_WEBHOOK_SECRET": app.webhook_secret,
        "GITHUB_API_URL": api_url,
        "GITHUB_CLIENT_ID": app.client_id,
        "GITHUB_CLIENT_SECRET": app.client_secret,
        "GITNEURAL_BOT_LOGIN": app.bot_login,
    }
    allow = {k: os.environ[k] for k in ("GITNEURAL_ALLOW_INSECURE_GITHUB",) if k in os.environ}
    problems = credential_problems({**allow, **values})
    if not _SLUG.fullmatch(app.slug):
        problems.append("the App's slug is not a GitHub App's name")
    if not app.webhook_secret.strip():
        problems.append("no webhook secret")
    if problems:
        raise GitHubError(
            "GitHub's answer to the registration does not hold a usable App "
            f"({problems[0]}): nothing written"
        )
    return values


def run_setup(args: argparse.Namespace) -> int:
    from bot.cli.app_setup.setup_page import SetupServer, SetupState, webhook_url
    from bot.gh.manifest import web_url

    path = settings_target(args.settings_file).resolve()
    if not args.force:
        refuse_overwrite(path)
    public = public_url(args.public_url) if args.public_url else ""
    hook = args.webhook_url or (f"{public}/webhook" if public else "")
    if hook:
        hook = webhook_url(hook)

    def write(app: RegisteredApp, api_url: str) -> str:
        from bot.settings.env_file import write_settings

        values = checked_values(app, api_url)
        when = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
        header = (
            f"the App {app.name} ({app.html_url}), registered by `gitneural setup` on {when}.\n"
            "Environment variables of the same names win over these lines. Keep this file "
            "private."
        )
        write_settings(path, values, header)
        return str(path)

    server = SetupServer((args.host, args.port), SetupState(callback_url="", on_registered=write))
    port = server.server_address[1]
    shown = f"[{args.host}]" if ":" in args.host else args.host
    page = f"http://{shown}:{port}"
    state = server.state
    # The page answers at one address only, the one it prints: a DNS-rebinding page
    # reaches it under a name of its own, and is refused.
    opened = public or page
    state.hosts = frozenset({urllib.parse.urlsplit(opened).netloc})
    state.origins = frozenset({opened})
    state.page_url = f"{opened}/"
    state.secure_cookie = opened.startswith("https://")
    state.callback_url = f"{opened}/callback"
    state.github = web_url(args.github_url)
    state.organization, state.webhook_url = args.organization, hook
    behind = f" (served at {page}/ behind it)" if public else ""
    print(
        f"gitneural setup: open {opened}/?t={state.ticket} in a browser to register the "
        "GitHub App "
        f"(Ctrl-C to stop){behind}",
        flush=True,
    )
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1})
    thread.start()
    try:
        while not state.done.wait(0.2):
            pass
    finally:
        server.shutdown()
        thread.join()
        server.server_close()
    print(
        f"gitneural setup: wrote the App's credentials to {path} (mode 0600); install it "
        "on repositories from the page, then run `gitneural serve`",
        file=sys.stderr,
    )
    return 0

"""The webhook app under gunicorn: the WSGI factory and the server's settings.

``bot.cli.server.commands:wsgi_app()`` stays the documented entry point for running the app
under a gunicorn of one's own; ``gitneural serve`` runs it with the options below.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import flask


def wsgi_app() -> flask.Flask:
    """The webhook app from the environment; for gunicorn
    (``bot.cli.server.commands:wsgi_app()``)."""
    from bot.cli.server.ops_wiring import web_operations
    from bot.settings.env_file import load_settings_file
    from bot.web.app import create_app
    from bot.web.settings import WebSettings
    from workers.celeryapp.app import create_publisher
    from workers.celeryapp.publisher import CeleryJobQueue
    from workers.settings import WorkerSettings

    load_settings_file()  # under a gunicorn of one's own too
    web = WebSettings.from_env()
    settings = WorkerSettings.from_env()
    publisher = create_publisher(settings)
    operations = web_operations(web, settings, publisher)
    return create_app(web, CeleryJobQueue(publisher, settings), operations=operations)


def gunicorn_options(args: argparse.Namespace) -> dict[str, Any]:
    from bot.cli.server.ops_wiring import gunicorn_log_config

    host = f"[{args.host}]" if ":" in args.host else args.host
    level = ("warning", "info", "debug")[min(args.verbose, 2)]
    log_config = gunicorn_log_config(level)
    return {
        **({"logconfig_dict": log_config} if log_config else {}),
        "bind": f"{host}:{args.port}",
        "workers": args.workers,
        # gthread keeps slow clients and keep-alive connections from tying up a worker;
        # a webhook request itself takes milliseconds.
        "worker_class": "gthread",
        "threads": args.threads,
        "timeout": 30,
        "graceful_timeout": 10,
        "keepalive": 5,
        "proc_name": "gitneural-web",
        "errorlog": "-",
        "accesslog": None,
        "loglevel": level,
        # gunicorn >= 25.1 opens a control socket at one path per user: two servers on a
        # host would fight over it, and nothing here uses it.
        "control_socket_disable": True,
    }


def run_gunicorn(options: dict[str, Any]) -> int:
    from gunicorn.app.base import BaseApplication

    class WebServer(BaseApplication):  # type: ignore[misc]
        def load_config(self) -> None:
            for key, value in options.items():
                if key in self.cfg.settings:  # older gunicorns lack newer settings
                    self.cfg.set(key, value)

        def load(self) -> flask.Flask:
            return wsgi_app()

    try:
        WebServer().run()
    except SystemExit as exc:  # gunicorn's arbiter ends with sys.exit
        return exc.code if isinstance(exc.code, int) else 1
    return 0

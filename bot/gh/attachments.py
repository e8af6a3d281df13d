"""Fetching a pull request's attachments: only from GitHub's attachment hosts
(:class:`bot.images.hosts.Hosts`), with no credentials, redirects followed by hand so
each hop is checked against the same allow-list, and at most ``max_bytes`` read.

No token is ever sent: the links GitHub renders for a private repository carry their
own short-lived signature, and a token must reach no host but the API's. ``.netrc`` and
proxy settings of the environment are not read either (``trust_env = False``).
"""

from __future__ import annotations

from urllib.parse import urljoin

import requests

from bot.images.hosts import Hosts, shown_link

#: Redirects followed at most (GitHub's attachment links redirect once, to storage).
MAX_REDIRECTS = 3
TIMEOUT_S = 20.0
_CHUNK = 65_536
_REDIRECTS = frozenset({301, 302, 303, 307, 308})


def fetch_attachment(
    url: str, hosts: Hosts, max_bytes: int, *, session: requests.Session | None = None
) -> bytes | str:
    """The bytes at ``url``, or why they were not fetched (or not kept)."""
    own = session is None
    session = session or _session()
    try:
        return _fetch(session, url, hosts, max_bytes)
    except requests.RequestException as exc:
        return f"not fetched: {type(exc).__name__}"
    finally:
        if own:
            session.close()


def _session() -> requests.Session:
    session = requests.Session()
    session.trust_env = False
    return session


def _fetch(session: requests.Session, url: str, hosts: Hosts, max_bytes: int) -> bytes | str:
    for hop in range(MAX_REDIRECTS + 1):
        why = hosts.refusal(url)
        if why is not None:
            where = f"redirected to {shown_link(url)}: " if hop else ""
            return f"not fetched: {where}{why}"
        with session.get(
            url,
            allow_redirects=False,
            stream=True,
            timeout=TIMEOUT_S,
            headers={"Accept": "image/*"},
        ) as answer:
            if answer.status_code in _REDIRECTS:
                url = urljoin(url, answer.headers.get("Location", ""))
                continue
            if answer.status_code != 200:
                return f"not fetched: HTTP {answer.status_code}"
            declared = answer.headers.get("Content-Length", "")
            if declared.isdigit() and int(declared) > max_bytes:
                return f"larger than {max_bytes / 1_000_000:g} MB"
            data = bytearray()
            for chunk in answer.iter_content(_CHUNK):
                data += chunk
                if len(data) > max_bytes:
                    return f"larger than {max_bytes / 1_000_000:g} MB"
            return bytes(data)
    return "not fetched: too many redirects"

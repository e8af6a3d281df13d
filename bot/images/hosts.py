"""Which links may be fetched: GitHub's attachment hosts over https, nothing else.

A link to any other host, to an IP address, with a user name or a port, is named in
the review and never requested; so is a redirect that leaves these hosts (the fetcher
asks :func:`refusal` again at every hop). ``extra`` origins (``GITNEURAL_ATTACHMENTS_URL``)
are added for GitHub Enterprise Server, whose attachments live on the server's own host,
and for tests, which serve them from a fake: each is one exact scheme, host and port.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit

#: GitHub's hosts of uploaded attachments; ``github.com`` only for ``/user-attachments/``.
ATTACHMENT_HOSTS = frozenset(
    {
        "private-user-images.githubusercontent.com",
        "user-images.githubusercontent.com",
        "objects.githubusercontent.com",
    }
)
_GITHUB_PATHS = ("/user-attachments/assets/", "/user-attachments/files/")
VIDEO_SUFFIXES = (".mp4", ".mov", ".webm")


@dataclass(frozen=True)
class Hosts:
    """The allow-list of one deployment."""

    #: Extra allowed origins, each ``scheme://host[:port]`` in lower case.
    extra: frozenset[str] = frozenset()

    @classmethod
    def with_extra(cls, origins: Iterable[str]) -> Hosts:
        found = set()
        for origin in origins:
            parts = urlsplit(origin.strip().rstrip("/"))
            if parts.scheme in ("http", "https") and parts.netloc:
                found.add(f"{parts.scheme}://{parts.netloc}".lower())
        return cls(frozenset(found))

    def refusal(self, url: str) -> str | None:
        """Why ``url`` must not be fetched, or None when it may be."""
        try:
            parts = urlsplit(url)
            port = parts.port
        except ValueError:
            return "not a valid address"
        origin = f"{parts.scheme}://{parts.netloc}".lower()
        if origin in self.extra:
            return None
        host = (parts.hostname or "").lower()
        if _is_ip(host):
            return "an IP address, not GitHub's attachment host"
        github = host in ATTACHMENT_HOSTS or (
            host == "github.com" and parts.path.startswith(_GITHUB_PATHS)
        )
        if not github:
            return f"{host or 'no host'} is not GitHub's attachment host"
        if parts.scheme != "https":
            return "not https"
        if parts.username is not None or parts.password is not None or port is not None:
            return "an address with credentials or a port"
        return None


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return False
    return True


def shown_link(url: str) -> str:
    """A link as the summary names it: host and path, never its query (a signed
    link's token) nor credentials."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        return "an invalid address"
    segments = [p for p in parts.path.split("/") if p]
    # A long path by its last part: an attachment's id is what tells two apart.
    path = parts.path if len(segments) <= 2 else f"/…/{segments[-1]}"
    return f"{host}{port}{path}"[:200]


def is_video(url: str) -> bool:
    return urlsplit(url).path.lower().endswith(VIDEO_SUFFIXES)

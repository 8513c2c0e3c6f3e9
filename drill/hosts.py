"""The GPU host a kernel judge runs on over SSH: one check for the settings file, `config set`, --gpu-host and the app.

What it takes is what ssh takes as a destination, written plainly: `host` (a
name, an address or an `~/.ssh/config` alias), `user@host`, and either with
`:PORT`, which is handed to ssh as `-p PORT` rather than as part of the name.
Nothing that starts with `-` (ssh would read it as an option), and none of `=`,
`/`, `$`, quotes, backticks, spaces or other characters a shell or ssh would
give a meaning to.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# user and host names: letters, digits, '.', '_' and '-', never starting with '-' (nor '.' for a host)
_USER = r"[A-Za-z0-9_][A-Za-z0-9._-]*"
_NAME = r"[A-Za-z0-9_][A-Za-z0-9._-]*"
_HOST = re.compile(rf"(?:(?P<user>{_USER})@)?(?P<host>{_NAME})(?::(?P<port>[0-9]+))?")
MAX_HOST_CHARS = 255
MAX_PORT = 65535
EXAMPLES = "user@host, host or user@host:port"


class BadHost(ValueError):
    """A GPU host ssh would not take as one; the message says why, in one line."""


@dataclass(frozen=True)
class SshHost:
    """A checked GPU host: `destination` goes to ssh as the host argument, `port` (if any) as `-p`."""

    destination: str
    port: int | None = None


def parse_host(text: str) -> SshHost:
    """The host in `text`, checked; BadHost saying what is wrong (each caller adds the value as it shows values)."""
    host = text.strip()
    if not host:
        raise BadHost(f"is empty; write {EXAMPLES}")
    if len(host) > MAX_HOST_CHARS:
        raise BadHost(f"is longer than {MAX_HOST_CHARS} characters; write {EXAMPLES}")
    if host.startswith("-"):
        raise BadHost(f"must not start with '-' (ssh would read it as an option); write {EXAMPLES}")
    match = _HOST.fullmatch(host)
    if match is None:
        raise BadHost(f"must look like {EXAMPLES}, with only letters, digits, '.', '_' and '-' in the names")
    port = match["port"]
    if port is not None and not 1 <= int(port) <= MAX_PORT:
        raise BadHost(f"must have a port from 1 to {MAX_PORT} after ':'")
    user = f"{match['user']}@" if match["user"] else ""
    return SshHost(user + match["host"], int(port) if port is not None else None)

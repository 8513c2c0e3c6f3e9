"""A kernel judge on another host, over SSH: the same child protocol, carried by `ssh`.

The judge child speaks JSON lines on stdin and stdout, which SSH carries as they
are; so a remote judge is the ordinary JudgeClient whose child command is
`ssh HOST python3 -m drill.kernel.remote_child`. The source travels in the run
request, events stream back as they happen, and when the connection fails or
drops the client reports ssh's own words ("Connection refused", "Broken pipe")
while the learner's draft stays saved on this machine.

On the remote host drill must be installed with its kernels extra; the remote
child finds each card's harness among the host's own bundled kernels by file
name (see drill.kernel.remote_child).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence

# user@host, host, or an ~/.ssh/config alias; never something ssh would read as an option
_HOST = re.compile(r"^(?:[A-Za-z0-9._-]+@)?[A-Za-z0-9._-]+$")

# Fail fast on a dead host, notice a dropped link within ~15 s, never prompt for a password.
SSH_OPTIONS = (
    "-T",
    "-o",
    "BatchMode=yes",
    "-o",
    "ConnectTimeout=10",
    "-o",
    "ServerAliveInterval=5",
    "-o",
    "ServerAliveCountMax=3",
)


def check_host(host: str) -> str:
    """The host as given, or ValueError saying what is wrong with it."""
    host = host.strip()
    if not _HOST.match(host):
        raise ValueError(f"--gpu-host must look like user@host or host (got {host!r})")
    return host


def ssh_command(
    host: str,
    *,
    ssh: str = "ssh",
    python: str = "python3",
    port: int | None = None,
    options: Sequence[str] = (),
) -> list[str]:
    """The command that starts a judge child on `host` (what JudgeClient runs instead of a local child)."""
    command = [ssh, *SSH_OPTIONS]
    if port is not None:
        command += ["-p", str(port)]
    command += [*options, check_host(host), f"{shlex.quote(python)} -m drill.kernel.remote_child"]
    return command

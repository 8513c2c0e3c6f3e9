"""A kernel judge on another host, over SSH: the same child protocol, carried by `ssh`.

The judge child speaks JSON lines on stdin and stdout, which SSH carries as they
are; so a remote judge is the ordinary JudgeClient whose child command is
`ssh HOST python3 -m drill.judge --remote`, started from `/`, without PYTHONPATH and with
`-P` as every judge is (drill.kernel_shared.judge_python). The source travels in the run
request, events stream back as they happen, and when the connection fails or
drops the client reports ssh's own words ("Connection refused", "Broken pipe")
while the learner's draft stays saved on this machine.

On the remote host drill must be installed with its kernels extra; the remote
child finds each card's harness among the host's own bundled kernels by file
name (see drill.judge.remote_requests).
"""

from __future__ import annotations

from collections.abc import Sequence

from drill.hosts import BadHost, parse_host
from drill.kernel_shared import judge_python
from drill.words import shortened

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
    """The host as given (trimmed), or drill.hosts.BadHost (a ValueError) saying what is wrong with it."""
    try:
        parse_host(host)
    except BadHost as exc:
        raise BadHost(f"gpu host {exc} (got {shortened(host)})") from None
    return host.strip()


def ssh_command(
    host: str,
    *,
    ssh: str = "ssh",
    python: str = "python3",
    port: int | None = None,
    options: Sequence[str] = (),
) -> list[str]:
    """The command that starts a judge child on `host` (what JudgeClient runs instead of a local child).

    A port written in the host (`user@host:2222`) goes to ssh as `-p`; `port` given here comes first.
    Raises drill.hosts.BadHost for a host ssh would not take as one.
    """
    check_host(host)
    parsed = parse_host(host)
    command = [ssh, *SSH_OPTIONS]
    chosen = port if port is not None else parsed.port
    if chosen is not None:
        command += ["-p", str(chosen)]
    # "--" ends ssh's options: whatever follows is the destination and the command, never an option
    command += [*options, "--", parsed.destination, judge_python.remote_command(python, "drill.judge", "--remote")]
    return command

"""`drill gpu calibrate`: measure this machine's GPU as the kernel judge sees it, and save it for kernel cards."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING

from drill.cli import options
from drill.cli.kernel import DATA_DIR_HELP, EXIT_FAILED, EXIT_OK, EXIT_USAGE

if TYPE_CHECKING:
    from drill.cli import Subcommands


def add_parser(subparsers: Subcommands, name: str, help_text: str) -> None:
    gpu = subparsers.add_parser(name, help=help_text)
    gpu_commands = gpu.add_subparsers(dest="gpu_command", metavar="SUBCOMMAND")
    calibrate = gpu_commands.add_parser(
        "calibrate",
        help="measure the GPU's copy bandwidth, matmul rate and a CUDA event pair's own cost again (for kernel cards)",
    )
    calibrate.add_argument("--json", action="store_true", help="print the measurement as JSON")
    options.add_data_dir(calibrate, DATA_DIR_HELP)
    options.add_decks(calibrate)


def run(args: argparse.Namespace) -> int:
    if getattr(args, "gpu_command", None) != "calibrate":
        print("usage: drill gpu calibrate", file=sys.stderr)
        return EXIT_USAGE
    return _calibrate(args)


def _calibrate(args: argparse.Namespace) -> int:
    from drill.kernel.client import JudgeClient, JudgeError

    try:
        with JudgeClient(data_dir=options.data_dir(args)) as client:
            result = client.calibrate()
    except JudgeError as exc:  # the judge could not start or stopped answering: said in one line
        print(f"drill gpu calibrate: {exc}", file=sys.stderr)
        return EXIT_FAILED
    if args.json:
        print(json.dumps(result, indent=2))
    elif result["event"] == "calibrated":
        print(
            f"{result.get('device')}: copy {result['gbps']:,.0f} GB/s (read + write), pure read"
            f" {result.get('read_gbps', float('nan')):,.0f} GB/s, matmul {result.get('tflops', float('nan')):,.0f} TFLOPS,"
            f" a CUDA event pair's own cost {result.get('event_us', float('nan')):.1f} µs; saved for kernel cards"
        )
    else:
        print(f"drill gpu calibrate: {result.get('message')}", file=sys.stderr)
    if result.get("event") == "calibrated":
        return EXIT_OK
    return EXIT_FAILED

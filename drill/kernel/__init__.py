"""Kernel cards, the app's side: the card's files and drafts, trust, and the client of the judge process.

The judge itself (compile, check and time the learner's CUDA or Triton kernel)
runs in a child process, `python -m drill.judge`, the only code that imports
torch, triton or cupy; nothing here imports it (see pyproject.toml's contracts).

`cards` finds a card's files, checks them for `drill check` and builds the
judge's job; `drafts` keeps the learner's edits; `trust` records which decks'
Python the learner trusted; `client` starts the judge, sends it requests and
folds its events into a `verdict` (`bytecode`: where the judge's Python keeps
torch's bytecode; `remote`: the ssh command of a judge on another host).
What both processes import (the messages, NVRTC, launch shapes, trusted
source) lives in drill.kernel_shared.
"""

"""Kernel cards: compile, judge and time the learner's CUDA or Triton kernel in a child process.

Nothing imported from this package on the app's path loads torch, triton or cupy;
only `drill.kernel.child` and `drill.kernel.kit` (inside the judge process) do.
"""

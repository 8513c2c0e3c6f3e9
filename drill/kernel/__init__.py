"""Kernel cards: compile, judge and time the learner's CUDA or Triton kernel in a child process.

Nothing imported from this package on the app's path loads torch, triton or cupy;
only `drill.kernel.child` and `drill.kernel.kit` (inside the judge process) do.

On the app's side: `client` starts and talks to the judge (`bytecode`: where its
Python keeps torch's bytecode), `cards` and `drafts` the card's files and the
learner's drafts, `verdict` reads what the judge sent. In the judge process:
`child` serves requests, `judging` runs one, `kit` and `measure` time launches
(`cupti` reads the GPU's own time stamps and audits which streams a launch
used; `profiled` times through torch.profiler where CUPTI cannot load),
`tamper` notices a learner's Python changing the judge's own code, `nvrtc`
and `cudadrv` compile and launch CUDA.
"""

"""Kernel cards: compile, judge and time the learner's CUDA or Triton kernel in a child process.

Nothing imported from this package on the app's path loads torch, triton or cupy;
only `drill.kernel.child`, `drill.kernel.kit` (torch) and `drill.kernel.cupy_kit`
(CuPy) do, inside the judge process.

On the app's side: `client` starts and talks to the judge (`bytecode`: where its
Python keeps torch's bytecode), `cards` and `drafts` the card's files and the
learner's drafts, `verdict` reads what the judge sent. In the judge process:
`child` serves requests, `judging` runs one, `kit` (torch) or `cupy_kit` (CuPy,
for a CUDA card while torch is not loaded; `kitbase` is what both share) gives
the harnesses their tools, `calibration` keeps this GPU's ceilings and torch's
times, `measure` times launches
(`cupti` reads the GPU's own time stamps and audits which streams a launch
used; `profiled` times through torch.profiler where CUPTI cannot load),
`tamper` notices a learner's Python changing the judge's own code, `nvrtc`
and `cudadrv` compile and launch CUDA.
"""

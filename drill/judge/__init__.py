"""The judge process: compiles, checks and times the learner's CUDA or Triton kernel (`python -m drill.judge`).

Only this package imports torch, triton or cupy, and nothing outside it imports
it: the app talks to it through drill.kernel.client, in the JSON lines of
drill.kernel_shared.protocol. From the app's side it imports only
drill.kernel_shared (what both processes share), drill.paths and drill.words.

`__main__` serves requests; `runtime` is what the judge knows about this machine
and its kits; `judging` runs one request; `harness` types what the judge uses of
a card's harness and of a kit; `programs` builds the learner's file
(`source_only` loads Python from its bytes, `tamper` notices a learner's Python
changing the judge); `torch_kit` (torch) or `cupy_kit` (CuPy, for a CUDA card
while torch is not loaded; `kitbase` is what both share, `cupy_ops` CuPy's raw
kernels, `cupy_types` what the kit uses of CuPy) give the harnesses their tools;
`calibration` keeps this GPU's ceilings and torch's times; `measure` times
launches (`cupti` reads the GPU's own time stamps, `profiled` times through
torch.profiler where CUPTI cannot load) and `timing_event` turns them into the
`timing` event (`timed`: what timing uses of a kit); `cudadrv` loads and
launches CUDA through the driver API; `inbox` reads requests from the start;
`remote_requests` points a remote run at this host's harness; `fake` is a
stand-in judge for tests. The collective cards' ranks and their checks are the
`collective` package.
"""

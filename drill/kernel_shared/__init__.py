"""Kernel cards, what both processes import: the app (drill.kernel) and the judge (drill.judge).

`protocol` is the typed JSON-lines messages between them; `nvrtc` compiles
CUDA through ctypes (`drill check` and the judge); `launch` reads a kernel's
declared launch shape; `trusted_source` reads deck Python only as the learner
trusted it; `judge_python` is the isolated command line every judge-side Python
starts with; `collective_sizes` and `collective_source` are the sizes and the
refused calls of the collective cards. Nothing here imports the rest of the app
beyond drill.paths and drill.words (pyproject.toml's contracts), so the judge
loads none of it.
"""

#!/usr/bin/env bash
# Everything the kernel cards need checked on a GPU, in one go: GPU tests, the benchmark, logs under $OUT.
#   bash tests/gpu/run_all.sh            (OUT defaults to ./gpu-logs)
set -uo pipefail
OUT="${OUT:-gpu-logs}"
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 DRILL_GPU_LOG_DIR="$OUT"
PY="${PYTHON:-python3}"
{
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv
  "$PY" -c 'import torch, triton, cupy; print("torch", torch.__version__, "triton", triton.__version__, "cupy", cupy.__version__)'
  "$PY" -c 'from drill.kernel import nvrtc; print("nvrtc", nvrtc.version(), nvrtc.library_path())'
} 2>&1 | tee "$OUT/env.log"
"$PY" -m pytest -m gpu tests/gpu -q -p no:cacheprovider -o addopts="" --timeout=900 2>&1 | tee "$OUT/gpu_tests.log"
"$PY" bench/kernels.py --json "$OUT/bench.json" 2>&1 | tee "$OUT/bench.log"

#!/usr/bin/env bash
# Everything the kernel cards need checked on a GPU, in one go: the GPU tests (the bundled kernels, the
# fault matrix, kernels written to cheat), then the benchmark (ceilings, starters and answers, judge time
# against ncu at every shape, edit -> verdict, a cold `drill kernel run`), which prints PASS/FAIL per target.
#   bash tests/gpu/run_all.sh            logs under $OUT (default ./gpu-logs); BENCH_ARGS go to bench/kernels.py
set -uo pipefail
OUT="${OUT:-gpu-logs}"
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 DRILL_GPU_LOG_DIR="$OUT"
PY="${PYTHON:-python3}"
{
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
  "$PY" -c 'import torch, triton; print("torch", torch.__version__, "triton", triton.__version__)'
  "$PY" -c 'from drill.kernel import nvrtc; print("nvrtc", nvrtc.version(), nvrtc.library_path())'
} 2>&1 | tee "$OUT/env.log"
timeout_flag=()
"$PY" -c 'import pytest_timeout' 2>/dev/null && timeout_flag=(--timeout=300)
"$PY" -m pytest -m "gpu or not gpu" tests/gpu tests/kernel_shared/test_nvrtc.py -q -p no:cacheprovider -o addopts="" "${timeout_flag[@]}" 2>&1 | tee "$OUT/gpu_tests.log"
"$PY" bench/kernels.py --json "$OUT/bench.json" ${BENCH_ARGS:-} 2>&1 | tee "$OUT/bench.log"
exit "${PIPESTATUS[0]}"

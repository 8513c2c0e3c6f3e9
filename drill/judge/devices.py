"""The GPUs this machine's driver sees, asked through the driver API without importing torch."""

from __future__ import annotations

import ctypes
import os


def cuda_device_count() -> int:
    """GPUs the driver sees, asked without importing torch (0 when there is no driver)."""
    if os.environ.get("DRILL_JUDGE_CPU"):
        return 0
    try:
        lib = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return 0
    if lib.cuInit(0) != 0:
        return 0
    count = ctypes.c_int()
    if lib.cuDeviceGetCount(ctypes.byref(count)) != 0:
        return 0
    return count.value

"""Load a cubin and launch its kernels through the CUDA driver API, with ctypes (no CuPy).

Used inside the judge child only, after torch has made the device's primary
context current on this thread. Launches go to the stream the caller names
(torch's current stream), so they are ordered with torch's own work.
"""

from __future__ import annotations

import ctypes
import functools
import weakref
from collections.abc import Sequence
from typing import Any, TypedDict

_CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8
_lib: ctypes.CDLL | None = None


class CUDADriverError(RuntimeError):
    """A driver call failed; the message starts with the error's name (CUDA_ERROR_...), as CuPy's does."""

    def __init__(self, code: int, call: str) -> None:
        self.code = code
        super().__init__(f"{error_name(code)}: {error_string(code)} ({call})")


def driver() -> ctypes.CDLL:
    global _lib
    if _lib is None:
        lib = ctypes.CDLL("libcuda.so.1")
        lib.cuModuleLoadData.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_void_p]
        lib.cuModuleGetFunction.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_void_p, ctypes.c_char_p]
        lib.cuModuleUnload.argtypes = [ctypes.c_void_p]
        lib.cuFuncSetAttribute.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_int]
        lib.cuLaunchKernel.argtypes = [ctypes.c_void_p] + [ctypes.c_uint] * 7 + [ctypes.c_void_p] * 3
        lib.cuGetErrorName.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)]
        lib.cuGetErrorString.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)]
        lib.cuCtxGetCurrent.argtypes = [ctypes.POINTER(ctypes.c_void_p)]
        lib.cuCtxSetCurrent.argtypes = [ctypes.c_void_p]
        lib.cuDevicePrimaryCtxRetain.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_int]
        lib.cuMemsetD8Async.argtypes = [ctypes.c_uint64, ctypes.c_ubyte, ctypes.c_size_t, ctypes.c_void_p]
        lib.cuDeviceGetName.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_int]
        lib.cuDeviceTotalMem_v2.argtypes = [ctypes.POINTER(ctypes.c_size_t), ctypes.c_int]
        lib.cuDeviceGetUuid.argtypes = [ctypes.c_void_p, ctypes.c_int]
        _lib = lib
    return _lib


def error_name(code: int) -> str:
    text = ctypes.c_char_p()
    if driver().cuGetErrorName(code, ctypes.byref(text)) != 0 or not text.value:
        return f"CUDA_ERROR_{code}"
    return text.value.decode()


def error_string(code: int) -> str:
    text = ctypes.c_char_p()
    if driver().cuGetErrorString(code, ctypes.byref(text)) != 0 or not text.value:
        return "unknown error"
    return text.value.decode()


def _check(code: int, call: str) -> None:
    if code != 0:
        raise CUDADriverError(code, call)


def memset_d8_async(address: int, value: int, count: int, stream: int) -> None:
    """Set `count` bytes at device `address` to `value`, queued on `stream`."""
    _check(driver().cuMemsetD8Async(address, value, count, stream), "cuMemsetD8Async")


def ensure_context(device: int = 0) -> None:
    """Make the device's primary context (the one torch uses) current on this thread, if none is."""
    lib = driver()
    current = ctypes.c_void_p()
    _check(lib.cuCtxGetCurrent(ctypes.byref(current)), "cuCtxGetCurrent")
    if not current.value:
        _check(lib.cuInit(0), "cuInit")
        _check(lib.cuDevicePrimaryCtxRetain(ctypes.byref(current), device), "cuDevicePrimaryCtxRetain")
        _check(lib.cuCtxSetCurrent(current), "cuCtxSetCurrent")


def retain_primary_context(device: int = 0) -> None:
    """Create the device's primary context (what torch will use), without making it current here.

    Creating it is a good part of a cold start; a thread can do it while torch is being imported.
    """
    lib = driver()
    ctx = ctypes.c_void_p()
    _check(lib.cuInit(0), "cuInit")
    _check(lib.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), device), "cuDevicePrimaryCtxRetain")


def open_primary_context_early() -> None:
    """Start making the primary context in a thread when a driver and a GPU are here, before the judge imports
    the rest of itself and reads its first request: the context is most of a GPU's start (0.7-0.9 s on an H200
    host), and a judge that is told to stay on the CPU, or finds no driver, makes none."""
    import os
    import threading

    if os.environ.get("DRILL_JUDGE_CPU"):
        return

    def retain() -> None:
        try:
            retain_primary_context()
        except (OSError, CUDADriverError):  # no driver or no GPU: the judge finds that out itself
            pass

    threading.Thread(target=retain, name="primary-context", daemon=True).start()


def compute_capability(device: int = 0) -> tuple[int, int]:
    """(major, minor) of the device, from the driver alone (no context needed)."""
    lib = driver()
    major = ctypes.c_int()
    minor = ctypes.c_int()
    _check(lib.cuInit(0), "cuInit")
    _check(lib.cuDeviceGetAttribute(ctypes.byref(major), 75, device), "cuDeviceGetAttribute")  # ..._MAJOR
    _check(lib.cuDeviceGetAttribute(ctypes.byref(minor), 76, device), "cuDeviceGetAttribute")  # ..._MINOR
    return major.value, minor.value


@functools.cache
def device_identity(device: int = 0) -> DeviceIdentity:
    """Name, UUID, memory and SM count of the device, from the driver alone (no context, no torch); asked once
    (the judge files and reads its kept figures under it, at start and in every run)."""
    lib = driver()
    _check(lib.cuInit(0), "cuInit")
    name = ctypes.create_string_buffer(256)
    _check(lib.cuDeviceGetName(name, len(name), device), "cuDeviceGetName")
    total = ctypes.c_size_t()
    _check(lib.cuDeviceTotalMem_v2(ctypes.byref(total), device), "cuDeviceTotalMem")
    uuid = (ctypes.c_ubyte * 16)()
    _check(lib.cuDeviceGetUuid(uuid, device), "cuDeviceGetUuid")
    sms = ctypes.c_int()
    _check(lib.cuDeviceGetAttribute(ctypes.byref(sms), 16, device), "cuDeviceGetAttribute")  # ..._MULTIPROCESSOR_COUNT
    return {"name": name.value.decode(), "uuid": bytes(uuid).hex(), "total_memory": total.value, "sm_count": sms.value}


class DeviceIdentity(TypedDict):
    name: str
    uuid: str  # hex
    total_memory: int  # bytes
    sm_count: int


class Module:
    """A loaded cubin; unloaded when garbage-collected."""

    def __init__(self, cubin: bytes) -> None:
        lib = driver()
        ensure_context()
        handle = ctypes.c_void_p()
        self._image = ctypes.create_string_buffer(cubin, len(cubin))
        _check(
            lib.cuModuleLoadData(ctypes.byref(handle), ctypes.cast(self._image, ctypes.c_void_p)), "cuModuleLoadData"
        )
        self.handle = handle
        self._finalizer = weakref.finalize(self, _unload, handle.value)

    def get_function(self, name: str) -> Function:
        fn = ctypes.c_void_p()
        _check(
            driver().cuModuleGetFunction(ctypes.byref(fn), self.handle, name.encode()), f"cuModuleGetFunction {name}"
        )
        return Function(self, fn, name)


def _unload(handle: int | None) -> None:
    try:
        driver().cuModuleUnload(handle)
    except Exception:  # interpreter teardown, or a broken context: nothing left to free
        pass


class Function:
    def __init__(self, module: Module, handle: ctypes.c_void_p, name: str) -> None:
        self.module = module  # keeps the module loaded while the function is in use
        self.handle = handle
        self.name = name
        self._smem_limit = 48 * 1024

    def allow_shared(self, smem: int) -> None:
        """Above 48 KB of dynamic shared memory a kernel must opt in."""
        if smem > self._smem_limit:
            _check(
                driver().cuFuncSetAttribute(self.handle, _CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, smem),
                "cuFuncSetAttribute",
            )
            self._smem_limit = smem

    def launch(
        self, grid: Sequence[int], block: Sequence[int], args: Sequence[object], smem: int = 0, stream: int = 0
    ) -> None:
        """args: numpy scalars (np.uint64 for pointers, np.int32, ...) or ctypes values, in the kernel's order."""
        g = (tuple(grid) + (1, 1, 1))[:3]
        b = (tuple(block) + (1, 1, 1))[:3]
        self.allow_shared(smem)
        holders = [_arg(a) for a in args]
        params = (ctypes.c_void_p * max(1, len(holders)))(
            *[ctypes.cast(ctypes.pointer(h), ctypes.c_void_p) for h in holders]
        )
        _check(
            driver().cuLaunchKernel(self.handle, *g, *b, smem, stream or None, params, None),
            f"cuLaunchKernel {self.name}",
        )


def _arg(value: object) -> ctypes._SimpleCData[Any] | ctypes.Array[ctypes.c_char]:
    if isinstance(value, ctypes._SimpleCData):
        return value
    tobytes = getattr(value, "tobytes", None)
    if tobytes is None:
        raise TypeError(f"kernel argument {value!r} has no C type (use kit.int32, kit.int64 or a tensor)")
    raw = tobytes()
    return (ctypes.c_char * len(raw)).from_buffer_copy(raw)

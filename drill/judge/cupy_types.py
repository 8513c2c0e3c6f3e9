"""What the CuPy kit uses of CuPy, typed by that use: the array module, its arrays, streams, events and raw kernels.

CuPy is imported only in the judge, and only where it is installed (it ships
no type information): these Protocols say what drill.judge.cupy_kit and
drill.judge.cupy_ops call on it. NumPy's module and arrays answer to the same
names for what the kit does on the host (the tests give it NumPy).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np
import numpy.typing as npt

# An array on the host (what `asnumpy` gives).
HostArray = npt.NDArray[np.generic]
# An element type as CuPy and NumPy take it: np.float32, a np.dtype, or its name.
DTypeLike = type[np.generic] | np.dtype[np.generic] | str


class Stream(Protocol):
    ptr: int


class Memory(Protocol):
    """An array's device memory (`a.data`)."""

    ptr: int

    def memset_async(self, value: int, size: int) -> None: ...

    def copy_from_device_async(self, src: Memory, size: int, stream: Stream | None = None) -> None: ...


class Flags(Protocol):
    c_contiguous: bool
    f_contiguous: bool


class DeviceArray(Protocol):
    """A CuPy array (or a NumPy one, on the host), as the kit uses it."""

    @property
    def shape(self) -> tuple[int, ...]: ...

    @property
    def strides(self) -> tuple[int, ...]: ...

    @property
    def size(self) -> int: ...

    @property
    def ndim(self) -> int: ...

    @property
    def nbytes(self) -> int: ...

    @property
    def dtype(self) -> np.dtype[np.generic]: ...

    @property
    def flags(self) -> Flags: ...

    @property
    def data(self) -> Memory: ...

    @property
    def T(self) -> DeviceArray: ...

    def reshape(self, *shape: int | Sequence[int]) -> DeviceArray: ...

    def astype(self, dtype: DTypeLike, copy: bool = True) -> DeviceArray: ...

    def fill(self, value: float) -> None: ...

    def sum(self) -> DeviceArray: ...

    def max(self) -> DeviceArray: ...

    def __float__(self) -> float: ...

    def __int__(self) -> int: ...

    def __getitem__(self, key: object) -> DeviceArray: ...

    def __setitem__(self, key: object, value: object) -> None: ...

    def __sub__(self, other: DeviceArray) -> DeviceArray: ...

    def __add__(self, other: DeviceArray | float) -> DeviceArray: ...

    def __radd__(self, other: float) -> DeviceArray: ...

    def __rmul__(self, other: float) -> DeviceArray: ...

    def __imul__(self, other: float) -> DeviceArray: ...

    def __iadd__(self, other: DeviceArray | float) -> DeviceArray: ...

    def __le__(self, other: DeviceArray) -> DeviceArray: ...

    def __eq__(self, other: object) -> DeviceArray: ...  # type: ignore[override]

    def __ne__(self, other: object) -> DeviceArray: ...  # type: ignore[override]

    def __invert__(self) -> DeviceArray: ...


class RawKernel(Protocol):
    """A kernel of a loaded module: called with (grid, block, arguments)."""

    def __call__(self, grid: tuple[int, ...], block: tuple[int, ...], args: tuple[object, ...]) -> None: ...


class RawModule(Protocol):
    def get_function(self, name: str) -> RawKernel: ...


class LoadableModule(RawModule, Protocol):
    def load(self, cubin: bytes) -> None: ...


class CudaEvent(Protocol):
    def record(self) -> None: ...

    def synchronize(self) -> None: ...


class Runtime(Protocol):
    def getDeviceProperties(self, device: int) -> dict[str, int]: ...

    def deviceSynchronize(self) -> None: ...


class FunctionModule(Protocol):
    def Module(self) -> LoadableModule: ...


class Cuda(Protocol):
    """`cupy.cuda`."""

    @property
    def runtime(self) -> Runtime: ...

    @property
    def function(self) -> FunctionModule: ...

    def get_current_stream(self) -> Stream: ...

    def Event(self) -> CudaEvent: ...

    def get_elapsed_time(self, start: CudaEvent, end: CudaEvent) -> float: ...


class RandomState(Protocol):
    def standard_normal(self, n: int, dtype: DTypeLike) -> DeviceArray: ...


class Random(Protocol):
    def RandomState(self, seed: int) -> RandomState: ...


class MemoryPool(Protocol):
    def free_all_blocks(self) -> None: ...


class ArrayModule(Protocol):
    """`cupy` (or `numpy`, on the host), as the kit uses it."""

    float64: type[np.float64]
    ndarray: type[DeviceArray]

    @property
    def cuda(self) -> Cuda: ...

    @property
    def random(self) -> Random: ...

    def empty(self, shape: int | Sequence[int], dtype: DTypeLike) -> DeviceArray: ...

    def zeros(self, shape: int | Sequence[int], dtype: DTypeLike) -> DeviceArray: ...

    def zeros_like(self, a: DeviceArray) -> DeviceArray: ...

    def asarray(self, a: object) -> DeviceArray: ...

    def asnumpy(self, a: DeviceArray) -> HostArray: ...

    def abs(self, a: DeviceArray) -> DeviceArray: ...

    def isfinite(self, a: DeviceArray) -> DeviceArray: ...

    def flatnonzero(self, a: DeviceArray) -> DeviceArray: ...

    def square(self, a: DeviceArray) -> DeviceArray: ...

    def around(self, a: DeviceArray, out: DeviceArray) -> DeviceArray: ...

    def sum(self, a: DeviceArray, dtype: DTypeLike) -> DeviceArray: ...

    def RawKernel(self, source: str, name: str) -> RawKernel: ...

    def RawModule(self, code: str) -> RawModule: ...

    def get_default_memory_pool(self) -> MemoryPool: ...

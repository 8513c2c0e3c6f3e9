"""The device work of CuPy's kit (drill.judge.cupy_kit) as one small CUDA module of drill's own.

CuPy builds each of its array operations (a fill, an astype, a sum, a
comparison) as a kernel of its own, compiled the first time it is used with
CuPy's headers: about 0.7 s each on an H100 host, 32 of them for a kit's
checks, so a judge's first CUDA verdict on a machine whose CuPy cache is
empty took more than 20 s. The kit's large-array work is done here instead:
two modules of plain CUDA, each compiled once in about 0.2 s (CuPy keeps them
on disk like its own). The host's NumPy does the rest (results up to
HOST_CHECK_ELEMENTS), and an array this module does not take (another dtype,
another layout) goes to CuPy's own operations.

Imported only by the judge child, and only where CuPy is.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from drill.judge.measure import READ_SOURCE
from drill.kernel_shared import nvrtc

if TYPE_CHECKING:
    from drill.judge.cupy_types import ArrayModule, DeviceArray, RawKernel, RawModule

ALL = r"""
#define DRILL_ALL(i, n) \
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < (n); \
         i += (long long)gridDim.x * blockDim.x)
"""

# the inputs, fills, float64 copies, sums and the L2 flush's read: the first CUDA verdict needs all of them
BASE_SOURCE = (
    ALL
    + r"""

__device__ __forceinline__ unsigned long long drill_mix(unsigned long long z)
{   // splitmix64's finaliser: a different, well-spread 64-bit value for each input
    z += 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

// out[i] = N(0, 1) * scale + shift (rounded half to even with `whole`), from a hash of (seed, i): Box-Muller
extern "C" __global__ void drill_normal(float* out, long long n, unsigned long long seed, float scale,
                                        float shift, int whole)
{
    DRILL_ALL(i, n) {
        const unsigned long long h = drill_mix(seed ^ drill_mix((unsigned long long)i));
        const double u1 = ((double)(h >> 40) + 1.0) * (1.0 / 16777216.0);      // (0, 1]
        const double u2 = (double)(h & 0xffffffULL) * (1.0 / 16777216.0);      // [0, 1)
        float v = (float)(sqrt(-2.0 * log(u1)) * cospi(2.0 * u2)) * scale + shift;
        out[i] = whole ? rintf(v) : v;
    }
}

extern "C" __global__ void drill_fill_f32(float* x, long long n, float v) { DRILL_ALL(i, n) x[i] = v; }
extern "C" __global__ void drill_fill_f64(double* x, long long n, double v) { DRILL_ALL(i, n) x[i] = v; }
extern "C" __global__ void drill_to_f64(const float* x, double* y, long long n) { DRILL_ALL(i, n) y[i] = x[i]; }

template <typename T>
__device__ void drill_sum(const T* x, long long n, int square, double* partials)
{   // one float64 partial sum per block (of x, or of its squares); the host adds the partials
    __shared__ double warps[32];
    double s = 0.0;
    DRILL_ALL(i, n) { const double v = (double)x[i]; s += square ? v * v : v; }
    for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(0xffffffffu, s, o);
    if ((threadIdx.x & 31) == 0) warps[threadIdx.x >> 5] = s;
    __syncthreads();
    if (threadIdx.x == 0) {
        double t = 0.0;
        for (int w = 0; w < (int)((blockDim.x + 31) >> 5); ++w) t += warps[w];
        partials[blockIdx.x] = t;
    }
}
extern "C" __global__ void drill_sum_f32(const float* x, long long n, int square, double* p) { drill_sum(x, n, square, p); }
extern "C" __global__ void drill_sum_f64(const double* x, long long n, int square, double* p) { drill_sum(x, n, square, p); }
"""
    + READ_SOURCE
)

# comparisons of large results (a scalar result is compared on the host): built when first needed
COMPARE_SOURCE = (
    ALL
    + r"""
// got (contiguous) against ref read in its own order: flat i is ref[(i / dim1) * s0 + (i % dim1) * s1].
// stats: [0] elements wrong, [1] the first wrong index, [2] the largest finite |got - ref| (bits),
// [3] the largest tolerance (bits), [4] how many |got - ref| were finite. A NaN never passes.
template <typename G, typename R>
__device__ void drill_compare(const G* got, const R* ref, long long n, long long dim1, long long s0,
                              long long s1, double rtol, double atol, int exact, unsigned long long* stats)
{
    unsigned long long bad = 0, first = ~0ULL, finite = 0;
    double worst = 0.0, top = 0.0;
    DRILL_ALL(i, n) {
        const long long r = i / dim1;
        const double g = (double)got[i], f = (double)ref[r * s0 + (i - r * dim1) * s1];
        const double d = fabs(g - f), tol = exact ? 0.0 : atol + rtol * fabs(f);
        if (!(exact ? g == f : d <= tol)) { ++bad; first = i < first ? i : first; }
        if (isfinite(d)) { ++finite; worst = d > worst ? d : worst; }
        if (tol > top) top = tol;
    }
    for (int o = 16; o > 0; o >>= 1) {
        bad += __shfl_down_sync(0xffffffffu, bad, o);
        finite += __shfl_down_sync(0xffffffffu, finite, o);
        const unsigned long long f2 = __shfl_down_sync(0xffffffffu, first, o);
        first = f2 < first ? f2 : first;
        worst = fmax(worst, __shfl_down_sync(0xffffffffu, worst, o));
        top = fmax(top, __shfl_down_sync(0xffffffffu, top, o));
    }
    if ((threadIdx.x & 31) == 0) {   // non-negative doubles order as their bits do
        if (bad) { atomicAdd(&stats[0], bad); atomicMin(&stats[1], first); }
        if (finite) { atomicAdd(&stats[4], finite); atomicMax(&stats[2], (unsigned long long)__double_as_longlong(worst)); }
        atomicMax(&stats[3], (unsigned long long)__double_as_longlong(top));
    }
}
#define DRILL_COMPARE(NAME, G, R) \
    extern "C" __global__ void NAME(const G* got, const R* ref, long long n, long long dim1, long long s0, \
                                    long long s1, double rtol, double atol, int exact, unsigned long long* s) \
    { drill_compare(got, ref, n, dim1, s0, s1, rtol, atol, exact, s); }
DRILL_COMPARE(drill_compare_f32_f64, float, double)
DRILL_COMPARE(drill_compare_f64_f64, double, double)
"""
)

THREADS = 256
OPS_FILE = "drill_ops.cu"  # the name drill's own module is built under (and awaited by, when built ahead)


def build_ahead(arch: str) -> None:
    """Build the base module now, in the calling thread (NVRTC lets go of the GIL): a new judge does it while
    CuPy imports, so the first check finds it built instead of paying for it (about 0.4 s on an H200 host)."""
    ahead = nvrtc.reserve(BASE_SOURCE, OPS_FILE, arch=arch)
    if ahead is not None:
        ahead.run()


NAMES = {np.dtype(np.float32): "f32", np.dtype(np.float64): "f64"}


class Stats(NamedTuple):
    """What a comparison found: elements wrong, the first wrong flat index (-1: none), the largest finite
    |got - ref| (inf when none is finite) and the largest tolerance."""

    bad: int
    first: int
    max_error: float
    max_tolerance: float


def array_stats(
    xp: ArrayModule, got64: DeviceArray, ref64: DeviceArray, rtol: float, atol: float, exact: bool
) -> Stats:
    """The comparison with array operations (NumPy on the host; the fallback on the device): both flat float64."""
    diff = xp.abs(got64 - ref64)
    tol = xp.zeros_like(ref64) if exact else atol + rtol * xp.abs(ref64)
    bad = ~(got64 == ref64) if exact else ~(diff <= tol)
    finite = diff[xp.isfinite(diff)]
    count = int(bad.sum())
    if tol.size:
        tolerance = float(tol.max())
    elif exact:
        tolerance = 0.0
    else:
        tolerance = atol
    return Stats(
        count,
        int(xp.flatnonzero(bad)[0]) if count else -1,
        float(finite.max()) if finite.size else float("inf"),
        tolerance,
    )


class RawOps:
    """The module above, loaded through CuPy on the current device and stream (kernels fetched when first used)."""

    def __init__(self, cupy: ArrayModule, sm_count: int) -> None:
        self.cp = cupy
        self.blocks = 4 * sm_count
        self._modules: dict[str, RawModule] = {}
        self._functions: dict[str, RawKernel] = {}

    def _fn(self, name: str) -> RawKernel:
        if name not in self._functions:
            source = COMPARE_SOURCE if name.startswith("drill_compare") else BASE_SOURCE
            if source not in self._modules:
                self._modules[source] = self._load(source)
            self._functions[name] = self._modules[source].get_function(name)
        return self._functions[name]

    def _load(self, source: str) -> RawModule:
        """The base module as built by drill's NVRTC (a new judge starts it while CuPy imports: see
        `build_ahead`), loaded into CuPy; the comparisons, and the base where NVRTC's build is not to be had,
        through CuPy's compiler, which keeps its builds on disk."""
        from drill.judge.inbox import device_arch

        if source != BASE_SOURCE:
            return self.cp.RawModule(code=source)
        try:
            built = nvrtc.compile_cuda(source, OPS_FILE, arch=device_arch())
        except nvrtc.NvrtcUnavailable:
            built = None
        if built is None or not built.ok:
            return self.cp.RawModule(code=source)
        module = self.cp.cuda.function.Module()
        module.load(built.cubin)
        return module

    def _grid(self, n: int) -> tuple[int]:
        return (max(1, min(self.blocks, -(-n // THREADS))),)

    @staticmethod
    def _flat(a: DeviceArray) -> bool:
        return bool(a.flags.c_contiguous) and a.dtype in NAMES

    def normal(self, out: DeviceArray, seed: int, scale: float, shift: float, whole: bool) -> bool:
        """Fill float32 `out` (contiguous) with normal values; False when `out` is not such an array."""
        if not (out.flags.c_contiguous and out.dtype == np.float32):
            return False
        n = int(out.size)
        args = (out, np.int64(n), np.uint64(seed), np.float32(scale), np.float32(shift), np.int32(whole))
        self._fn("drill_normal")(self._grid(n), (THREADS,), args)
        return True

    def fill(self, a: DeviceArray, value: float) -> bool:
        if not self._flat(a):
            return False
        if a.size:
            kind = NAMES[a.dtype]
            typed = np.float32(value) if kind == "f32" else np.float64(value)
            self._fn(f"drill_fill_{kind}")(self._grid(a.size), (THREADS,), (a, np.int64(a.size), typed))
        return True

    def to_f64(self, a: DeviceArray) -> DeviceArray | None:
        """A float64 copy of contiguous float32 or float64 `a`; None for anything else."""
        if not self._flat(a):
            return None
        out = self.cp.empty(a.shape, dtype=np.float64)
        if a.dtype == np.float64:
            out.data.copy_from_device_async(a.data, a.nbytes)
        elif a.size:
            self._fn("drill_to_f64")(self._grid(a.size), (THREADS,), (a, out, np.int64(a.size)))
        return out

    def sum64(self, a: DeviceArray, square: bool = False) -> float | None:
        """The sum of `a` (or of its squares), accumulated in float64; None when `a` is not a contiguous float array."""
        if not self._flat(a):
            return None
        if not a.size:
            return 0.0
        grid = self._grid(a.size)
        partials = self.cp.empty(grid[0], dtype=np.float64)
        args = (a, np.int64(a.size), np.int32(square), partials)
        self._fn(f"drill_sum_{NAMES[a.dtype]}")(grid, (THREADS,), args)
        return math.fsum(self.cp.asnumpy(partials).tolist())

    def compare(self, got: DeviceArray, ref: DeviceArray, rtol: float, atol: float, exact: bool) -> Stats | None:
        """The comparison of array_stats, on the device; None when the arrays are not ones it takes."""
        if not self._flat(got) or ref.dtype not in NAMES or ref.ndim > 2 or got.size != ref.size:
            return None
        if ref.dtype != np.float64:
            ref64 = self.to_f64(ref)  # a float32 reference (rare): a float64 copy, when it is contiguous
            if ref64 is None:
                return None
            ref = ref64
        n = int(got.size)
        item = ref.dtype.itemsize
        # the reference's layout in elements: a row's length and the two strides (a 1-D array is one row)
        if ref.ndim == 2:
            dim1 = ref.shape[1]
            s0 = ref.strides[0] // item
            s1 = ref.strides[1] // item
        else:
            dim1 = max(n, 1)
            s0 = 0
            s1 = ref.strides[0] // item if ref.ndim else 0
        stats = self.cp.asarray(np.array([0, 2**64 - 1, 0, 0, 0], dtype=np.uint64))  # a copy, no CuPy kernel
        name = f"drill_compare_{NAMES[got.dtype]}_f64"
        args = (got, ref, np.int64(n), np.int64(dim1), np.int64(s0), np.int64(s1))
        self._fn(name)(self._grid(n), (THREADS,), (*args, np.float64(rtol), np.float64(atol), np.int32(exact), stats))
        bad, first, worst, top, finite = (int(v) for v in self.cp.asnumpy(stats))
        return Stats(
            bad,
            first if bad else -1,
            float(np.uint64(worst).view(np.float64)) if finite else float("inf"),
            float(np.uint64(top).view(np.float64)),
        )

    def read(self, a: DeviceArray, out: DeviceArray) -> None:
        """Read all of float32 `a` (a multiple of 4 elements) and keep none of it: an L2 flush."""
        self._fn("read_stream")(self._grid(a.size // 4), (512,), (a, out, np.int64(a.size // 4)))

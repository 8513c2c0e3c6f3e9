"""Timing inside the judge child: the GPU's time for one launch, with the host kept out of it.

Imported only by the judge child. The timing works through the kit it is given (drill.judge.torch_kit with
torch, drill.judge.cupy_kit with CuPy): its events, spin kernel, stream and synchronize. The ceilings
at the end are measured with torch.

How a launch is timed (`measure`):
1. one untimed launch at the size (a Triton kernel may compile for a new shape);
2. one launch timed alone, the GPU held back by a spin while the host issues
   it (so the figure has no host time in it), to choose the method and the
   number of repetitions (a launch slower than SLOW_MS is timed this once: one
   launch says enough);
3. the repetitions. Before each: `prepare`, the outputs poisoned, L2 flushed
   (read, not written). The figure is the median over the repetitions of the
   GPU time of the launch alone. How long the host took to issue each launch
   is kept apart, as the host launch overhead.

A pair of CUDA events around a launch also counts the GPU's own launch latency,
about 3 µs on an H100: noise for a long kernel, a quarter of a 12 µs one. So a
launch shorter than EXACT_BELOW_MS is timed from the kernels' own start and end
stamps (CUPTI's activity records, `cupti`: the clock Nsight Compute reads), summed
over the GPU work (kernels, memsets, copies, on any stream) recorded inside the
launch's range on the GPU, and each such launch starts on an idle GPU (the host
waits for the flush to finish before it launches), as under Nsight Compute.
A longer launch is timed with the event pair, the repetitions queued while a
short spin kernel holds the GPU back, so the GPU never waits for Python
between them. The pair's own cost on this GPU (an empty kernel timed both
ways, `event_overhead`, measured once and kept with the ceilings) is taken off
each such figure, so both methods read the kernel's time.

The learner's launches are timed under a stream audit (`cupti.StreamAudit`):
the GPU's work on any stream but the judge's, or asked for from any thread but
the judge's, is named, and the figure is not scored, since neither method
would count work that ends after the launch does.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from drill.judge import cupti
from drill.judge.evidence import Work
from drill.judge.profiled import enough_launches, profiler_times

if TYPE_CHECKING:
    import torch

    from drill.judge.timed import Calibration, CeilingKit, MatmulKit, TimedKit


SLOW_MS = 40.0
# Under this, the event pair's own latency (1-3 µs) would be more than about 2 % of the figure. Above it
# events agree with Nsight Compute within 2 % and need no wait for the GPU between repetitions.
EXACT_BELOW_MS = 0.1
SLEEP_CAP_S = 0.25  # the longest the GPU is held back while the host queues the repetitions
ASSUMED_CLOCK_HZ = 2.5e9  # converts the hold to spin cycles; a slower clock only holds longer
ESTIMATE_HOLD_CYCLES = int(2e-3 * ASSUMED_CLOCK_HZ)  # 2 ms: longer than the host takes to issue a launch


@dataclass
class Measured:
    ms: float  # median GPU time of one launch (see `method`), L2 flushed before each
    reps: int
    host_us: float  # median time the host took to issue one launch (not part of `ms`)
    times: list[float] = field(default_factory=list)
    hold_s: float = 0.0  # how long the GPU was held back while the repetitions were queued
    # "records": the kernels' own start and end stamps; "events": a CUDA event pair around each launch
    # (less the pair's own cost, `less_us`). `why` says why a short launch fell back to events.
    method: str = "events"
    why: str = ""
    less_us: float = 0.0  # the event pair's own cost on this GPU, taken off each event-timed figure
    # with `audit`: in words, GPU work the launch put on another stream or started from another thread
    stray_work: str = ""
    # with `audit`: per call of `fn` (the untimed ones too), the GPU work it asked for (drill.judge.evidence)
    calls: list[list[Work]] | None = None


@dataclass(frozen=True)
class _Options:
    """How `measure` times: poison the outputs first, the time to spend, the repetitions, the slow threshold."""

    poison: bool
    budget_s: float
    min_reps: int
    max_reps: int
    slow_ms: float


def less_overhead(times_ms: list[float], overhead_ms: float) -> list[float]:
    """Event-pair figures less the pair's own cost; never below half the figure read (a bad calibration
    cannot make a launch look free)."""
    return [max(t - overhead_ms, t / 2) for t in times_ms]


def measure(
    kit: TimedKit,
    fn: Callable[[], object],
    prepare: Callable[[], object] | None = None,
    *,
    audit: bool = False,
    poison: bool = True,
    budget_s: float = 0.2,
    min_reps: int = 5,
    max_reps: int = 100,
    slow_ms: float = SLOW_MS,
) -> Measured:
    """Median GPU milliseconds of `fn`; after it returns, the outputs hold what the last timed launch wrote.

    `audit`: record everything the GPU does meanwhile (CUPTI, where it loads) and
    name in `stray_work` any work on another stream or from another thread, which the figure would miss.
    """
    session = _stream_audit(kit) if audit else None
    options = _Options(poison, budget_s, min_reps, max_reps, slow_ms)
    if session is None:
        return _measure(kit, fn, prepare, options)
    try:
        found = _measure(kit, fn, prepare, options, calls=session)
    except BaseException:
        try:
            session.finish(kit.synchronize)
        except Exception:  # the launch's own error is the one to report
            pass
        raise
    found.stray_work = session.finish(kit.synchronize)
    found.calls = session.calls()
    return found


def _measure(
    kit: TimedKit,
    fn: Callable[[], object],
    prepare: Callable[[], object] | None,
    options: _Options,
    *,
    calls: cupti.StreamAudit | None = None,
) -> Measured:
    poison = options.poison
    budget_s = options.budget_s
    min_reps = options.min_reps
    max_reps = options.max_reps
    slow_ms = options.slow_ms
    """`calls`: its `enter` and `leave` bracket every call of `fn` with its event pair, on the host only and outside
    the host's timing of the launch and the pair (CUPTI's clock read twice; the event records queue no work)."""
    enter = calls.enter if calls is not None else _nothing
    leave = calls.leave if calls is not None else _nothing

    def setup() -> None:
        if prepare is not None:
            prepare()
        if poison:
            kit.poison_outputs()
        kit.flush_l2()

    def timed_once(held: bool = False) -> tuple[float, float, float]:
        """(GPU ms, host seconds for fn, host seconds for the whole repetition).

        `held`: the GPU spins first, so the pair times the launch alone and not
        the host's time to issue it (a Triton launch can take 0.1 ms of Python).
        """
        t0 = time.perf_counter()
        setup()
        start = kit.event()
        end = kit.event()
        if held:
            kit.spin(ESTIMATE_HOLD_CYCLES)
        enter()
        start.record()
        t1 = time.perf_counter()
        fn()
        t2 = time.perf_counter()
        end.record()
        leave()
        t3 = time.perf_counter()
        end.synchronize()
        return start.elapsed_time(end), t2 - t1, t3 - t0

    overhead_ms = float(getattr(kit, "event_overhead_ms", 0.0))

    def by_events(times: list[float], reps: int, host_us: float, hold_s: float = 0.0, why: str = "") -> Measured:
        net = less_overhead(times, overhead_ms)
        return Measured(statistics.median(net), reps, host_us, net, hold_s, why=why, less_us=overhead_ms * 1e3)

    first_ms, first_host, _ = timed_once()
    if first_ms >= slow_ms and first_host * 1e3 < 0.25 * first_ms:
        return by_events([first_ms], 1, first_host * 1e6)  # slow on the GPU, no stall on the host
    why = ""
    # warm now; this figure chooses the method and the repetitions, so it leaves the host out
    est_ms, host_s, rep_s = timed_once(held=True)
    if est_ms >= slow_ms:
        return by_events([est_ms], 1, host_s * 1e6)
    gpu_rep_ms = est_ms + kit.flush_ms()
    reps = int(min(max_reps, max(min_reps, budget_s * 1e3 / max(gpu_rep_ms, 1e-3))))
    if est_ms < EXACT_BELOW_MS:

        def bracketed() -> None:  # timed by the kernels' own stamps: the host's time is not in the figure
            enter()
            fn()
            leave()

        times, whole, why = _kernel_times(kit, bracketed if calls is not None else fn, setup, reps)
        # From the CPU side only, and far below the event pair's figure (which also holds the host's launch
        # time): kernels CUPTI could not tie to the launch. Trust the events then.
        if times is not None and (whole or statistics.median(times) >= 0.5 * est_ms):
            # the host figure comes from the plain launch above: recording slows the host
            return Measured(statistics.median(times), reps, host_s * 1e6, times, method="records")
    hold_s = min(SLEEP_CAP_S, reps * max(0.0, rep_s - gpu_rep_ms * 1e-3) * 1.5 + 5e-4)
    times, hosts = _event_times(kit, fn, setup, reps, hold_s, enter, leave)
    return by_events(times, reps, statistics.median(hosts) * 1e6, hold_s, why)


def _event_times(
    kit: TimedKit,
    fn: Callable[[], object],
    setup: Callable[[], None],
    reps: int,
    hold_s: float,
    enter: Callable[[], None] | None = None,
    leave: Callable[[], None] | None = None,
) -> tuple[list[float], list[float]]:
    """Per repetition, the event pair's milliseconds, all queued behind a spin of `hold_s`; and the host's
    seconds to issue each launch. `enter` and `leave` bracket each call, outside the host's timing of it."""
    enter = enter or _nothing
    leave = leave or _nothing
    starts = [kit.event() for _ in range(reps)]
    ends = [kit.event() for _ in range(reps)]
    hosts = []
    kit.spin(int(hold_s * ASSUMED_CLOCK_HZ))
    for s, e in zip(starts, ends):
        setup()
        enter()
        s.record()
        t = time.perf_counter()
        fn()
        hosts.append(time.perf_counter() - t)
        e.record()
        leave()
    kit.synchronize()
    return [s.elapsed_time(e) for s, e in zip(starts, ends)], hosts


def _nothing() -> None:
    pass


MAX_EVENT_OVERHEAD_MS = 0.01  # more than 10 µs would be a broken reading, not the pair's cost


def event_overhead(kit: TimedKit, reps: int = 50) -> Calibration:
    """What a CUDA event pair adds to a launch on this GPU, in µs: an empty kernel timed as `measure` times
    a long launch (queued, L2 flushed before each) less the same kernel's own time stamps (CUPTI).

    The pair also counts the GPU's work to start the kernel after the first event; an empty kernel is
    nothing else. 0 when CUPTI gives no records here (then nothing is taken off).
    """

    def empty() -> None:
        kit.spin(0)

    def setup() -> None:
        kit.flush_l2()

    empty()
    kit.synchronize()
    events, _ = _event_times(kit, empty, setup, reps, 5e-3 + reps * 1e-4)  # the host queues all of them first
    records, whole, why = _kernel_times(kit, empty, setup, reps)
    result: Calibration = {"event_us": 0.0, "event_pair_us": statistics.median(events) * 1e3}
    if records is None or not whole:
        result["event_us_why"] = f"no kernel records from CUPTI ({why or 'none'}): nothing taken off"
        return result
    overhead = statistics.median(events) - statistics.median(records)
    result["event_record_us"] = statistics.median(records) * 1e3
    result["event_us"] = min(MAX_EVENT_OVERHEAD_MS, max(0.0, overhead)) * 1e3
    return result


def _kernel_times(
    kit: TimedKit, fn: Callable[[], object], setup: Callable[[], None], reps: int, tries: int = 2
) -> tuple[list[float] | None, bool, str]:
    """Per repetition, the summed GPU time (ms) of the work `fn` launched, from its own time stamps.

    With True when every launch's work was found on the GPU (all of it is in
    the figure); False when only the kernels CUPTI tied to the CPU side were;
    and, when the launches fell short, what came back, in words.

    The host waits until the GPU is idle (flush done) before each launch. CUPTI
    is read directly (`cupti`); torch.profiler, whose first session takes
    seconds to start, only where that cannot load (and torch is the kit's). A profiler session without
    the GPU ranges is tried again, up to `tries` sessions in all.
    None when no kernel time was seen (no CUPTI here): the caller falls back to events.
    """
    from drill.judge import cudadrv

    recorder, why_not = cupti.recorder()
    if recorder is not None:
        try:
            found = recorder.launch_times(fn, setup, reps, kit.synchronize, _marker(kit))
        except (cupti.CuptiError, cudadrv.CUDADriverError) as exc:
            why_not = str(exc)
        else:
            times = [t for t in found if t is not None]
            if enough_launches(len(times), reps):
                return times, True, ""
            return None, False, f"of {reps} launches CUPTI recorded GPU work for {len(times)}"
    if getattr(kit, "torch", None) is None:
        return None, False, why_not  # no profiler without torch: the caller times with events
    return profiler_times(fn, setup, reps, tries, why_not)


def _marker(kit: TimedKit) -> Callable[[int], None]:
    """`mark(value)`: a memset of cupti.MARK_BYTES bytes to `value`, queued on the kit's stream."""
    from drill.judge import cudadrv

    address = kit.device_bytes(cupti.MARK_BYTES)
    stream = kit.stream_handle()

    def mark(value: int) -> None:
        cudadrv.memset_d8_async(address, value, cupti.MARK_BYTES, stream)

    return mark


def _stream_audit(kit: TimedKit) -> cupti.StreamAudit | None:
    """A stream audit begun now; None where CUPTI cannot record here."""
    from drill.judge import cudadrv

    recorder, _ = cupti.recorder()
    if recorder is None:
        return None
    try:
        return cupti.StreamAudit(recorder, _marker(kit))
    except (cupti.CuptiError, cudadrv.CUDADriverError):
        return None


# -- the ceilings, measured once per GPU ---------------------------------------------------------
READ_SOURCE = r"""
extern "C" __global__ void __launch_bounds__(512)
read_stream(const float4* __restrict__ x, float* __restrict__ out, long long n4)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const long long stride = (long long)gridDim.x * blockDim.x;
    float a = 0.f, b = 0.f, c = 0.f, d = 0.f;
    for (; i + 3 * stride < n4; i += 4 * stride) {
        float4 p = x[i], q = x[i + stride], r = x[i + 2 * stride], s = x[i + 3 * stride];
        a += p.x + p.y + p.z + p.w;
        b += q.x + q.y + q.z + q.w;
        c += r.x + r.y + r.z + r.w;
        d += s.x + s.y + s.z + s.w;
    }
    for (; i < n4; i += stride) {
        float4 p = x[i];
        a += p.x + p.y + p.z + p.w;
    }
    const float v = (a + b) + (c + d);
    if (v == 1234.5f)   // keeps every load alive; random data practically never lands here
        out[0] = v;
}
"""


def measure_copy_gbps(kit: CeilingKit, n_bytes: int = 2**30, reps: int = 20) -> Calibration:
    """This GPU's device-to-device copy bandwidth, counting bytes read plus bytes written (a plain device-to-device
    copy: torch's copy_ and CuPy's memcpy are the same cudaMemcpyAsync)."""
    n = n_bytes // 4
    m = measure(kit, kit.copy_work(n), poison=False, min_reps=reps, max_reps=reps)
    return {"gbps": 2 * n * 4 / (m.ms * 1e-3) / 1e9, "ms": m.ms, "bytes": 2 * n * 4, "reps": m.reps}


def measure_read_gbps(kit: CeilingKit, arch: str, n_bytes: int = 2**30, reps: int = 15) -> Calibration:
    """The fastest pure read of `n_bytes` seen: the kit's own sum and a float4 streaming kernel at a few grid sizes.

    Reading alone can beat the copy figure (no turnarounds between reads and
    writes), so this is the ceiling a read-only card is held against.
    """
    from drill.judge import cudadrv
    from drill.kernel_shared import nvrtc

    n = n_bytes // 4
    work = kit.read_work(n)
    read = measure(kit, work.read_all, poison=False, min_reps=reps, max_reps=reps)
    best_gbps = n_bytes / (read.ms * 1e-3) / 1e9
    best_by = f"{kit.name}'s read_all"
    compiled = nvrtc.compile_cuda(READ_SOURCE, "read_stream.cu", arch=arch)
    if compiled.ok:
        fn = cudadrv.Module(compiled.cubin).get_function("read_stream")
        args = work.kernel_args
        stream = kit.stream_handle()
        for per_sm in (2, 4):
            grid = (per_sm * kit.sm_count,)

            def run(grid: tuple[int] = grid) -> None:
                fn.launch(grid, (512,), args, 0, stream)

            m = measure(kit, run, poison=False, min_reps=reps, max_reps=reps)
            gbps = n_bytes / (m.ms * 1e-3) / 1e9
            if gbps > best_gbps:
                best_gbps = gbps
                best_by = f"float4 stream, {per_sm} blocks of 512 per SM"
    return {"read_gbps": best_gbps, "read_by": best_by}


def measure_matmul_tflops(kit: MatmulKit, sizes: tuple[int, ...] = (4096, 8192), reps: int = 10) -> Calibration:
    """This GPU's matmul ceiling: the fastest torch.matmul seen, bfloat16 and float16, square sizes.

    The figure compute-bound cards are scored against, and the bound above
    which a FLOP count over a time is not a measurement.
    """
    import torch

    best = 0.0
    best_by = ""
    for dtype in (torch.bfloat16, torch.float16):
        for n in sizes:
            a = torch.randn(n, n, device=kit.device, dtype=dtype, generator=kit.generator)
            b = torch.randn(n, n, device=kit.device, dtype=dtype, generator=kit.generator)
            c = torch.empty(n, n, device=kit.device, dtype=dtype)

            def mm(a: torch.Tensor = a, b: torch.Tensor = b, c: torch.Tensor = c) -> None:
                torch.mm(a, b, out=c)

            m = measure(kit, mm, poison=False, min_reps=reps, max_reps=reps)
            tflops = 2 * n**3 / (m.ms * 1e-3) / 1e12
            if tflops > best:
                best = tflops
                best_by = f"torch.matmul {n}x{n}x{n} {str(dtype).removeprefix('torch.')}"
            del a, b, c
    return {"tflops": best, "tflops_by": best_by}


def measure_fp8_tflops(kit: MatmulKit, sizes: tuple[int, ...] = (4096, 8192), reps: int = 10) -> Calibration:
    """This GPU's FP8 matmul ceiling: the fastest torch._scaled_mm seen, float8_e4m3fn operands with one float32
    scale per row of each (row-wise scaling, cuBLAS's fastest scaled FP8 GEMM), bfloat16 out, square sizes.

    The figure FP8 cards are scored against: a bf16 matmul's ceiling is half of what FP8 tensor cores
    do. {} on a GPU (or a torch) without FP8 matmuls: nothing to score against there.
    """
    import torch

    best = 0.0
    best_by = ""
    for n in sizes:
        a = torch.randn(n, n, device=kit.device, generator=kit.generator).to(torch.float8_e4m3fn)
        b = torch.randn(n, n, device=kit.device, generator=kit.generator).to(torch.float8_e4m3fn)
        scale_a = torch.ones(n, 1, device=kit.device)
        scale_b = torch.ones(1, n, device=kit.device)

        def mm(
            a: torch.Tensor = a, b: torch.Tensor = b, sa: torch.Tensor = scale_a, sb: torch.Tensor = scale_b
        ) -> None:
            torch._scaled_mm(a, b.t(), scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16)

        try:
            m = measure(kit, mm, poison=False, min_reps=reps, max_reps=reps)
        except RuntimeError:  # no FP8 tensor cores here (before Ada and Hopper), or a torch without row-wise scales
            return {}
        tflops = 2 * n**3 / (m.ms * 1e-3) / 1e12
        if tflops > best:
            best = tflops
            best_by = f"torch._scaled_mm {n}x{n}x{n} float8_e4m3fn, row-wise scales, bfloat16 out"
        del a, b, scale_a, scale_b
    return {"fp8_tflops": best, "fp8_tflops_by": best_by}

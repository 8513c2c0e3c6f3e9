"""One judge run inside the child: build the learner's file, check every case twice, time it."""

from __future__ import annotations

import itertools
import sys
import time
import types
from pathlib import Path
from typing import TYPE_CHECKING, cast

from drill.judge.calibration import compute_ceiling
from drill.judge.evidence import Allowance, Seen, learner_kernel_names, parse_allowed
from drill.judge.evidence_gpu import GpuWatch, sort_calls
from drill.judge.harness import Case, CollectiveHarness, Inputs, KernelHarness, KernelKit
from drill.judge.kitbase import Check, Launch
from drill.judge.programs import BuildError, CudaProgram, TritonProgram, build_cuda, build_triton, learner_line
from drill.judge.source_only import deck_imports, load_file
from drill.judge.tamper import Fingerprint, tampered_words
from drill.judge.timing_event import laps, timing_event
from drill.kernel_shared.launch import LaunchError
from drill.kernel_shared.nvrtc import NvrtcUnavailable
from drill.kernel_shared.protocol import Emit, Job
from drill.kernel_shared.trusted_source import NotTrusted, Pins

if TYPE_CHECKING:
    from drill.judge.evidence_cpu import CpuWatch
    from drill.judge.measure import Measured
    from drill.judge.runtime import Runtime
    from drill.kernel_shared.nvrtc import CompilerMessage, KernelResources

LearnerProgram = CudaProgram | TritonProgram

_harness_ids = itertools.count(1)


class Fatal(Exception):
    """The CUDA context is broken: report, then the child exits and is replaced."""


def load_harness(path: str, pinned: Pins | None = None) -> types.ModuleType:
    """Load a card's harness afresh (so edits to it count), from its source text: a deck's harness only as trusted."""
    return load_file(f"drill_harness_{next(_harness_ids)}", Path(path), pinned or Pins())


def first_line(text: str) -> str:
    lines = [ln.strip() for ln in str(text).strip().splitlines() if ln.strip()]
    return lines[0] if lines else ""


def describe_fault(exc: BaseException) -> tuple[str, str]:
    """(kind, words) for an exception raised while the learner's kernel ran.

    kind: oom | cuda (the GPU reported an error) | launch (the GPU refused the
    launch) | compile (Triton could not compile) | runtime (anything else).
    """
    name = type(exc).__name__
    text = first_line(str(exc))
    lower = f"{name} {exc}".lower()
    if "out of memory" in lower or "outofmemory" in lower:
        short = ". ".join(text.split(". ")[:2]).rstrip(".")  # torch adds a paragraph of allocator advice
        return "oom", f"out of GPU memory ({short})"
    if hasattr(exc, "error_message") and hasattr(exc, "src"):  # triton.compiler.errors.CompilationError
        detail = first_line(str(exc.error_message or "")) or text
        return "compile", f"Triton could not compile the kernel: {detail}"
    gpu_error = name in ("CUDARuntimeError", "CUDADriverError", "AcceleratorError") or text.startswith(
        ("CUDA error", "CUDA_ERROR")
    )
    if not gpu_error:
        return "runtime", f"{name}: {text}"
    if "illegal memory access" in lower or "illegal_address" in lower:
        return (
            "cuda",
            f"CUDA said: an illegal memory access was encountered (a read or write outside any allocation) [{text}]",
        )
    if "misaligned" in lower:
        return (
            "cuda",
            f"CUDA said: misaligned address (a vector access at an address not a multiple of its size) [{text}]",
        )
    if "launch_out_of_resources" in lower or "too many resources" in lower:
        return (
            "launch",
            f"CUDA refused the launch: too many resources requested (registers x threads per block) [{text}]",
        )
    if "invalid_value" in lower or "invalid argument" in lower or "invalid configuration" in lower:
        return "launch", f"CUDA refused the launch: invalid launch configuration or argument [{text}]"
    if "launch failure" in lower or "launch_failed" in lower:
        return "cuda", f"CUDA said: unspecified launch failure (the kernel crashed) [{text}]"
    return "cuda", f"CUDA said: {text}"


CALIBRATING = "measuring this GPU once (its copy, read and matmul ceilings, the event pair's cost)"


class Judge:
    """Runs requests for one child process; keeps the GPU warm and caches PyTorch baseline timings."""

    def __init__(self, runtime: Runtime) -> None:
        self.rt = runtime
        self.watch: Fingerprint | None = None  # the judge's code as it was before the learner's Python ran
        self.baseline_ms: dict[tuple[str, str], tuple[float, float]] = {}  # (ms, host µs) of PyTorch's way

    def run(self, job: Job, source: str, timing: str, emit: Emit) -> None:
        """Judge one request; always ends with `finished`. Raises Fatal after reporting a broken CUDA context,
        or a learner's file that changed the judge's own code."""
        start = time.perf_counter()
        self.watch = None
        try:
            try:
                with deck_imports(Pins.from_job(job)):
                    self._run(job, source, timing, emit)
            finally:
                try:
                    self.check_untouched(emit)  # whatever ended the run: a changed judge must not judge again
                finally:
                    self.watch = None
        finally:
            emit({"event": "finished", "seconds": time.perf_counter() - start, "torch": "torch" in sys.modules})
        self.rt.release_memory()  # the last case's buffers, once the verdict is out (not after a Fatal)

    def check_untouched(self, emit: Emit) -> None:
        """After the learner's Python ran: if it changed what judges it, say so and raise Fatal."""
        changed = self.watch.changed() if self.watch is not None else []
        if changed:
            self.watch = None  # reported once
            words = tampered_words(changed)
            emit({"event": "error", "kind": "tampered", "fatal": True, "message": words})
            raise Fatal(words)

    def _run(self, job: Job, source: str, timing: str, emit: Emit) -> None:
        rt = self.rt
        card = str(job.get("card", "?"))
        language = job.get("language")
        filename = str(job.get("filename") or ("kernel.cu" if language == "cuda" else "kernel.py"))
        device = rt.device_words
        if language == "collective":  # its ranks run elsewhere than the judge: say where
            from drill.judge.collective.run import device_words

            device = device_words(rt)
        emit({"event": "started", "card": card, "device": device, "gpu": rt.gpu})
        try:
            module = load_harness(str(job["harness"]), Pins.from_job(job))
        except NotTrusted as exc:
            emit(
                {
                    "event": "error",
                    "kind": "harness",
                    "fatal": False,
                    "message": f"the card's harness was not run: {exc}",
                }
            )
            return
        except Exception as exc:
            emit(
                {
                    "event": "error",
                    "kind": "harness",
                    "fatal": False,
                    "message": f"the card's harness failed to load: {type(exc).__name__}: {exc}",
                }
            )
            return
        entry = tuple(getattr(module, "ENTRY", ()))
        harness = cast(KernelHarness, module)
        program: LearnerProgram

        if language == "cuda":
            try:
                program = build_cuda(
                    source,
                    filename,
                    entry=entry,
                    launch_keys=tuple(getattr(module, "LAUNCH_KEYS", ())) or None,
                    arch=rt.arch,
                    load=rt.gpu,
                    workdir=rt.workdir,
                )
            except BuildError as exc:
                self._compiled(
                    emit, False, exc.log, exc.messages, [], getattr(getattr(exc, "result", None), "seconds", None)
                )
                return
            except NvrtcUnavailable as exc:  # nothing to compile with: not the learner's fault
                emit({"event": "compiled", "ok": None, "log": "", "messages": [], "resources": []})
                emit({"event": "note", "text": f"compiling, correctness and speed: {exc}"})
                return
            except Exception as exc:  # the module failed to load on the GPU
                words = describe_fault(exc)[1]
                emit({"event": "compiled", "ok": False, "log": "", "messages": [], "resources": []})
                emit({"event": "error", "kind": "compile", "fatal": False, "message": words})
                return
            if rt.gpu:
                program.stream = rt.kit("cuda").stream_handle  # ordered with the kit's own work
            self._compiled(
                emit,
                True,
                program.compiled.log,
                program.compiled.messages,
                program.compiled.resources,
                program.compiled.seconds,
            )
            if not rt.gpu:
                emit(
                    {
                        "event": "note",
                        "text": f"correctness and speed: no GPU here, so the CUDA kernel was only compiled (for {rt.arch})",
                    }
                )
                return
        elif language == "triton":
            if not rt.ensure_torch(emit):
                return
            rt.kit("triton")
            import drill.judge.measure  # noqa: F401 - loaded now, so the fingerprint covers it

            if not rt.gpu:
                from drill.judge.evidence_cpu import install_launch_hook

                install_launch_hook()  # before the learner's Python runs, and in the fingerprint

            self.watch = Fingerprint()  # of the judge as it is before any of the learner's Python runs
            t0 = time.perf_counter()
            try:
                program = build_triton(source, filename, entry=entry, workdir=rt.workdir)
            except BuildError as exc:
                self._compiled(emit, False, "", exc.messages, [], None)
                return
            emit(
                {
                    "event": "compiled",
                    "ok": True,
                    "seconds": time.perf_counter() - t0,
                    "log": "",
                    "messages": [],
                    "resources": [],
                }
            )
        elif language == "collective":  # many ranks, each a process of its own (drill.judge.collective.run)
            from drill.judge.collective.run import judge_collective

            judge_collective(rt, job, cast(CollectiveHarness, module), source, timing, emit)
            return
        else:
            emit({"event": "error", "kind": "harness", "fatal": False, "message": f"unknown language {language!r}"})
            return

        kit = rt.kit(language)
        try:
            allowed = parse_allowed(getattr(module, "ALLOWED", None))
        except ValueError as exc:
            emit({"event": "error", "kind": "harness", "fatal": False, "message": f"the card's ALLOWED: {exc}"})
            return
        watch = self._watch(language, program, source, filename, allowed, kit)
        if not self._check_cases(harness, program, kit, emit, filename, watch):
            return
        if not rt.gpu:
            emit(
                {
                    "event": "note",
                    "text": "speed: no GPU here; the Triton interpreter checked correctness on small shapes only",
                }
            )
        elif timing != "none":
            gpu_watch = watch if isinstance(watch, GpuWatch) else None
            self._time(card, harness, program, kit, emit, timing, bool(job.get("fresh_baseline")), gpu_watch)

    def _watch(
        self,
        language: str,
        program: LearnerProgram,
        source: str,
        filename: str,
        allowed: tuple[Allowance, ...],
        kit: KernelKit,
    ) -> CpuWatch | GpuWatch:
        """What watches the learner's calls: the ATen ops and Triton launches under the interpreter on a CPU,
        the GPU's activity records on a GPU (a CUDA file's kernels are those of its module)."""
        if isinstance(program, CudaProgram):  # a CUDA file is watched on a GPU only (elsewhere it is only compiled)
            learner = frozenset(program.kernel_names) | frozenset(r.name for r in nvrtc_kernels(program.compiled.cubin))
            return GpuWatch(learner, allowed, kit.synchronize)
        if not self.rt.gpu:
            from drill.judge.evidence_cpu import CpuWatch

            return CpuWatch(program.path, allowed)
        return GpuWatch(learner_kernel_names(source, str(program.path)), allowed, kit.synchronize)

    @staticmethod
    def _compiled(
        emit: Emit,
        ok: bool,
        log: str,
        messages: list[CompilerMessage],
        resources: list[KernelResources],
        seconds: float | None,
    ) -> None:
        emit(
            {
                "event": "compiled",
                "ok": ok,
                "seconds": seconds,
                "log": log,
                "messages": [m.to_json() for m in messages],
                "resources": [r.to_json() for r in resources],
            }
        )

    def _fault(self, exc: BaseException, case: str, program: LearnerProgram, emit: Emit) -> bool:
        """Report an exception from the learner's code; True when the run must stop."""
        kind, words = describe_fault(exc)
        if isinstance(exc, LaunchError):
            kind = "launch"
            words = str(exc)
        path = getattr(program, "path", None)
        if path is not None and kind in ("runtime", "compile"):
            line = learner_line(exc, path)
            if line:
                words = f"line {line}: {words}"
        fatal = kind in ("cuda", "launch") and not self.rt.context_healthy()
        if kind == "oom":
            self.rt.release_memory()
        emit({"event": "error", "kind": kind, "fatal": fatal, "case": case, "message": words})
        if fatal:
            raise Fatal(words)
        return True

    def _check_cases(
        self,
        harness: KernelHarness,
        program: LearnerProgram,
        kit: KernelKit,
        emit: Emit,
        filename: str,
        watch: CpuWatch | GpuWatch,
    ) -> bool:
        """Every case, twice; each call watched (`watch.call`): work that was not the learner's fails the case."""
        seen = Seen(watch.where)
        try:
            return self._check_each(harness, program, kit, emit, watch, seen)
        finally:
            if seen.calls:
                emit(seen.event("check", watch.allowed))

    def _check_each(
        self,
        harness: KernelHarness,
        program: LearnerProgram,
        kit: KernelKit,
        emit: Emit,
        watch: CpuWatch | GpuWatch,
        seen: Seen,
    ) -> bool:
        all_ok = True
        for case in harness.cases(kit):
            name = str(case["name"])
            emit({"event": "case_started", "name": name})
            t0 = time.perf_counter()
            launch: Launch | None = None
            try:
                kit.begin_case()
                inputs = harness.make_inputs(case, kit)
                ref = harness.reference(inputs, kit)
                launch = harness.launcher(program, inputs, kit)
                check = Check(False, "not run")
                for attempt in (1, 2):  # the second run exposes races and leftovers of the first
                    kit.poison_outputs()
                    if hasattr(harness, "poison"):
                        harness.poison(inputs, kit)
                    launch.prepare()
                    ran = watch.call(launch.run)
                    seen.add(ran)
                    kit.synchronize()
                    guard = kit.check_guards()
                    if guard:
                        check = Check(False, guard)
                    else:
                        check = harness.compare(launch.result(), ref, inputs, kit)
                    if check.ok and ran.ok is False:
                        check = Check(False, ran.refusal())
                        break
                    if not check.ok:
                        if attempt == 2:
                            check.message = (
                                "first run right, second run wrong (a race, or state left by the first run?): "
                                + check.message
                            )
                        break
            except Fatal:
                raise
            except Exception as exc:
                self._fault(exc, name, program, emit)
                self.rt.release_memory()
                return False
            finally:
                inputs = ref = launch = None  # free device memory before the next case
            emit(
                {
                    "event": "case",
                    "name": name,
                    "ok": check.ok,
                    "message": check.message,
                    "max_error": check.max_error,
                    "tolerance": check.tolerance,
                    "seconds": time.perf_counter() - t0,
                }
            )
            all_ok = all_ok and check.ok
        self.rt.release_memory()
        return all_ok

    def _time(
        self,
        card: str,
        harness: KernelHarness,
        program: LearnerProgram,
        kit: KernelKit,
        emit: Emit,
        timing: str,
        fresh: bool,
        watch: GpuWatch | None = None,
    ) -> None:
        """Time each timing case, then check what the timed launches wrote against the reference, and that every
        timed call's GPU work was the learner's (`watch`, the run's GpuWatch; None: not watched)."""
        seen = Seen("gpu")
        try:
            self._time_each(card, harness, program, kit, emit, timing, fresh, watch, seen)
        finally:
            if watch is not None and (seen.calls or seen.unseen):
                emit(seen.event("timing", watch.allowed))

    def _time_each(
        self,
        card: str,
        harness: KernelHarness,
        program: LearnerProgram,
        kit: KernelKit,
        emit: Emit,
        timing: str,
        fresh: bool,
        watch: GpuWatch | None,
        seen: Seen,
    ) -> None:
        cases = list(harness.timing_cases(kit))
        if timing == "first":
            cases = cases[:1]
        compute = compute_ceiling(harness)
        if not self.rt.calibrated(compute):  # a second or two, once per GPU: say so
            emit({"event": "case_started", "name": CALIBRATING})
        ceilings = self.rt.ceilings(kit, compute=compute)
        for index, case in enumerate(cases):
            if index:
                self.rt.release_memory()  # the previous case's buffers (the last one's go after the verdict)
            name = str(case["name"])
            emit({"event": "case_started", "name": f"timing {name}"})
            t0 = time.perf_counter()
            phases: dict[str, float] = {}  # seconds per step, for bench/probe_cold.py
            lap = laps(phases)
            launch = None
            try:
                kit.begin_case()
                inputs = harness.make_inputs(case, kit)  # fresh random values: a result cannot be cached
                launch = harness.launcher(program, inputs, kit)
                lap("inputs")
                mine = kit.measure(launch.run, launch.prepare, audit=True)  # work on other streams named
                lap("measure")
                phases["of which the GPU held"] = getattr(mine, "hold_s", 0.0)
                check = self._verify(harness, launch, inputs, kit)  # after the timing: costs no timed time
                ran = timed_work(mine, watch) if watch is not None else Seen("gpu")
                seen.add(ran)
                refused = ran.refusal() if ran.ok is False else ""
                if check.ok and refused:
                    check = Check(False, refused)
                lap("verify")
                self.check_untouched(emit)  # before any figure is sent
                key = (card, name)
                if check.ok and (fresh or key not in self.baseline_ms):
                    base = self._baseline(card, name, harness, case, inputs, kit, fresh)
                    if base is not None:  # None: torch's way is timed after the verdict (Runtime.torch_later)
                        self.baseline_ms[key] = base
                    lap("baseline")
            except Fatal:
                raise
            except Exception as exc:
                self._fault(exc, f"timing {name}", program, emit)
                return
            finally:
                inputs = launch = None
            emit(
                {
                    "event": "case",
                    "name": f"timing {name}",
                    "ok": check.ok,
                    "message": check.message
                    if check.ok or refused
                    else f"wrong at the timed size {name}, though the small cases passed: {check.message}",
                    "max_error": check.max_error,
                    "tolerance": check.tolerance,
                    "seconds": time.perf_counter() - t0,
                    "phases": phases,
                }
            )
            if not check.ok:
                return  # a wrong result is not timed: no figure for it
            timed = timing_event(name, harness, case, mine, self.baseline_ms.get(key), ceilings, kit.l2_bytes)
            timed["kit"] = kit.name
            if key not in self.baseline_ms:
                timed["torch_later"] = True
            emit(timed)

    def _baseline(
        self,
        card: str,
        name: str,
        harness: KernelHarness,
        case: Case,
        inputs: Inputs,
        kit: KernelKit,
        fresh: bool,
    ) -> tuple[float, float] | None:
        """(ms, host µs) of torch's own way at this size: kept for this GPU and torch, else timed now (with torch's
        kit, on the same inputs) and kept. `fresh`: timed now whatever is kept. (So a judge that started without
        torch, `finished`'s "torch" false, can stay without it.) None: not kept, and this judge started without
        torch: it is timed once the verdict is out (drill.judge.runtime.Runtime.torch_later)."""
        saved: tuple[float, float] | None = None if fresh else self.rt.saved_baseline(card, name)
        if saved is not None:
            return saved
        if not fresh and self.rt.torch_later(card, name, harness, case):
            return None
        torch_kit = self.rt.torch_kit()
        base = torch_kit.measure(harness.baseline(kit.to_torch(inputs), torch_kit), poison=False, budget_s=0.1)
        self.rt.save_baseline(card, name, (base.ms, base.host_us))
        return base.ms, base.host_us

    @staticmethod
    def _verify(harness: KernelHarness, launch: Launch, inputs: Inputs, kit: KernelKit) -> Check:
        """What the last timed launch left in the outputs, against the float64 reference at that size."""
        kit.synchronize()
        guard = kit.check_guards()
        if guard:
            return Check(False, guard)
        ref = harness.reference(inputs, kit)
        return harness.compare(launch.result(), ref, inputs, kit)


def timed_work(mine: Measured, watch: GpuWatch) -> Seen:
    """The GPU work of the timed calls (the measurement's record of each call), sorted as `watch` sorts."""
    calls = getattr(mine, "calls", None)
    if calls is None:
        return Seen("gpu", calls=1, unseen=getattr(watch, "why_not", "") or "the timed calls were not recorded")
    return sort_calls(calls, watch.learner, watch.allowed)


def nvrtc_kernels(cubin: bytes) -> list[KernelResources]:
    from drill.kernel_shared.nvrtc import cubin_kernels

    return cubin_kernels(cubin)

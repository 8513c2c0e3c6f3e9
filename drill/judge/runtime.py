"""What the judge process knows about this machine: its GPU, the kits it judges with, its work folder.

It imports torch once and stays warm (triton is imported by the Triton files
that use it; CUDA kernels are loaded and launched through the driver API).
"""

from __future__ import annotations

import gc
import os
import platform
import shutil
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from drill.judge.calibration import Calibrated, installed
from drill.judge.devices import cuda_device_count
from drill.judge.kit_choice import chosen_kit, cupy_installed
from drill.kernel_shared import nvrtc
from drill.kernel_shared.protocol import Emit

if TYPE_CHECKING:
    from types import ModuleType

    from drill.judge.cupy_kit import CupyKit
    from drill.judge.harness import Case, KernelHarness
    from drill.judge.torch_kit import Kit as TorchKit

# torch, triton and numpy, as the README installs them: drill's `kernels` extra (pyproject.toml), from drill's folder
KERNELS_INSTALL = "pip install -e '.[kernels]'"


def _quietly(fn: Callable[[], object]) -> None:
    try:
        fn()
    except Exception:  # torch makes the context itself, and reports what went wrong
        pass


def build_cupy_ops_ahead() -> None:
    """Start building drill's own CUDA module for the CuPy kit (its checks and fills) in a thread: the first case
    needs it, and NVRTC lets go of the GIL while it builds (about 0.3 s on an H200 host), so it goes on beside
    CuPy's import. A build already claimed is left be (drill.kernel_shared.nvrtc.reserve)."""
    import threading

    from drill.judge import cupy_ops  # here, not in the thread: numpy imports once, on this thread
    from drill.judge.inbox import device_arch

    threading.Thread(target=_quietly, args=(lambda: cupy_ops.build_ahead(device_arch()),), daemon=True).start()


WORKDIR_PREFIX = "drill-judge-"


def sweep_workdirs() -> None:
    """Remove the work folders of judges that were killed (their process is gone) before they could."""
    for folder in Path(tempfile.gettempdir()).glob(f"{WORKDIR_PREFIX}*-*"):
        pid = folder.name.removeprefix(WORKDIR_PREFIX).split("-", 1)[0]
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            shutil.rmtree(folder, ignore_errors=True)
        except OSError:  # alive, or someone else's
            pass


@dataclass
class LaterTiming:
    """A timed shape of a card whose torch time is not kept, left for after the verdict (Runtime.torch_later)."""

    card: str
    name: str
    harness: KernelHarness
    case: Case


class Runtime(Calibrated):
    """What the judge knows about this machine; imports the heavy packages once.

    `torch_now`: import torch while starting (the app's judge, warm for any card). A judge whose first request
    is a CUDA run starts without it (`drill kernel run`): with CuPy installed, the CUDA card is judged with
    CuPy's kit, which measures a new GPU's ceilings too, and torch comes only if something needs it
    (drill.judge.cupy_kit). torch's own time for a card, when it is not kept for this GPU yet, is then taken
    after the verdict is sent (`torch_later`, `time_torch_now`): importing torch is most of a cold start.
    """

    def __init__(self, calibration: Path | None, torch_now: bool = True) -> None:
        self.calibration = calibration
        self.gpu = cuda_device_count() > 0
        self._workdir: Path | None = None
        self.arch = os.environ.get("DRILL_CUDA_ARCH", nvrtc.DEFAULT_ARCH)
        self.torch: ModuleType | None = None
        self._kit: TorchKit | None = None
        self._cupy_kit: CupyKit | None = None
        self.cupy_broken = ""  # why CuPy could not be used here, when it could not
        self.device_words = "CPU (no GPU): CUDA kernels are compiled only; Triton runs in its interpreter"
        self.versions: dict[str, str] = {"python": platform.python_version()}
        self.startup: dict[str, float] = {}
        self._ceilings: dict[str, float] | None = None
        self._later: list[LaterTiming] = []
        try:
            self.versions["nvrtc"] = "%d.%d" % nvrtc.version()
        except nvrtc.NvrtcUnavailable:
            self.versions["nvrtc"] = "missing"
        if self.gpu:
            try:
                self._start_gpu(torch_now or not cupy_installed())
            except ImportError as exc:  # a GPU, but not the packages to drive it: judge as on a CPU
                self.gpu = False
                self.device_words = (
                    f"GPU present, but {exc.name or 'torch'} is missing from the judge's Python ({sys.executable}):"
                    " CUDA kernels are compiled only"
                )

    @property
    def workdir(self) -> Path:
        """This judge's folder for the learner's Triton files (see open_workdir)."""
        return self.open_workdir()

    def open_workdir(self) -> Path:
        """Make the folder when the first job arrives (a judge never sent one leaves nothing); removed on quit."""
        if self._workdir is None:
            sweep_workdirs()
            self._workdir = Path(tempfile.mkdtemp(prefix=f"{WORKDIR_PREFIX}{os.getpid()}-"))
        return self._workdir

    def remove_workdir(self) -> None:
        if self._workdir is not None:
            shutil.rmtree(self._workdir, ignore_errors=True)
            self._workdir = None

    def _start_gpu(self, torch_now: bool) -> None:
        import threading

        from drill.judge import cudadrv

        t0 = time.perf_counter()
        # the GPU's context is made while torch (or CuPy) imports: both take a while on a cold start
        context = threading.Thread(target=_quietly, args=(cudadrv.retain_primary_context,), daemon=True)
        context.start()
        # a GPU not measured yet is measured in the first run: its read kernel builds meanwhile
        threading.Thread(target=_quietly, args=(self._build_read_kernel,), daemon=True).start()
        if not torch_now and cupy_installed():
            build_cupy_ops_ahead()  # started already by a judge that expected a CUDA card: then nothing to do
        if not torch_now:
            try:
                self.cupy_kit()
            except Exception as exc:  # CuPy installed but not working here: judge with torch, as without it
                self.cupy_broken = f"{type(exc).__name__}: {exc}"
                traceback.print_exc()
        if self._cupy_kit is None:
            self.torch_kit()
        context.join()
        found = cudadrv.device_identity(0)
        major, minor = cudadrv.compute_capability(0)
        self.arch = f"sm_{major}{minor}"
        self.device_words = f"{found['name']} ({self.arch}, {found['sm_count']} SMs)"
        cupy = getattr(sys.modules.get("cupy"), "__version__", "not loaded")  # its distribution name varies
        self.versions.update(torch=installed("torch"), triton=installed("triton"), cupy=str(cupy))
        self.startup["GPU ready"] = time.perf_counter() - t0

    def _build_read_kernel(self) -> None:
        """Build the calibration's read kernel ahead when this GPU is not measured yet (NVRTC lets go of the GIL)."""
        if self.calibrated():
            return
        from drill.judge.inbox import device_arch
        from drill.judge.measure import READ_SOURCE

        ahead = nvrtc.reserve(READ_SOURCE, "read_stream.cu", arch=device_arch())
        if ahead is not None:
            ahead.run()

    def _import_torch(self) -> None:
        """Import torch (triton is imported by the Triton files that need it: it costs a cold start)."""
        t0 = time.perf_counter()
        import torch

        self.startup["import torch"] = time.perf_counter() - t0
        self.torch = torch
        if self.gpu:
            torch.zeros(1, device="cuda").add_(1)  # torch's side of the context now, not during the first run
        gc.freeze()  # see main (ensure_torch collects first when a run may have left garbage)

    def ensure_torch(self, emit: Emit) -> bool:
        """Import torch and triton (the interpreter on a CPU); say so when they are missing."""
        if self.torch is not None and "triton" in sys.modules:
            return True
        if not self.gpu:
            os.environ.setdefault("TRITON_INTERPRET", "1")
        try:
            if self.torch is None:
                self._import_torch()
            import triton

            _freeze()  # triton too (and torch), after the runs before it
        except ImportError as exc:
            emit({"event": "compiled", "ok": None, "log": "", "messages": [], "resources": []})
            emit(
                {
                    "event": "note",
                    "text": f"correctness and speed: {exc.name or 'torch/triton'} is not installed in the judge's Python"
                    f" ({sys.executable}); `{KERNELS_INSTALL}` in drill's folder installs them",
                }
            )
            return False
        self.versions.update(torch=installed("torch"), triton=triton.__version__)
        return True

    def torch_later(self, card: str, name: str, harness: KernelHarness, case: Case) -> bool:
        """Whether torch's own time for `card` at `name` waits until the verdict is out (kept for then): so in a
        judge that has not imported torch, where the verdict would otherwise wait seconds for the import."""
        if self.torch is not None:
            return False
        self._later.append(LaterTiming(card, name, harness, case))
        return True

    def time_torch_now(self, emit: Emit) -> None:
        """Time torch's own way of each shape left for after the verdict, keep it for this GPU and send it as a
        `torch_time` event (after `finished`: the learner has the verdict by then)."""
        later = self._later
        self._later = []
        for left in later:
            inputs: object = None
            try:
                torch_kit = self.torch_kit()
                torch_kit.begin_case()
                inputs = left.harness.make_inputs(left.case, torch_kit)  # fresh inputs of the timed shape
                base = torch_kit.measure(left.harness.baseline(inputs, torch_kit), poison=False, budget_s=0.1)
                self.save_baseline(left.card, left.name, (base.ms, base.host_us))
                emit({"event": "torch_time", "name": left.name, "torch_ms": base.ms, "torch_host_us": base.host_us})
            except Exception as exc:  # torch missing, or its way failed here: the verdict stands without the ratio
                words = f"torch's own way could not be timed: {type(exc).__name__}: {exc}"
                emit(
                    {
                        "event": "torch_time",
                        "name": left.name,
                        "torch_ms": None,
                        "torch_host_us": None,
                        "message": words,
                    }
                )
            finally:
                inputs = None
                self.release_memory()

    def kit(self, language: str = "triton") -> TorchKit | CupyKit:
        """The kit to judge a card in `language` with: CuPy's for a CUDA card while torch is not loaded (or as
        DRILL_JUDGE_KIT says), else torch's."""
        choice = chosen_kit()
        if language == "cuda" and self.gpu and choice != "torch" and (self.torch is None or choice == "cupy"):
            if choice == "cupy" or (cupy_installed() and not self.cupy_broken):
                return self.cupy_kit()
        return self.torch_kit()

    def torch_kit(self) -> TorchKit:
        if self._kit is None:
            if self.torch is None:
                self._import_torch()
            from drill.judge.torch_kit import Kit

            self._kit = Kit(self.gpu)
        return self._kit

    def cupy_kit(self) -> CupyKit:
        if self._cupy_kit is None:
            t0 = time.perf_counter()
            import cupy  # noqa: F401 - first, while a thread makes the context (see _start_gpu)

            from drill.judge import cudadrv
            from drill.judge.cupy_kit import CupyKit

            cudadrv.ensure_context()  # the primary context, current here: CuPy and the learner's kernels share it
            self._cupy_kit = CupyKit()
            gc.freeze()  # see main
            self.startup["import cupy"] = time.perf_counter() - t0
        return self._cupy_kit

    def _kits(self) -> list[TorchKit | CupyKit]:
        return [k for k in (self._kit, self._cupy_kit) if k is not None]

    def release_memory(self) -> None:
        gc.collect()
        for kit in self._kits():
            kit.release()

    def context_healthy(self) -> bool:
        """After a CUDA error: can this process still use the GPU? Errors like an illegal address are sticky."""
        return not self.gpu or all(kit.healthy() for kit in self._kits())


def _freeze() -> None:
    """What an import made lives as long as the judge: leave it out of the collection after every case (see main).
    Garbage first, so that nothing unreachable is kept for good."""
    gc.collect()
    gc.freeze()

"""What the judge uses of a card's harness and of the kit it hands the harness, typed by that use.

A harness is a Python file of the card (kernels/harness/*.py) that the judge
loads from its bytes (drill.judge.source_only); its cases are plain dicts of
its own, of which the judge reads the name and the repetitions. The inputs, the
reference and the result are the harness's own objects (torch tensors, CuPy
arrays): the judge hands them back to the harness and to the kit, never reads
them itself. A kit is drill.judge.torch_kit.Kit or drill.judge.cupy_kit.CupyKit.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Protocol, Required, TypedDict

from drill.judge.kitbase import Check, Launch
from drill.judge.timed import CeilingKit

if TYPE_CHECKING:
    from drill.judge.measure import Measured


class Case(TypedDict, total=False):
    """One case of a harness: its name, how many calls time it; the harness's own sizes besides."""

    name: Required[str]
    reps: int
    warmup: int


# What a harness makes and takes back: tensors or arrays, in the harness's own arrangement.
Inputs = object
Reference = object


class KernelKit(CeilingKit, Protocol):
    """What the judge itself calls on a kit (the harness calls more: randn, output, allclose...)."""

    gpu: bool
    l2_bytes: int

    def begin_case(self) -> None: ...

    def check_guards(self) -> str | None: ...

    def healthy(self) -> bool: ...

    def release(self) -> None: ...

    def to_torch(self, inputs: Inputs) -> Inputs: ...

    def measure(
        self,
        fn: Callable[[], object],
        prepare: Callable[[], object] | None = None,
        *,
        audit: bool = False,
        poison: bool = True,
        budget_s: float = 0.2,
        min_reps: int = 5,
        max_reps: int = 100,
    ) -> Measured: ...


class KernelHarness(Protocol):
    """A kernel card's harness (a module): its cases, inputs, reference, launch of the learner's code and check."""

    def cases(self, kit: KernelKit) -> Iterable[Case]: ...

    def timing_cases(self, kit: KernelKit) -> Iterable[Case]: ...

    def make_inputs(self, case: Case, kit: KernelKit) -> Inputs: ...

    def reference(self, inputs: Inputs, kit: KernelKit) -> Reference: ...

    def launcher(self, program: object, inputs: Inputs, kit: KernelKit) -> Launch: ...

    def compare(self, result: object, reference: Reference, inputs: Inputs, kit: KernelKit) -> Check: ...

    def baseline(self, inputs: Inputs, kit: KernelKit) -> Callable[[], object]: ...

    def bytes_moved(self, case: Case) -> int: ...


class CollectiveHarness(Protocol):
    """A collective card's harness (a module): what the ranks run, and what the judge checks and times."""

    def cases(self, world: int, gpu: bool) -> Iterable[Case]: ...

    def timing_cases(self, world: int) -> Iterable[Case]: ...

    def make_inputs(self, case: Case, kit: object) -> Inputs: ...

    def launcher(self, program: object, inputs: Inputs, kit: object) -> Launch: ...

    def baseline(self, inputs: Inputs, kit: object) -> Callable[[], object]: ...

    def reference(self, everyone: list[Inputs], kit: object) -> Iterable[Reference]: ...

    def compare(self, result: object, reference: Reference, inputs: Inputs, kit: object) -> Check: ...

    def bytes_moved(self, case: Case) -> int: ...

    def bus_factor(self, world: int) -> float: ...

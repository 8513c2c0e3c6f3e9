"""Does a ledger card's prompt state every number its answers are computed from?

A learner can only compute what the prompt gives (and what formulas every
interviewer expects add, such as 2 FLOPs per parameter per token). So each
answer expression is evaluated while watching what it reads:

- the card's numeric parameters named in the expression,
- numeric fields of the drawn models and GPUs (`gpu.hbm_bytes`, or
  `model.layers` read inside a calculator),
- literals of the expression that look like figures (`50e9` B/s), except
  the conventions in CONVENTIONS; small factors (`36 * tokens * hidden`) are
  the derivation the card asks for.

Numbers inside a model's or GPU's name ("Llama 3 8B", "H100 SXM5 80 GB")
state nothing. A drawn number counts as stated when the prompt shows it, or reads
differently when only that number changes (`{{ mib * us }} µs` shows `us`).

A calculator call whose result the prompt states (`params(model)` given as
"6,738,415,616 parameters") counts as stated with all it read. Fields read
while a parameter count is taken (drill.calc.totals.count_params) stand for
one input, the exact count. Every other input must appear in the rendered
prompt as a number times a unit (`81,559 MiB`, `3.35 TB/s`,
`6.74 billion`, `4k`), within STATED_TOLERANCE.

Rendering uses `given_text` to state the figures of models and GPUs a prompt
leaves out (drill.cards.rendering); the deck check reports whatever is still
unstated after that: a drawn number or a literal the prompt never shows.
"""

from __future__ import annotations

import bisect
import itertools
import math
import re
import sys
import textwrap
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from types import FrameType
from typing import TypeGuard

from jinja2 import nodes
from jinja2.parser import Parser

from drill.calc.totals import count_params
from drill.cards.evaluation import Scope, evaluate, render_text
from drill.cards.field_values import items, mapping
from drill.cards.param_specs import options
from drill.cards.sandbox import ENV
from drill.quantities import format_quantity

# A number shown to 3 significant digits is within 0.5 % of the value; 1 % leaves room for a prompt's rounding,
# while "7B" for 6.74 B parameters (3.9 % off) is not the number the answer uses.
STATED_TOLERANCE = 0.01
# Unit multipliers a prompt's number may carry: decimal and binary sizes, percentages, time units.
SCALES = (1, 1e-2, 1e-3, 1e-6, 1e-9, 1e3, 1e6, 1e9, 1e12, 1e15, 1e18, 2**10, 2**20, 2**30, 2**40, 60, 3600, 86400)
GIVEN_WIDTH = 72
# Unit conversions among the literals: not figures of the problem.
CONVENTIONS = frozenset({3600, 86400, 8760, 1e3, 1e6, 1e9, 1e12, 1e15, 2**10, 2**20, 2**30, 2**40})
# Functions that only do arithmetic: what they read counts as read by their caller.
ARITHMETIC = frozenset({"ceil", "floor", "log2", "sqrt", "min", "max", "abs", "round"})
# A number as a prompt writes it: 81,559 or 3.35 or 2.5e9 (not the digits inside a word such as fp8 or H100).
_NUMBER = re.compile(r"(?<![\w.])(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?(?:[eE]([+-]?\d+))?")

# How a given figure of a GPU or a model is worded: (words, unit of format_quantity or "" for a plain number).
GPU_FIGURES: dict[str, tuple[str, str]] = {
    "hbm_bandwidth": ("HBM bandwidth", "bytes_per_second"),
    "bf16_flops": ("dense bf16", "flop_per_second"),
    "fp8_flops": ("dense fp8", "flop_per_second"),
    "tf32_flops": ("dense tf32", "flop_per_second"),
    "fp32_flops": ("fp32", "flop_per_second"),
    "nvlink_bandwidth": ("NVLink", "bytes_per_second"),
    "sms": ("SMs", ""),
    "l2_bytes": ("L2", "bytes"),
    "smem_per_sm_bytes": ("shared memory per SM", "bytes"),
}
MODEL_FIGURES: dict[str, str] = {
    "layers": "layers",
    "hidden": "hidden size",
    "heads": "attention heads",
    "kv_heads": "KV heads",
    "head_dim": "head dim",
    "ffn": "FFN width",
    "vocab": "vocabulary",
    "experts": "routed experts",
    "experts_per_token": "experts per token",
    "expert_ffn": "expert FFN width",
    "shared_experts": "shared experts",
    "dense_layers": "dense layers",
    "kv_lora_rank": "KV latent rank",
    "q_lora_rank": "query latent rank",
    "qk_nope_head_dim": "no-RoPE query/key head dim",
    "qk_rope_head_dim": "RoPE query/key head dim",
    "v_head_dim": "value head dim",
    "max_positions": "positions",
    "position_offset": "position offset",
}


@dataclass(frozen=True)
class Input:
    """One number an answer reads: `owner` is the model or GPU parameter it belongs to (None: a number of the card)."""

    owner: str | None
    name: str
    value: float


@dataclass
class _Frame:
    """What one call (or the expression itself) read, and the calls it made with their results."""

    reads: list[Input] = field(default_factory=list)
    calls: list[tuple[_Frame, object]] = field(default_factory=list)


class _Recorder:
    def __init__(self) -> None:
        self.stack = [_Frame()]

    def read(self, owner: str | None, name: str, value: object) -> None:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            self.stack[-1].reads.append(Input(owner, name, float(value)))


class _Watched(Mapping[str, object]):
    """A model or GPU mapping that tells the recorder each field read from it."""

    def __init__(self, owner: str, data: Mapping[str, object], recorder: _Recorder) -> None:
        self._owner = owner
        self._data = data
        self._recorder = recorder
        self._params: int | None = None

    def __getitem__(self, key: str) -> object:
        value = self._data[key]
        if _counting():  # a parameter count reads every field: its total is the number the learner needs
            self._recorder.read(self._owner, "params", self._total())
        else:
            self._recorder.read(self._owner, key, value)
        return value

    def _total(self) -> int:
        if self._params is None:
            self._params = count_params(self._data)
        return self._params

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)


def _counting() -> bool:
    """Whether the field being read is read by count_params (somewhere up the Python call stack)."""
    frame: FrameType | None = sys._getframe(2)
    while frame is not None:
        if frame.f_code is count_params.__code__:
            return True
        frame = frame.f_back
    return False


def _watching(name: str, fn: Callable[..., object], recorder: _Recorder) -> Callable[..., object]:
    def call(*args: object, **kwargs: object) -> object:
        frame = _Frame()
        recorder.stack.append(frame)
        try:
            result = fn(*args, **kwargs)
        finally:
            recorder.stack.pop()
        if name in ARITHMETIC:  # transparent: its reads and calls are its caller's
            recorder.stack[-1].reads += frame.reads
            recorder.stack[-1].calls += frame.calls
        else:
            recorder.stack[-1].calls.append((frame, result))
        return result

    return call


def stated_numbers(text: str) -> list[float]:
    """Every number written in `text`."""
    out = []
    for whole, fraction, exponent in _NUMBER.findall(text):
        value = float(whole.replace(",", "") + (fraction or ""))
        out.append(value * 10 ** int(exponent) if exponent else value)
    return out


def is_stated(value: float, numbers: Sequence[float]) -> bool:
    """Whether `value` is one of `numbers` times a unit multiplier, within STATED_TOLERANCE."""
    return Stated(numbers).holds(value)


class Stated:
    """The numbers a prompt writes, each times every unit multiplier, sorted: `holds` finds a value among them by
    bisection instead of trying every number at every multiplier (thousands of inputs are judged per card)."""

    def __init__(self, numbers: Sequence[float]) -> None:
        self._scaled = sorted({n * scale for n in numbers if n for scale in SCALES})

    def holds(self, value: float) -> bool:
        """Whether `value` is a stated number times a unit multiplier, within STATED_TOLERANCE (math.isclose's test,
        so only candidates within the tolerance of `value` either way are tried)."""
        if value == 0:
            return True
        target = abs(value)
        # isclose(a, t) needs |a - t| <= tol * max(a, t): every such a lies in [t * (1 - tol), t / (1 - tol)]
        start = bisect.bisect_left(self._scaled, target * (1 - STATED_TOLERANCE) * (1 - 1e-12))
        for candidate in itertools.islice(self._scaled, start, None):
            if candidate > target / (1 - STATED_TOLERANCE) * (1 + 1e-12):
                return False
            if math.isclose(candidate, target, rel_tol=STATED_TOLERANCE):
                return True
        return False


def _is_number(value: object) -> TypeGuard[int | float]:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _unstated(frame: _Frame, numbers: Stated) -> list[Input]:
    """The inputs of `frame` the prompt does not give (a call whose result it gives counts as given)."""
    missing = [i for i in frame.reads if not numbers.holds(i.value)]
    for call, result in frame.calls:
        if _is_number(result) and numbers.holds(float(result)):
            continue
        missing += _unstated(call, numbers)
    return missing


@dataclass(frozen=True)
class _ExpressionFacts:
    """What an answer's expression names and writes, read once per expression text."""

    names: frozenset[str]
    literals: tuple[float, ...]


@lru_cache(maxsize=4096)
def _expression_facts(source: str) -> _ExpressionFacts:
    expr = Parser(ENV, source, state="variable").parse_expression()
    return _ExpressionFacts(frozenset(n.name for n in expr.find_all(nodes.Name)), tuple(_figure_literals(expr)))


def _without_titles(text: str, params: Mapping[str, object], scope: Mapping[str, object]) -> str:
    """`text` without the names of its models and GPUs: the 8 of "Llama 3 8B" states no figure of the model."""
    for name in params:
        thing = scope.get(name)
        title = thing.get("title") if isinstance(thing, Mapping) else None
        if title:
            text = text.replace(str(title), " ")
    return text


def _shown_by_prompt(name: str, spec: object, scope: Mapping[str, object], template: str, prompt: str) -> bool:
    """Whether the prompt shows the drawn value of `name`, perhaps worked into another number (`{{ mib * us }} µs`):
    it reads differently when only that value changes."""
    if not isinstance(spec, Mapping):
        return False
    drawn = scope[name]
    variant = Scope(scope)  # its functions found once: an option is a number or text, never one of them
    for other in options(spec):
        if other == drawn:
            continue
        variant[name] = other
        if render_text(template, variant, "prompt") != prompt:
            return True
    return False


def _figure_literals(expr: nodes.Node) -> list[float]:
    """Literals that look like figures of the problem (50e9 B/s), outside the tables and branches a draw picks from."""
    picked = [n for n in expr.find_all((nodes.Dict, nodes.CondExpr))]
    inside = {id(c) for n in picked for c in n.find_all(nodes.Const)}
    return [
        float(c.value)
        for c in expr.find_all(nodes.Const)
        if id(c) not in inside and _is_number(c.value) and abs(c.value) >= 1000 and c.value not in CONVENTIONS
    ]


@dataclass(frozen=True)
class AnswerInputs:
    """Every number each answer of one draw reads (by its place, `answers[0]`), before any is judged stated: what
    rendering and the deck check both judge against a prompt, so the answers are evaluated once a draw."""

    reads: Mapping[str, _Frame]
    params: Mapping[str, object]
    scope: Mapping[str, object]

    def unstated(self, shown: str) -> dict[str, list[Input]]:
        """For each answer, the numbers it reads that `shown` (the prompt as the learner reads it) does not state."""
        numbers = Stated(stated_numbers(_without_titles(shown, self.params, self.scope)))
        out: dict[str, list[Input]] = {}
        for where, root in self.reads.items():
            missing = list(dict.fromkeys(_unstated(root, numbers)))
            if missing:
                out[where] = missing
        return out


class AnswerWatch:
    """One draw's scope with the reads of its models, GPUs and functions watched: an answer evaluated here gives
    its value (the same as in the plain scope) and leaves what it read, so rendering evaluates each answer once."""

    def __init__(self, card_fields: Mapping[str, object], scope: Mapping[str, object]) -> None:
        self._recorder = _Recorder()
        self._params = mapping(card_fields.get("params"))
        self._scope = scope
        watched = dict(scope)
        for name in self._params:
            owned = scope.get(name)
            if isinstance(owned, Mapping):
                watched[name] = _Watched(name, owned, self._recorder)
        for name, value in scope.items():
            if callable(value):
                watched[name] = _watching(name, value, self._recorder)
        self._names = Scope(watched)
        self._answers: list[tuple[str, _Frame]] = []

    def evaluate(self, source: str) -> float:
        """The next answer's value (`answers[i].expr`, in order); raises TemplateProblem as evaluation does."""
        self._recorder.stack = [_Frame()]
        value = evaluate(source, self._names, f"answers[{len(self._answers)}].expr")
        self._answers.append((source, self._recorder.stack[0]))
        return value

    def inputs(self, template: str, prompt: str) -> AnswerInputs:
        """What each answer evaluated so far reads, given the card's prompt as written (`template`) and as rendered
        in this scope (`prompt`): its drawn numbers that the prompt does not show and its figure literals too."""
        shown_by_prompt: dict[str, bool] = {}  # by parameter: the same for every answer of the draw
        reads: dict[str, _Frame] = {}
        for i, (source, recorded) in enumerate(self._answers):
            root = _Frame(list(recorded.reads), list(recorded.calls))
            facts = _expression_facts(source)
            for name in sorted(facts.names & set(self._params)):
                drawn_value = self._scope[name]
                if isinstance(drawn_value, (int, float)) and _is_number(drawn_value):
                    if name not in shown_by_prompt:
                        shown_by_prompt[name] = _shown_by_prompt(
                            name, self._params[name], self._scope, template, prompt
                        )
                    if not shown_by_prompt[name]:
                        root.reads.append(Input(None, name, float(drawn_value)))
            root.reads += [Input(None, f"the literal {v:g}", v) for v in facts.literals]
            reads[f"answers[{i}]"] = root
        return AnswerInputs(reads, self._params, self._scope)


def answer_inputs(
    card_fields: Mapping[str, object], scope: Mapping[str, object], template: str, prompt: str
) -> AnswerInputs:
    """What each answer reads at one draw: `scope` is the draw's scope (drill.cards.rendering.card_scope),
    `template` the card's prompt as written and `prompt` that template rendered in `scope`; raises TemplateProblem
    as rendering does."""
    watch = AnswerWatch(card_fields, scope)
    for entry in items(card_fields.get("answers")):
        watch.evaluate(str(entry.get("expr", "")) if isinstance(entry, Mapping) else "")
    return watch.inputs(template, prompt)


def unstated_inputs(
    card_fields: Mapping[str, object], scope: Mapping[str, object], template: str, shown: str | None = None
) -> dict[str, list[Input]]:
    """For each answer (by its place, `answers[0]`), the numbers it reads that the prompt does not state.

    `scope` is the draw's scope (drill.cards.rendering.card_scope), `template` the card's prompt as written and
    `shown` the prompt as the learner reads it (default: `template` rendered); raises TemplateProblem as
    rendering does.
    """
    prompt = render_text(template, Scope(scope), "prompt")
    return answer_inputs(card_fields, scope, template, prompt).unstated(prompt if shown is None else shown)


def _gpu_figure(gpu: Mapping[str, object], name: str, value: float) -> str:
    if name == "hbm_bytes":
        from drill.calc.hbm import hbm_statement

        return hbm_statement(gpu)
    words, unit = GPU_FIGURES.get(name, (name.replace("_", " "), ""))
    shown = format_quantity(value, unit, alternate=False) if unit else f"{value:,.0f}"
    return f"{words} {shown}" if unit else f"{shown} {words}"


def _model_figure(name: str, value: float) -> str:
    if name == "params":
        return f"{value:,.0f} parameters (embeddings and output head included)"
    return f"{MODEL_FIGURES.get(name, name.replace('_', ' '))} {value:,.0f}"


def given_text(missing: Mapping[str, list[Input]], scope: Mapping[str, object]) -> str:
    """The figures of models and GPUs the answers read but the prompt leaves out, as one line; "" when none."""
    by_owner: dict[str, dict[str, float]] = {}
    for inputs in missing.values():
        for i in inputs:
            if i.owner is not None and isinstance(scope.get(i.owner), Mapping):
                by_owner.setdefault(i.owner, {})[i.name] = i.value
    parts = []
    for owner, figures in by_owner.items():
        thing = mapping(scope[owner])
        if "hbm_bandwidth" in thing:
            shown = [_gpu_figure(thing, name, value) for name, value in figures.items()]
        else:
            shown = [_model_figure(name, value) for name, value in figures.items()]
        parts.append(f"{thing.get('title') or thing.get('name') or owner}: {', '.join(shown)}")
    if not parts:
        return ""
    # wrapped as card text is, so it fits an 80-column review screen
    return textwrap.fill(f"**Given:** {'; '.join(parts)}.", GIVEN_WIDTH, break_on_hyphens=False)

"""Fixed prose in a parameterised card that one of its draws contradicts.

A ledger card's numbers change with every review, but the words around them
are written once. Prose written while looking at one draw ("hundreds of
elements per thread", "it fits an H200 only before activations") is wrong at
another. The deck check evaluates the card's answers and ledger terms at
many draws (every combination of the listed options, or a seeded sample of
them) and reads the card's fixed text, sentence by sentence: the prompt and
answer outside `{% if %}` blocks and `{{ }}` output. Three kinds of claim
are checked:

- an order of magnitude in words ("hundreds of", "tens of thousands of"):
  wrong when no computed value of its dimension (nor a figure of the drawn
  model or GPU) stays in its range at every draw while one enters it at some;
- a fit ("fits", "exceeds", "out of memory"): wrong when a computed ratio
  (an answer in `fraction`, or a byte figure over the drawn GPU's HBM)
  falls on both sides of 1 across the draws;
- a figure with its unit ("100 GiB", "4×", "twice"): wrong when it matches a
  computed value at one draw and misses it by far at another.

A sentence that names an option of the card ("on an H200", "for
Llama-3-8B", "N = 64") is about the draws with that option: its claims are
checked against those draws only, and a figure in it is a worked example,
not a claim about the learner's draw. A sentence that hedges ("if", "when",
"near", "almost", "for large n") states a rule, not a fact of the draw.
Each claim found must be conditioned on the draw (`{% if ... %}`) or show
the computed value (`{{ ... }}`).
"""

from __future__ import annotations

import enum
import itertools
import math
import random
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass

from jinja2 import nodes

from drill.cards.evaluation import Scope, evaluate
from drill.cards.field_values import mapping, number
from drill.cards.model import Card
from drill.cards.param_specs import card_params, options
from drill.cards.rendering import Catalogue, card_scope, load_catalogue
from drill.cards.sandbox import ENV
from drill.cards.stated_numbers import GPU_FIGURES, MODEL_FIGURES
from drill.cards.template_records import TemplateProblem
from drill.quantities import QuantityError, format_quantity, parse_quantity

# Draws evaluated per card: every combination up to this many, else a seeded sample of this many.
MAX_PROSE_DRAWS = 64
PROSE_SEED = 20_261_129
# A figure in the text "matches" a computed value within this relative distance...
FIGURE_MATCH = 0.02
# ...and is contradicted by a draw whose value is further than this from it.
FIGURE_MISS = 0.10
# The card text a learner reads as written in the card.
PROSE_FIELDS = ("prompt", "answer")
# A numeric option shorter than this is too common a number to name the option ("2 bytes", "4 times").
SMALLEST_NAMING_OPTION = 10

# Orders of magnitude in words: the power of ten each starts at and how many powers it spans.
_MAGNITUDE_WORDS: dict[str, tuple[int, int]] = {
    "tens": (1, 1),
    "dozens": (1, 1),
    "hundreds": (2, 1),
    "thousands": (3, 3),
    "millions": (6, 3),
    "billions": (9, 3),
    "trillions": (12, 3),
}
_MAGNITUDE = re.compile(
    r"\b(?:(?P<few>tens|hundreds) of )?(?P<word>tens|dozens|hundreds|thousands|millions|billions|trillions)\b"
    r"(?: of (?P<unit>[A-Za-zµ/]+))?",
    re.IGNORECASE,
)
_FIT = re.compile(
    r"\b(?:fits?|fitting|exceeds?|exceeding|overflows?|out of memory|OOMs?|too (?:big|large) for)\b", re.IGNORECASE
)
# A number and the unit after it, as card text writes them ("100 GiB", "3.35 TB/s", "4×", "12 ms").
_FIGURE = re.compile(
    r"(?<![\w.,])(?P<number>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)\s?"
    r"(?P<unit>×|%|[KMGTPEZY]i?B(?:/s)?|[KMGTPEZY]?FLOP(?:/s|s)?|B\b|ms\b|µs\b|us\b|ns\b)"
)
_MULTIPLE_WORDS = {"twice": 2.0, "double": 2.0, "half": 0.5, "thrice": 3.0}
_MULTIPLE = re.compile(r"\b(?:twice|double|half|thrice)\b", re.IGNORECASE)
# Words that make a sentence a rule ("a fraction above 1 does not fit") rather than a fact of the draw.
_HEDGE = re.compile(
    r"\b(?:if|when|whenever|unless|whether|above|below|near|almost|nearly|approach(?:es)?|limit|"
    r"at most|at least|up to|for large|for small)\b",
    re.IGNORECASE,
)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n\s*\n")
# A chip's name in a GPU's title: A100, H200, MI300X, B200.
_CHIP = re.compile(r"\b[A-Z]{1,2}\d{2,3}[A-Z]?\b")
# A model's size in its title, which prose uses as its name: 7B, 70B, 8x7B.
_SIZE = re.compile(r"\b(?:\d+x)?\d+(?:\.\d+)?B\b")


class ClaimKind(enum.Enum):
    """What a phrase of fixed text says about the card's computed values."""

    MAGNITUDE = "order of magnitude"
    FIT = "fit"
    FIGURE = "figure"


@dataclass(frozen=True)
class Claim:
    """A phrase of fixed text and what it asserts: a range [low, high) or a value (low), in a dimension.

    `about` holds the options its sentence names (parameter -> values): the
    claim speaks of those draws only. `hedged` is a sentence that states a rule.
    """

    field: str
    words: str
    kind: ClaimKind
    dimension: str
    low: float
    high: float
    about: Mapping[str, frozenset[str]]
    hedged: bool
    # What a magnitude counts when it is not a unit ("elements" in "hundreds of elements").
    noun: str = ""
    # Every figure of the sentence (a figure among them may be one case of a list: "31.5 GB/s on Gen4, 63 on Gen5").
    figures: tuple[tuple[str, float], ...] = ()


@dataclass(frozen=True)
class Series:
    """One computed value of a card (an answer, a ledger term, a byte figure over HBM) at every draw."""

    name: str
    unit: str
    values: tuple[float, ...]
    draws: tuple[Mapping[str, object], ...]
    # A figure of the drawn model or GPU (its L2, its layers): what magnitude words may describe, never an answer.
    context: bool = False
    # How a figure of the model or GPU is named in prose ("SMs", "layers").
    words: str = ""


def fixed_text(source: str) -> list[str]:
    """The pieces of a template shown the same at every draw: text outside `{% if %}` blocks and `{{ }}`."""
    try:
        tree = ENV.parse(source)
    except Exception:  # noqa: BLE001 - a broken template is the template check's to report
        return []
    return list(_unconditioned(tree))


def _unconditioned(node: nodes.Node) -> Iterator[str]:
    if isinstance(node, nodes.If):
        return
    if isinstance(node, nodes.TemplateData):
        yield node.data
        return
    for child in node.iter_child_nodes():
        yield from _unconditioned(child)


def _squeezed(text: str) -> str:
    """Letters and digits only, lower case: "Llama-3-8B" and "Llama 3 8B" both read "llama38b"."""
    return re.sub(r"[^0-9a-z]", "", text.lower())


def _option_names(card: Card, cat: Catalogue) -> dict[str, dict[str, list[str]]]:
    """How a sentence may name each option of each parameter: parameter -> option -> names."""
    named: dict[str, dict[str, list[str]]] = {}
    for param, spec in card_params(card).items():
        names: dict[str, list[str]] = {}
        for value in options(spec):
            if "model" in spec:
                title = str(cat.models.get(str(value), {}).get("title", ""))
                names[str(value)] = [_squeezed(str(value)), _squeezed(title), *_SIZE.findall(title)]
            elif "gpu" in spec:
                names[str(value)] = _CHIP.findall(str(cat.gpus.get(str(value), {}).get("title", "")))
            elif isinstance(value, str):
                names[str(value)] = [value]
            elif isinstance(value, (int, float)) and abs(value) >= SMALLEST_NAMING_OPTION:
                names[str(value)] = (
                    [f"{value:,}", f"{value:g}", f"{value:,.0f}"] if value == int(value) else [str(value)]
                )
        named[param] = names
    return named


def _named_options(sentence: str, named: Mapping[str, Mapping[str, list[str]]]) -> dict[str, frozenset[str]]:
    """The options a sentence names, by parameter."""
    squeezed = _squeezed(sentence)
    unitless = _FIGURE.sub(" ", sentence)  # "100 GB" names no option n = 100: it is the figure itself
    found: dict[str, frozenset[str]] = {}
    for param, names in named.items():
        hits = set()
        for option, words in names.items():
            for word in words:
                if not word:
                    continue
                if word.islower() and word.isalnum() and len(word) >= 4 and word in squeezed:
                    hits.add(option)  # a model's squeezed name or title
                    continue
                text = unitless if re.fullmatch(r"[\d,.]+", word) else sentence
                if re.search(rf"(?<![\w.,]){re.escape(word)}(?![\w]|[.,]\d)", text, re.IGNORECASE):
                    hits.add(option)
        if hits:
            found[param] = frozenset(hits)
    return found


def _magnitude_range(m: re.Match[str]) -> tuple[str, float, float, str]:
    power, span = _MAGNITUDE_WORDS[m["word"].lower()]
    if m["few"]:  # "tens of thousands": 10^4 to 10^5
        power += _MAGNITUDE_WORDS[m["few"].lower()][0]
        span = 1
    dimension = "count"
    scale = 1.0
    noun = m["unit"] or ""
    if m["unit"]:
        try:
            unit = parse_quantity(f"1 {m['unit']}")
        except QuantityError:
            unit = None
        if unit is not None and unit.dimension not in (None, "count"):
            dimension = unit.dimension
            scale = unit.value
            noun = ""
    return dimension, scale * 10.0**power, scale * 10.0 ** (power + span), noun


def _figure_value(m: re.Match[str]) -> tuple[str, float] | None:
    try:
        q = parse_quantity(f"{m['number']} {m['unit']}")
    except QuantityError:
        return None
    if q.dimension is None or q.value == 0:
        return None
    return q.dimension, q.value


def sentence_claims(field: str, sentence: str, about: Mapping[str, frozenset[str]] | None = None) -> list[Claim]:
    """The claims about computed values in one sentence of fixed text."""
    about = about or {}
    hedged = _HEDGE.search(sentence) is not None
    figures = tuple(f for f in map(_figure_value, _FIGURE.finditer(sentence)) if f is not None)
    found: list[Claim] = []
    for m in _MAGNITUDE.finditer(sentence):
        dimension, low, high, noun = _magnitude_range(m)
        found.append(Claim(field, m[0], ClaimKind.MAGNITUDE, dimension, low, high, about, hedged, noun))
    for m in _FIT.finditer(sentence):
        found.append(Claim(field, m[0], ClaimKind.FIT, "fraction", 1.0, 1.0, about, hedged))
    for m in _FIGURE.finditer(sentence):
        figure = _figure_value(m)
        if figure is not None:
            dimension, value = figure
            found.append(Claim(field, m[0], ClaimKind.FIGURE, dimension, value, value, about, hedged, "", figures))
    for m in _MULTIPLE.finditer(sentence):
        value = _MULTIPLE_WORDS[m[0].lower()]
        found.append(Claim(field, m[0], ClaimKind.FIGURE, "fraction", value, value, about, hedged, "", figures))
    return found


def card_claims(card: Card, cat: Catalogue) -> list[Claim]:
    """Every claim in the fixed text of the card's prompt and answer, with the options each sentence names."""
    named = _option_names(card, cat)
    found = []
    for field in PROSE_FIELDS:
        for piece in fixed_text(getattr(card, field)):
            for sentence in _SENTENCE_END.split(piece):
                found += sentence_claims(field, sentence, _named_options(sentence, named))
    return found


def combinations(
    card: Card, seed: int = PROSE_SEED, max_draws: int | None = MAX_PROSE_DRAWS
) -> list[dict[str, object]]:
    """Every combination of the card's listed options (both ends of a range), or a seeded sample of `max_draws`."""
    params = card_params(card)
    names = list(params)
    choices = [list({repr(o): o for o in options(params[n])}.values()) for n in names]
    total = math.prod(len(c) for c in choices)
    if max_draws is None or total <= max_draws:
        return [dict(zip(names, combo)) for combo in itertools.product(*choices)]
    draws = []
    for index in sorted(random.Random(seed).sample(range(total), max_draws)):
        draw = {}
        for name, values in zip(reversed(names), reversed(choices)):
            index, pick = divmod(index, len(values))
            draw[name] = values[pick]
        draws.append(draw)
    return draws


def _entries(card: Card, key: str) -> list[Mapping[str, object]]:
    entries = card.fields.get(key) or []
    return [e for e in entries if isinstance(e, Mapping)] if isinstance(entries, list) else []


@dataclass(frozen=True)
class _Evaluated:
    draw: Mapping[str, object]
    values: list[float]
    scope: Mapping[str, object]


def _context_series(card: Card, rows: Sequence[_Evaluated]) -> list[Series]:
    """The numeric figures of the drawn models and GPUs (L2 size, layers...), as series."""
    draws = tuple(r.draw for r in rows)
    series = []
    for param, spec in card_params(card).items():
        figures: dict[str, tuple[str, str]] = {}
        if "gpu" in spec:
            figures = dict(GPU_FIGURES)
        if "model" in spec:
            figures = {key: (words, "count") for key, words in MODEL_FIGURES.items()}
        for key, (words, unit) in figures.items():
            values = [mapping(r.scope[param]).get(key) for r in rows]
            if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
                numbers = tuple(float(v) for v in values if isinstance(v, (int, float)))
                series.append(Series(f"{param}.{key}", unit or "count", numbers, draws, context=True, words=words))
    return series


def computed_series(card: Card, cat: Catalogue, draws: Sequence[Mapping[str, object]]) -> list[Series]:
    """Each answer and ledger term at every draw that evaluates, each byte figure over the drawn GPU's HBM,
    and the drawn models' and GPUs' own figures."""
    entries = [(f"answers[{i}]", e) for i, e in enumerate(_entries(card, "answers"))]
    entries += [(f"ledger[{i}]", e) for i, e in enumerate(_entries(card, "ledger"))]
    gpu_params = [name for name, spec in card_params(card).items() if "gpu" in spec]
    rows: list[_Evaluated] = []
    for draw in draws:
        try:
            scope = Scope(card_scope(card, draw, cat))
            values = [evaluate(str(e.get("expr", "")), scope) for _, e in entries]
        except TemplateProblem:
            continue  # the deck check's rendering reports a draw that fails
        rows.append(_Evaluated(draw, values, scope))
    if not rows:
        return []
    done = tuple(r.draw for r in rows)
    series = []
    for i, (where, entry) in enumerate(entries):
        unit = str(entry.get("unit", ""))
        label = str(entry.get("label") or entry.get("term") or "")
        series.append(Series(f"{where} ({label})", unit, tuple(r.values[i] for r in rows), done))
        if unit != "bytes":
            continue
        for gpu in gpu_params:
            capacities = [mapping(r.scope[gpu]).get("hbm_bytes") for r in rows]
            if all(isinstance(c, (int, float)) and c for c in capacities):
                ratios = tuple(r.values[i] / number(c) for r, c in zip(rows, capacities))
                series.append(Series(f"{where} ({label}) over the {gpu}'s HBM", "fraction", ratios, done))
    return series + _context_series(card, rows)


def _shown(value: float, unit: str) -> str:
    """A value for a message: in its unit, bytes in decimal prefixes only."""
    if not unit:
        return f"{value:g}"
    return format_quantity(value, unit, alternate=False)


def _draw_words(draw: Mapping[str, object]) -> str:
    return ", ".join(f"{k}={v}" for k, v in draw.items())


def _indices(claim: Claim, s: Series) -> list[int]:
    """The draws a claim speaks of: those with the options its sentence names (all draws if it names none)."""
    return [i for i, d in enumerate(s.draws) if all(str(d.get(p)) in values for p, values in claim.about.items())]


def _split(s: Series, indices: list[int], holds: Callable[[float], bool]) -> tuple[list[int], list[int]]:
    """The draws among `indices` where `holds` is true of the series' value, and those where it is false (each in
    draw order): words that are right at some draws and wrong at others are what these checks look for."""
    true_at = [i for i in indices if holds(s.values[i])]
    false_at = [i for i in indices if not holds(s.values[i])]
    return true_at, false_at


def _described(claim: Claim, series: list[Series]) -> list[Series]:
    """The series magnitude words may be about: of their dimension, and for a count of things, those things
    ("hundreds of elements": a value named for elements) when any value is named for them."""
    fitting = [s for s in series if s.unit == claim.dimension]
    if claim.dimension != "count":
        return fitting
    noun = _squeezed(claim.noun).removesuffix("s")
    named = [s for s in fitting if noun and noun in _squeezed(f"{s.name} {s.words}")]
    return named or [s for s in fitting if not s.context]


def _magnitude_problem(claim: Claim, series: list[Series]) -> str | None:
    fitting = _described(claim, series)
    for s in fitting:
        if all(claim.low <= s.values[i] < claim.high for i in _indices(claim, s)):
            return None  # a value the words describe at every draw they speak of
    for s in fitting:
        if s.context:
            continue
        inside, outside = _split(s, _indices(claim, s), lambda value: claim.low <= value < claim.high)
        if inside and outside:
            far = max(outside, key=lambda i: abs(math.log10(max(s.values[i], 1e-300) / claim.low)))
            return (
                f"says {claim.words!r}, but {s.name} is {_shown(s.values[far], s.unit)} "
                f"with {_draw_words(s.draws[far])} "
                f"({_shown(s.values[inside[0]], s.unit)} with {_draw_words(s.draws[inside[0]])})"
            )
    return None


def _fit_problem(claim: Claim, series: list[Series]) -> str | None:
    if claim.hedged:
        return None
    for s in series:
        if s.unit != "fraction" or s.context:
            continue
        below, above = _split(s, _indices(claim, s), lambda value: value <= 1)
        if below and above:
            return (
                f"says {claim.words!r} whatever the draw, but {s.name} is {s.values[below[-1]]:.3g} "
                f"with {_draw_words(s.draws[below[-1]])} and {s.values[above[0]]:.3g} "
                f"with {_draw_words(s.draws[above[0]])}"
            )
    return None


def _figure_problem(claim: Claim, series: list[Series]) -> str | None:
    if claim.hedged or claim.about:
        return None  # a rule, or a worked example for the options its sentence names
    for s in series:
        if s.unit != claim.dimension or s.context:
            continue
        distance = [abs(v - claim.low) / abs(claim.low) for v in s.values]
        matched = [i for i, d in enumerate(distance) if d <= FIGURE_MATCH]
        missed = [i for i, d in enumerate(distance) if d > FIGURE_MISS]
        if matched and missed and not _lists_every_case(claim, s):
            far = max(missed, key=lambda i: distance[i])
            return (
                f"states {claim.words!r}, which is {s.name} with {_draw_words(s.draws[matched[0]])}, "
                f"but {s.name} is {_shown(s.values[far], s.unit)} with {_draw_words(s.draws[far])}"
            )
    return None


def _lists_every_case(claim: Claim, s: Series) -> bool:
    """Whether the claim's sentence gives a figure for every value the series takes: a list of cases."""
    given = [value for dimension, value in claim.figures if dimension == s.unit]
    return all(any(abs(v - g) <= FIGURE_MATCH * abs(g) for g in given) for v in set(s.values))


_JUDGES = {
    ClaimKind.MAGNITUDE: _magnitude_problem,
    ClaimKind.FIT: _fit_problem,
    ClaimKind.FIGURE: _figure_problem,
}


def draw_prose_problems(
    card: Card, cat: Catalogue | None = None, *, seed: int = PROSE_SEED, max_draws: int | None = MAX_PROSE_DRAWS
) -> list[str]:
    """Claims of the card's fixed prose that some draw contradicts (empty when none).

    Only a card with parameters can be contradicted by a draw; a card without
    claims in its fixed text is not evaluated at all. `max_draws=None`
    evaluates every combination of the listed options.
    """
    if not card.fields.get("params"):
        return []
    try:
        cat = cat if cat is not None else load_catalogue(None, None, None)
        found = card_claims(card, cat)
        if not found:
            return []
        series = computed_series(card, cat, combinations(card, seed, max_draws))
    except TemplateProblem:
        return []  # the parameter specs are reported by the deck check
    problems = []
    for claim in found:
        problem = _JUDGES[claim.kind](claim, series)
        if problem is not None:
            problems.append(
                f"{claim.field}: fixed text {problem}; show the value with {{{{ }}}} or condition the words "
                "with {% if %}"
            )
    return list(dict.fromkeys(problems))

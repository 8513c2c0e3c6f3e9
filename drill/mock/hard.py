"""Hard mode: the learner supplies the figures of the GPUs and models a numeric question uses, from memory.

A numeric card's prompt states the figures its answers are computed from: the HBM bandwidth and capacity of
its GPU, its NVLink bandwidth, a model's parameter count, layers and heads (in its text, or in the "Given"
line drill.cards.rendering adds). In hard mode those figures are withheld: each number of the prompt (and of
the answers' labels) that is worked from one of them is replaced by a marker such as **?A**, and a note under
the prompt names what each marker stands for ("NVIDIA H100 SXM5: HBM bandwidth") and the figures the answers
read that the prompt never showed. The card's own numbers (a batch, a context length) stay as they are.

Which numbers are worked from a figure is found by rendering the prompt again with that figure changed
(`FACTORS`): a number that reads differently is withheld. So a figure shown through any template (`{{
gpu.hbm_bandwidth / 1e12 }}`, `{{ hbm_statement(gpu) }}`, `{{ params(model)|thousands }}`) is found without
knowing the template, and a card number that only happens to equal a figure (a batch of 32 beside 32 layers)
is kept.

Every answer is still checked: against the value computed from the true figures, within HARD_TOLERANCE
(or the card's own tolerance where that is looser), as are the steps of the learner's working.
"""

from __future__ import annotations

import difflib
import re
import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from drill.cards.evaluation import Scope, render_text
from drill.cards.field_values import items, mapping
from drill.cards.model import Card
from drill.cards.param_specs import card_params
from drill.cards.rendering import Catalogue, card_scope, load_catalogue, render
from drill.cards.stated_numbers import GIVEN_WIDTH, Input, given_text, is_stated, stated_numbers, unstated_inputs
from drill.cards.template_records import ExpectedAnswer, Rendered

# How far a hard-mode answer may be from the value the true figures give (a figure recalled as "3.3 TB/s"
# for 3.35 TB/s, or "8B parameters" for 8.03 B, still lands within it).
HARD_TOLERANCE = 0.15
# What a hard-mode mock's report says of it.
HARD_WORDS = (
    "Hard mode: the GPU and model figures were supplied from memory; "
    f"numeric answers were checked within ±{HARD_TOLERANCE:.0%} of the values the true figures give"
)
# The changes a figure is tried with to find the numbers worked from it (whole numbers stay whole).
FACTORS = (2, 3)
PARAMS_WORDS = "parameter count"
# A number worked from more of a model's figures than this is said to be worked from its configuration.
MOST_NAMED = 3
# A number as a prompt writes it: 81,559 or 3.35 or 2.5e9 (not the digits inside a word such as fp8 or H100).
_NUMBER = re.compile(r"((?<![\w.])(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?)")


@dataclass(frozen=True)
class Figure:
    """A figure of a GPU or a model that hard mode withholds: its words and the fields that hold it."""

    words: str
    fields: tuple[str, ...]


GPU_FIGURES = (
    Figure("HBM bandwidth", ("hbm_bandwidth",)),
    Figure("HBM capacity", ("hbm_mib", "hbm_bytes", "hbm_label")),  # the label "80 GB" is the capacity too
    Figure("NVLink bandwidth", ("nvlink_bandwidth",)),
    Figure("dense bf16 FLOP/s", ("bf16_flops",)),
    Figure("dense fp8 FLOP/s", ("fp8_flops",)),
)
MODEL_FIGURES = (
    Figure("number of layers", ("layers",)),
    Figure("hidden size", ("hidden",)),
    Figure("number of attention heads", ("heads",)),
    Figure("number of KV heads", ("kv_heads",)),
    Figure("head dim", ("head_dim",)),
)  # the FFN width and the vocabulary, rarely known by heart, stay stated


@dataclass(frozen=True)
class Owner:
    """A model or GPU parameter of a card: its name in the card, which table it is drawn from, its entry there."""

    name: str
    table: str  # "models" or "gpus"
    key: str

    @property
    def figures(self) -> tuple[Figure, ...]:
        return GPU_FIGURES if self.table == "gpus" else MODEL_FIGURES


@dataclass(frozen=True)
class Withheld:
    """A number withheld from a hard-mode prompt: the marker standing in its place, and what it is."""

    marker: str  # "?A"
    what: str  # "NVIDIA H200 SXM: HBM capacity"


@dataclass(frozen=True)
class HardQuestion:
    """A numeric card's draw asked in hard mode: `rendered` as the learner sees it (the figures withheld, the
    answers' tolerances loosened), `withheld` what each marker stands for, `from_memory` every figure the
    learner supplies (the markers' and those the answers read that the prompt never showed)."""

    rendered: Rendered
    withheld: tuple[Withheld, ...]
    from_memory: tuple[str, ...]


def hard_tolerance(tolerance: float) -> float:
    """The tolerance a hard-mode answer is checked with: HARD_TOLERANCE, or the card's own where looser."""
    return max(tolerance, HARD_TOLERANCE)


def hard_answers(answers: Sequence[ExpectedAnswer]) -> list[ExpectedAnswer]:
    """The expected answers, their values from the true figures, their tolerances loosened for hard mode."""
    return [replace(a, tolerance=hard_tolerance(a.tolerance)) for a in answers]


def _owners(card: Card, draw: Mapping[str, object]) -> list[Owner]:
    out = []
    for name, spec in card_params(card).items():
        for kind, table in (("model", "models"), ("gpu", "gpus")):
            if kind in spec and isinstance(draw.get(name), str):
                out.append(Owner(name, table, str(draw[name])))
    return out


def _changed(value: object, factor: int) -> object:
    """`value` changed by `factor`: a number multiplied, a label's number ("80 GB") multiplied; None stays."""
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, (int, float)):
        return value * factor
    if isinstance(value, str):
        return re.sub(r"\d+(?:\.\d+)?", lambda m: f"{float(m.group(0)) * factor:g}", value)
    return value


def _with_figure_changed(cat: Catalogue, owner: Owner, figure: Figure, factor: int) -> Catalogue | None:
    """The catalogue with one figure of `owner`'s entry changed; None when the entry lacks it."""
    tables = {"models": dict(cat.models), "gpus": dict(cat.gpus)}
    entry = dict(tables[owner.table][owner.key])
    if all(entry.get(f) is None for f in figure.fields):
        return None
    for f in figure.fields:
        entry[f] = _changed(entry.get(f), factor)
    tables[owner.table][owner.key] = entry
    return Catalogue(cat.names, tables["models"], tables["gpus"])


def _texts(card: Card, scope: Mapping[str, object]) -> list[str]:
    """The texts a learner reads before answering: the prompt (without a "Given" line) and each answer's label."""
    names = Scope(scope)
    texts = [render_text(card.prompt, names, "prompt")]
    for i, entry in enumerate(items(card.fields.get("answers"))):
        label = str(entry.get("label", "")) if isinstance(entry, Mapping) else ""
        texts.append(render_text(label, names, f"answers[{i}].label"))
    return texts


def _pieces(text: str) -> list[str]:
    """`text` cut into runs of words and numbers: the numbers at the odd places."""
    return _NUMBER.split(text)


def _moved_numbers(true: str, other: str) -> set[int]:
    """The places (in `_pieces(true)`) of the numbers of `true` that read differently in `other`."""
    ours = _pieces(true)
    theirs = _pieces(other)
    moved: set[int] = set()
    matcher = difflib.SequenceMatcher(None, ours, theirs, autojunk=False)
    for tag, i1, i2, _j1, _j2 in matcher.get_opcodes():
        if tag in ("replace", "delete"):
            moved.update(i for i in range(i1, i2) if i % 2 == 1)
    return moved


def _title(entry: Mapping[str, object], fallback: str) -> str:
    """A GPU's or model's name without its capacity ("NVIDIA H100 SXM5 80 GB" reads "NVIDIA H100 SXM5")."""
    title = str(entry.get("title") or entry.get("name") or fallback)
    label = entry.get("hbm_label")
    if isinstance(label, str) and title.endswith(f" {label}"):
        return title.removesuffix(f" {label}")
    return title


def _words(
    owner_titles: Mapping[Owner, str], found: set[tuple[Owner, Figure]], value: float, scope: Mapping[str, object]
) -> str:
    """What a withheld number stands for: one figure, a model's parameter count, or a figure worked from several."""
    if len(found) == 1:
        ((owner, figure),) = found
        return f"{owner_titles[owner]}: {figure.words}"
    owners = {o for o, _ in found}
    if len(owners) == 1:
        (owner,) = owners
        if owner.table == "models":
            from drill.calc.totals import count_params

            try:
                total = float(count_params(mapping(scope[owner.name])))
            except (KeyError, ValueError, TypeError, ZeroDivisionError):
                total = 0.0
            if total and is_stated(total, [value]):
                return f"{owner_titles[owner]}: {PARAMS_WORDS}"
    parts = []
    for owner in sorted(owners, key=lambda o: o.name):
        words = sorted(f.words for o, f in found if o == owner)
        named = ", ".join(words) if len(words) <= MOST_NAMED else "configuration"
        parts.append(f"{owner_titles[owner]}'s {named}")
    return "a figure worked out from " + " and ".join(parts)


def _marker(index: int) -> str:
    return "?" + "ABCDEFGHIJKLMNOPQRSTUVWXYZ"[index % 26] + ("" if index < 26 else str(index // 26))


def hard_question(card: Card, draw: Mapping[str, object]) -> HardQuestion:
    """`card` (a numeric card) asked with `draw` in hard mode; raises TemplateProblem as rendering does."""
    true = render(card, draw)
    cat = load_catalogue(None, None, None)
    scope = card_scope(card, draw, cat)
    texts = _texts(card, scope)
    owners = _owners(card, draw)
    # for each text, each number's place: the figures it moves with
    found: list[dict[int, set[tuple[Owner, Figure]]]] = [{} for _ in texts]
    for owner in owners:
        for figure in owner.figures:
            for factor in FACTORS:
                changed = _with_figure_changed(cat, owner, figure, factor)
                if changed is None:
                    break
                try:
                    others = _texts(card, card_scope(card, draw, changed))
                except Exception:  # noqa: BLE001 - a figure the templates cannot take changed: tried no further
                    continue
                for places, ours, theirs in zip(found, texts, others):
                    for place in _moved_numbers(ours, theirs):
                        places.setdefault(place, set()).add((owner, figure))
    titles = {o: _title(mapping(scope[o.name]), o.key) for o in owners}
    markers: dict[str, str] = {}  # what a number stands for -> its marker
    shown: list[str] = []
    for places, text in zip(found, texts):
        pieces = _pieces(text)
        for place, figures in sorted(places.items()):
            value = stated_numbers(pieces[place])
            what = _words(titles, figures, value[0] if value else 0.0, scope)
            marker = markers.setdefault(what, _marker(len(markers)))
            pieces[place] = f"**{marker}**"
        joined = "".join(pieces)
        for owner in owners:  # "NVIDIA H100 SXM5 80 GB" names the capacity withheld
            title = str(mapping(scope[owner.name]).get("title") or "")
            if title and title != titles[owner]:
                joined = joined.replace(title, titles[owner])
        shown.append(joined)
    prompt = shown[0]
    missing = unstated_inputs(card.fields, scope, card.prompt, shown=prompt)
    recalled, given = _split_missing(missing, owners)
    also = [
        what
        for what in dict.fromkeys(_input_words(titles, owners, i) for i in recalled)
        if what not in markers and what
    ]
    withheld = tuple(Withheld(marker, what) for what, marker in markers.items())
    note = _note(withheld, also)
    given_line = given_text(given, scope)
    text = f"{prompt.rstrip()}\n\n{note}\n" + (f"\n{given_line}\n" if given_line else "")
    answers = [replace(a, label=label) for a, label in zip(hard_answers(true.answers), shown[1:])]
    rendered = Rendered(prompt=text, answers=answers, ledger=true.ledger, answer=true.answer)
    return HardQuestion(rendered, withheld, (*markers, *also))


def _is_figure(owner: Owner, name: str) -> bool:
    return name == "params" or any(name in f.fields for f in owner.figures)


def _split_missing(
    missing: Mapping[str, list[Input]], owners: Sequence[Owner]
) -> tuple[list[tuple[Owner, Input]], dict[str, list[Input]]]:
    """The inputs the prompt does not show: hard mode's figures (recalled) and the rest (still given)."""
    by_name = {o.name: o for o in owners}
    recalled: list[tuple[Owner, Input]] = []
    given: dict[str, list[Input]] = {}
    for where, inputs in missing.items():
        for i in inputs:
            owner = by_name.get(i.owner or "")
            if owner is not None and _is_figure(owner, i.name):
                recalled.append((owner, i))
            else:
                given.setdefault(where, []).append(i)
    return recalled, given


def _input_words(titles: Mapping[Owner, str], owners: Sequence[Owner], item: tuple[Owner, Input]) -> str:
    owner, read = item
    if read.name == "params":
        return f"{titles[owner]}: {PARAMS_WORDS}"
    figure = next((f for f in owner.figures if read.name in f.fields), None)
    return "" if figure is None else f"{titles[owner]}: {figure.words}"


def _note(withheld: Sequence[Withheld], also: Sequence[str]) -> str:
    """The line under a hard-mode prompt: what the markers stand for, what else to recall, the tolerance."""
    parts = [f"{w.marker} is {w.what}" for w in withheld]
    if also:
        parts.append("also from memory: " + "; ".join(also))
    said = "; ".join(parts) if parts else "no figure of a GPU or model is withheld from this question"
    tolerance = f"Answers are checked within ±{HARD_TOLERANCE:.0%}."
    return textwrap.fill(f"**Hard mode, from memory:** {said}. {tolerance}", GIVEN_WIDTH, break_on_hyphens=False)

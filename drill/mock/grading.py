"""Grading a mock answer so that the learner cannot inflate it: checked ticks, step credit, costed hints.

Any question kind (today's cards, a scenario's stages later) is graded into a `QuestionGrade`: its `score`
is what the mock reports, its `evidence` the part that rests on something drill checked (numbers, shapes, a
reading, rubric points ticked for an answer that names them). Only the evidence reaches the weakness figures
and the review log; a point ticked by the learner's override counts in the score and is shown as such.

- A rubric point may be ticked only for an answer of MIN_WORDS words or more that names at least one of the
  point's key terms (`key_terms`: its technical tokens and words rare across the decks, found in the answer by
  their stems; a point with none is named by its content words). For an answer of
  MIN_WORDS words or more the learner may tick it anyway, giving a reason, which is kept with the answer.
- A numeric answer earns STEP_SHARE of its score from the intermediate figures of the card's ledger that
  the learner's working shows (a right final answer vouches for its steps).
- A diagnosis read in the learner's own words earns the reading's whole share; choosing from the listed
  readings is a hint that costs CHOICES_COST of the question.
- A follow-up adds to the question it follows and never takes away (`with_follow_up`).
"""

from __future__ import annotations

import enum
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TypedDict

from drill.mock.term_rarity import TermRarity, bundled_rarity, common_words, is_technical, term_key, tokens
from drill.mock.term_rarity import stem as stem

# An answer shorter than this says too little for any rubric point to be ticked.
MIN_WORDS = 8
# The share of a numeric question earned by its intermediate steps; the rest by its final answers.
STEP_SHARE = 0.4
# The share of a diagnosis earned by the reading; the rest by the rubric points of the next experiment.
READING_SHARE = 0.5
# What showing a diagnosis's listed readings costs, as a share of the whole question.
CHOICES_COST = 0.2
# A follow-up's weight against the question it follows, and what its hint costs (of the follow-up's own score).
FOLLOW_UP_WEIGHT = 0.5
HINT_COST = 0.1
# A question scored at least this earns a deeper follow-up; below it, a hint and a narrower question.
STRONG_AT = 0.8

_WORD = re.compile(r"[A-Za-z0-9]+")
# A word more of the decks' cards use than this names nothing in particular (GPU, memory, time), however
# technical; a plain word the question itself says must be rarer than ASKED_SHARE to count as the point's.
COMMON_SHARE = 0.35
ASKED_SHARE = 0.25
# How many words of an answer may be read as one term: "all reduce" is all-reduce, "flash attention" its kernel.
_LONGEST_JOIN = 3


def words(text: str) -> list[str]:
    """The words of a typed answer (runs of letters and digits)."""
    return _WORD.findall(text)


def _is_term(word: str) -> bool:
    """A word that can name an idea: a technical token, or a word of three letters or more that is not general
    English; not a bare number."""
    if not any(ch.isalpha() for ch in word):
        return False
    if is_technical(word):
        return True
    return len(word) >= 3 and word.lower() not in common_words()


def said_keys(text: str) -> set[str]:
    """The keys (`term_key`) of every term `text` names: its words, its hyphenated terms, and runs of up to
    _LONGEST_JOIN words read as one (so "flash attention" names flash-attention and "GPU hour" GPU-hour)."""
    plain = words(text)
    keys = {term_key(t) for t in tokens(text)} | {stem(w) for w in plain}
    for size in range(2, _LONGEST_JOIN + 1):
        keys |= {term_key("".join(plain[i : i + size])) for i in range(len(plain) - size + 1)}
    return keys


def _distinct(terms: Iterable[str]) -> list[str]:
    """`terms` with each key once, as first spelled."""
    seen: set[str] = set()
    kept: list[str] = []
    for t in terms:
        if term_key(t) not in seen:
            seen.add(term_key(t))
            kept.append(t)
    return kept


def key_terms(point: str, prompt: str = "", rarity: TermRarity | None = None) -> tuple[str, ...]:
    """A rubric point's distinctive terms, rarest first: its technical tokens and its words few of the decks'
    cards use (`rarity`, the bundled decks' by default), never general English. A term the question also says
    stays when it is technical (RDMA) or rare enough (layer); a common plain word the question says (cost, in a
    question on cost) does not. Empty when the point has no distinctive term (see `content_words`)."""
    table = rarity if rarity is not None else bundled_rarity()
    asked = said_keys(prompt)
    kept = []
    for token in tokens(point):
        key = term_key(token)
        if not _is_term(token) or table.share(key) > COMMON_SHARE:
            continue
        if not is_technical(token) and key in asked and table.share(key) > ASKED_SHARE:
            continue
        kept.append(token)
    return tuple(sorted(_distinct(kept), key=lambda t: -table.idf(term_key(t))))


def content_words(point: str) -> tuple[str, ...]:
    """A point's words that are not general English (all its words where every one is): what an answer must
    name of a point with no distinctive term."""
    own = [t for t in tokens(point) if _is_term(t)]
    return tuple(_distinct(own or [t for t in tokens(point) if any(ch.isalpha() for ch in t)]))


@dataclass(frozen=True)
class PointCheck:
    """Whether an answer says enough to tick one rubric point: its length and the point's key terms in it."""

    point: str
    terms: tuple[str, ...]
    named: tuple[str, ...]  # the key terms the answer names
    word_count: int

    @property
    def long_enough(self) -> bool:
        """Whether the answer has the words any point needs (an override cannot stand in for them)."""
        return self.word_count >= MIN_WORDS

    @property
    def passed(self) -> bool:
        return self.long_enough and (bool(self.named) or not self.terms)

    def refusal(self) -> str:
        """Why the point cannot be ticked, in words ('' when it can)."""
        if not self.long_enough:
            return f"your answer has {self.word_count} of the {MIN_WORDS} words a point needs"
        if not self.passed:
            return f"your answer names none of this point's key terms ({', '.join(self.terms)})"
        return ""


def check_point(answer: str, point: str, prompt: str = "", rarity: TermRarity | None = None) -> PointCheck:
    """Whether `answer` may tick `point`: MIN_WORDS words or more, naming one of the point's distinctive terms
    (or, where it has none, one of its content words)."""
    terms = key_terms(point, prompt, rarity) or content_words(point)
    said = said_keys(answer)
    named = tuple(t for t in terms if term_key(t) in said)
    return PointCheck(point, terms, named, len(words(answer)))


class TickBasis(enum.Enum):
    """Why a rubric point counts: the answer passed its check, or the learner ticked it anyway with a reason."""

    CHECKED = "checked"
    OVERRIDDEN = "overridden"


@dataclass(frozen=True)
class Tick:
    point: int  # index into the rubric
    basis: TickBasis
    reason: str = ""  # the learner's reason for an override


class TickJSON(TypedDict):
    point: str
    basis: str
    reason: str


@dataclass(frozen=True)
class RubricGrade:
    """The rubric points ticked for one answer, each with why it counts."""

    points: tuple[str, ...]
    ticks: tuple[Tick, ...]

    def _share(self, ticks: Iterable[Tick]) -> float:
        return len({t.point for t in ticks}) / len(self.points) if self.points else 0.0

    @property
    def score(self) -> float:
        return self._share(self.ticks)

    @property
    def evidence(self) -> float:
        return self._share(t for t in self.ticks if t.basis is TickBasis.CHECKED)

    def missed(self) -> list[str]:
        ticked = {t.point for t in self.ticks}
        return [p for i, p in enumerate(self.points) if i not in ticked]

    def first_missed(self) -> int | None:
        ticked = {t.point for t in self.ticks}
        return next((i for i in range(len(self.points)) if i not in ticked), None)

    def overrides(self) -> list[TickJSON]:
        return [
            TickJSON(point=self.points[t.point], basis=t.basis.value, reason=t.reason)
            for t in self.ticks
            if t.basis is TickBasis.OVERRIDDEN
        ]


@dataclass(frozen=True)
class ReadingMatch:
    """Which listed reading a diagnosis typed in the learner's words names: `index`, or None with `why`."""

    index: int | None
    why: str = ""


def read_choice(text: str, choices: Sequence[str]) -> ReadingMatch:
    """The listed reading that `text` names: the one with the most of its distinctive words (those no other
    reading uses) in the text. None when it names none of them, or two as strongly."""
    stems = [{term_key(w) for w in tokens(c) if _is_term(w)} for c in choices]
    said = said_keys(text)
    counts = []
    for i, own in enumerate(stems):
        others = set().union(*(s for j, s in enumerate(stems) if j != i))
        counts.append(len((own - others) & said))
    best = max(counts, default=0)
    if best == 0:
        return ReadingMatch(None, "your reading names none of the bottlenecks this evidence is read for")
    if counts.count(best) > 1:
        return ReadingMatch(None, "your reading names more than one bottleneck: say which one bounds it")
    return ReadingMatch(counts.index(best))


@dataclass(frozen=True)
class QuestionGrade:
    """One answer's grade: `score` as the mock reports it, `evidence` the part drill checked, the points or
    figures missed, the overrides and hints the learner used, and what was graded in words."""

    score: float
    evidence: float
    missed: tuple[str, ...] = ()
    overrides: tuple[TickJSON, ...] = ()
    hints: tuple[str, ...] = ()
    parts: tuple[str, ...] = ()
    first_missed: int | None = None  # the first rubric point, step or ledger step missed: a narrower question's

    def as_json(self) -> "GradeJSON":
        return GradeJSON(
            score=round(self.score, 4),
            evidence=round(self.evidence, 4),
            missed=list(self.missed),
            overrides=list(self.overrides),
            hints=list(self.hints),
            parts=list(self.parts),
        )


class GradeJSON(TypedDict):
    score: float
    evidence: float
    missed: list[str]
    overrides: list[TickJSON]
    hints: list[str]
    parts: list[str]


def grade_from_json(data: object) -> QuestionGrade | None:
    """A grade as `QuestionGrade.as_json` kept it; None for anything else (an answer saved before grades were)."""
    if not isinstance(data, dict) or not isinstance(data.get("score"), (int, float)):
        return None
    return QuestionGrade(
        score=float(data["score"]),
        evidence=float(data.get("evidence", 0.0)),
        missed=tuple(str(m) for m in data.get("missed", [])),
        overrides=tuple(data.get("overrides", [])),
        hints=tuple(str(h) for h in data.get("hints", [])),
        parts=tuple(str(p) for p in data.get("parts", [])),
    )


def grade_rubric(rubric: RubricGrade) -> QuestionGrade:
    """An explanation graded by its rubric points."""
    parts = (f"{len(rubric.points) - len(rubric.missed())} of {len(rubric.points)} rubric points",)
    return QuestionGrade(
        rubric.score,
        rubric.evidence,
        tuple(rubric.missed()),
        tuple(rubric.overrides()),
        (),
        parts,
        rubric.first_missed(),
    )


def grade_diagnosis(reading_right: bool, choices_shown: bool, rubric: RubricGrade, correct: str) -> QuestionGrade:
    """A diagnosis: the reading (in the learner's words, or chosen from the list at CHOICES_COST), then the
    next experiment's rubric points."""
    reading = READING_SHARE if reading_right else 0.0
    if reading_right and choices_shown:
        reading -= CHOICES_COST
    rest = 1.0 - READING_SHARE
    missed = ([] if reading_right else [f"the evidence points to {correct}"]) + rubric.missed()
    hints = ("the listed readings were shown",) if choices_shown else ()
    how = "chosen from the list" if choices_shown else "in your words"
    parts = (f"reading {'right' if reading_right else 'wrong'} ({how})", *grade_rubric(rubric).parts)
    return QuestionGrade(
        reading + rest * rubric.score,
        reading + rest * rubric.evidence,
        tuple(missed),
        tuple(rubric.overrides()),
        hints,
        parts,
        rubric.first_missed(),
    )


def grade_steps(right: Sequence[bool], labels: Sequence[str]) -> QuestionGrade:
    """A question checked step by step (a shape trace): the share of steps right."""
    share = sum(right) / len(right) if right else 0.0
    missed = tuple(label for ok, label in zip(right, labels) if not ok)
    first = next((i for i, ok in enumerate(right) if not ok), None)
    return QuestionGrade(share, share, missed, (), (), (f"{sum(right)} of {len(right)} steps right",), first)


@dataclass(frozen=True)
class LedgerGrade:
    """A numeric question: its final answers right, and the ledger's intermediate figures the working showed."""

    finals_right: int
    finals: int
    steps_shown: tuple[str, ...] = ()
    steps: tuple[str, ...] = ()  # the ledger's terms whose figure the question does not state
    missed_finals: tuple[str, ...] = ()
    first_missing: int | None = None  # the ledger index of the first step the working did not show

    @property
    def score(self) -> float:
        final = self.finals_right / self.finals if self.finals else 0.0
        if not self.steps:
            return final
        shown = len(self.steps_shown) / len(self.steps)
        return (1 - STEP_SHARE) * final + STEP_SHARE * max(final, shown)

    def grade(self) -> QuestionGrade:
        missing_steps = tuple(s for s in self.steps if s not in self.steps_shown)
        parts = [f"{self.finals_right} of {self.finals} answers right"]
        if self.steps and self.finals_right < self.finals:  # right answers vouch for their steps
            parts.append(f"{len(self.steps_shown)} of {len(self.steps)} steps shown in the working")
        missed = self.missed_finals + tuple(f"step: {s}" for s in missing_steps if self.finals_right < self.finals)
        first = self.first_missing if self.finals_right < self.finals else None
        return QuestionGrade(self.score, self.score, missed, (), (), tuple(parts), first)


def with_follow_up(before: float, follow_up: float, hinted: bool = False) -> float:
    """A question's score with its follow-up's: the follow-up weighs FOLLOW_UP_WEIGHT against it, less
    HINT_COST when it came with a hint, and can only raise it (an interviewer's probe never costs the answer
    that earned it)."""
    earned = max(0.0, follow_up - (HINT_COST if hinted else 0.0))
    blended = (before + FOLLOW_UP_WEIGHT * earned) / (1 + FOLLOW_UP_WEIGHT)
    return max(before, blended)

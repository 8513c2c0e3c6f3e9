"""Searching every card by words, phrases and filters (a card's review history is read through drill.workspace).

Words and phrases are found by SQLite's FTS5 (drill.store.search) and ranked by
relevance (bm25: a word of the id or a tag counts most); filters are sets of card
positions held here. The FTS5 table is filled once per set of decks, so a search
keeps up with typing on a deck of 10,000 cards (bench/browse.py measures it).

Words are searched as people say them: each form of the field's abbreviations and
compounds (cards/data/search-words.yaml: TP, tensor parallel; FlashAttention,
flash attention) finds the others, two typed words also find the one word they make
when the cards write it so (`kv cache` finds kvcache), and a query that finds little
gets a "did you mean" from the words of the cards themselves.
"""

from __future__ import annotations

import datetime as dt
import difflib
import hashlib
import json
import random
import re
from collections.abc import Collection, Iterable, Mapping

from drill.cards.model import Card
from drill.cards.search_words import SearchWords, Words, bundled_search_words, words_of
from drill.store.search import MARK_END, MARK_START, AnyOf, SearchTable, Term, Vocabulary
from drill.study.records import CardState

FILTERS = ("topic", "kind", "tag", "is", "id")
# A form found also as the start of a longer word has at least this many letters: tp, kv or moe begin too many
# other words (tpot, tpu) to stand for their meaning as a prefix.
PREFIX_LETTERS = 4
# A query that finds fewer cards than this gets a "did you mean" for its words that no card holds.
FEW_FOUND = 3
# What `is:` takes: a card's schedule word, its flags, and whether it was graded this study day.
IS_LABELS = ("new", "due", "learning", "review", "leech", "suspended", "buried", "today")
# Split once per query: key:"a phrase", "a phrase" (closed or still being typed), or a word.
_TOKENS = re.compile(r'(\w+):"([^"]*)("?)|"([^"]*)("?)|(\S+)')


def state_labels(state: CardState | None, today: dt.date) -> tuple[str, ...]:
    """Where the card stands: its schedule word first (new, due, learning, review), then leech, suspended, buried.

    Learning means the first two SM-2 steps (1 and 6 days), or starting over after a lapse. A card graded below 4
    today is due: it comes back today, as the queue and `drill stats` count it.
    """
    if state is None or state.is_new:
        labels = ["new"]
    else:
        buried = state.buried_until is not None and state.buried_until > today
        again_today = state.repeat_pending and state.last_review_day == today
        due_by_date = state.due is not None and state.due <= today
        if (again_today or due_by_date) and not state.suspended and not buried:
            labels = ["due"]
        else:
            labels = ["learning" if state.sm2.repetitions < 2 else "review"]
    if state is not None:
        if state.leech:
            labels.append("leech")
        if state.suspended:
            labels.append("suspended")
        if state.buried_until is not None and state.buried_until > today:
            labels.append("buried")
    return tuple(labels)


def _flat(text: str) -> str:
    return " ".join(text.lower().split())


# the names the browser's list shows for two kinds: typed after `kind:` they find those kinds too
SHORT_KINDS = {"memory_ledger": "ledger", "shape_trace": "shapes"}
KIND_ALIASES = {short: kind for kind, short in SHORT_KINDS.items()}


def _kind(text: str) -> str:
    name = text.lower().replace("-", "_")
    return KIND_ALIASES.get(name, name)


def _rows(cards: Mapping[str, Card], ids: Iterable[str]) -> list[tuple[str, ...]]:
    """Each card's searchable text, in drill.store.search's column order (id, prompt, answer, tags, topic, deck)."""
    return [
        (cid, cards[cid].prompt, cards[cid].answer, " ".join(cards[cid].tags), cards[cid].topic, cards[cid].deck)
        for cid in ids
    ]


# The last decks' FTS5 table and the hash of the text it holds: opening the browser again on the same
# decks reuses it; decks whose text changed in any way (another --decks, an edited card) get a new one.
_last_table: tuple[str, SearchTable] | None = None


def search_table(rows: list[tuple[str, ...]]) -> SearchTable:
    """The FTS5 table holding these rows (a card's position is its row's), filled again only when their text changed."""
    global _last_table
    blob = json.dumps(rows, ensure_ascii=False).encode("utf-8", "surrogatepass")
    key = hashlib.sha256(blob).hexdigest()
    if _last_table is None or _last_table[0] != key:
        _last_table = (key, SearchTable(rows))
    return _last_table[1]


class CardIndex:
    """Every card's text in an FTS5 table, and a set of card positions per topic, kind, tag and label.

    Cards are held in id order (their positions). `studied`: the ids of the cards
    graded this study day (`is:today`).
    """

    def __init__(
        self,
        cards: Mapping[str, Card],
        states: Mapping[str, CardState],
        today: dt.date,
        studied: Collection[str] = (),
    ) -> None:
        self.today = today
        self.states: dict[str, CardState] = dict(states)
        self.studied: set[str] = set(studied)
        self.ids: list[str] = sorted(cards)
        self.position = {cid: i for i, cid in enumerate(self.ids)}
        self.lower_ids = [cid.lower() for cid in self.ids]
        self.prompts = [cards[cid].prompt for cid in self.ids]
        self.labels: dict[str, tuple[str, ...]] = {}
        self.by: dict[str, dict[str, set[int]]] = {key: {} for key in FILTERS if key != "id"}
        by_topic = self.by["topic"]
        by_kind = self.by["kind"]
        by_tag = self.by["tag"]
        for i, cid in enumerate(self.ids):
            card = cards[cid]
            by_topic.setdefault(card.topic.lower(), set()).add(i)
            by_kind.setdefault(_kind(card.kind), set()).add(i)
            for tag in card.tags:
                by_tag.setdefault(tag.lower(), set()).add(i)
            self._label(i)
        self.table = search_table(_rows(cards, self.ids))

    def __len__(self) -> int:
        return len(self.ids)

    def _label(self, position: int) -> None:
        cid = self.ids[position]
        labels = state_labels(self.states.get(cid), self.today)
        if cid in self.studied:
            labels += ("today",)
        self.labels[cid] = labels
        for label in labels:
            self.by["is"].setdefault(label, set()).add(position)

    def _relabel(self, card_id: str) -> None:
        i = self.position[card_id]
        for label in self.labels[card_id]:
            self.by["is"][label].discard(i)
        self._label(i)

    def update_state(self, state: CardState) -> None:
        """Take in a card's new state (after an unsuspend, say)."""
        if state.card_id not in self.position:
            return
        self.states[state.card_id] = state
        self._relabel(state.card_id)

    def mark_studied(self, card_ids: Iterable[str]) -> None:
        """Take in cards graded this study day (read from the log, or just practised)."""
        for card_id in card_ids:
            if card_id in self.position and card_id not in self.studied:
                self.studied.add(card_id)
                self._relabel(card_id)


def parse_query(query: str) -> tuple[list[tuple[str, str]], list[Term]]:
    """The query's filters as (key, value) pairs, and its words and phrases as terms to find.

    A word may be the start of a longer one (it is still being typed); so may the
    last word of a phrase whose closing quote is not typed yet; a closed phrase
    is found as typed. A filter with nothing after the colon yet (`topic:` while
    typing) is left out; a key that is not a filter is plain text.
    """
    filters: list[tuple[str, str]] = []
    terms: list[Term] = []
    for match in _TOKENS.finditer(query):
        key, quoted_value, key_closed, phrase, phrase_closed, word = match.groups()
        if key is not None:
            value = _flat(quoted_value)
            if key.lower() in FILTERS:
                if value:
                    filters.append((key.lower(), value))
            elif value:
                terms.append(Term(f"{key.lower()}:{value}", prefix=not key_closed))
            continue
        if phrase is not None:
            if _flat(phrase):
                terms.append(Term(_flat(phrase), prefix=not phrase_closed))
            continue
        name, colon, value = word.partition(":")
        if colon and name.lower() in FILTERS:
            if value:
                filters.append((name.lower(), value.lower()))
        else:
            terms.append(Term(word.lower()))
    return filters, terms


def _did_you_mean(typed: str, names: Iterable[str], key: str) -> str:
    close = difflib.get_close_matches(typed, list(names), n=1)
    return f", did you mean {key}:{close[0]}?" if close else ""


def unknown_filters(index: CardIndex, query: str) -> list[str]:
    """A line for each filter of the query that no card can meet, with the name it may mean.

    A topic:, kind:, is: or tag: value that no name starts with (listing the names
    a topic:, kind: or is: takes; a deck has too many tags to list), and a word
    spelt like a filter that is not one (`topc:gemm`, searched for as text).
    """
    out = []
    filters, terms = parse_query(query)
    for key, value in filters:
        if key == "id":
            continue
        known = sorted(IS_LABELS) if key == "is" else sorted(index.by[key])
        if key == "kind":
            value = _kind(value)
            names = sorted({SHORT_KINDS.get(k, k) for k in known})
        else:
            names = known
        if any(k.startswith(value) for k in known):
            continue
        shown = value if key != "kind" else SHORT_KINDS.get(value, value)
        takes = "" if key == "tag" else f" ({key}: takes {', '.join(names)})"
        out.append(f"no {key} {shown!r}{_did_you_mean(shown, names, key)}{takes}")
    filter_names = sorted(FILTERS)
    for term in terms:  # `topc:gemm` is searched for as text: say which filter it may mean
        name, colon, _ = term.text.partition(":")
        close = difflib.get_close_matches(name, filter_names, n=1) if colon and name.isalpha() else []
        if close:  # a near miss; any other word with a colon (a URL, a ratio) is plain text
            listed = ", ".join(f"{n}:" for n in filter_names)
            out.append(f"no filter {name}:, did you mean {close[0]}:? (filters: {listed})")
    return out


def _as_prefix(words: Words, typed_prefix: bool) -> bool:
    """Whether a form is also the start of longer words: while being typed, and not a short abbreviation."""
    return typed_prefix and len(words[-1]) >= PREFIX_LETTERS


def _said_otherwise(typed: Words, prefix: bool, known: SearchWords, vocabulary: Vocabulary) -> list[Term]:
    """The other ways of writing these words, as phrases: the forms of their entry, or the one word they make."""
    entry = known.term_of(typed)
    if entry is not None:
        forms = [Term(" ".join(words), _as_prefix(words, prefix)) for words in entry.spellings if words != typed]
        # tensor parallelism adds nothing to tensor parallel* (it begins with it), nor to the words typed
        said = [Term(" ".join(typed), _as_prefix(typed, prefix)), *forms]
        return [form for form in forms if not any(_covers(other, form) for other in said if other is not form)]
    if len(typed) == 2:
        joined = typed[0] + typed[1]
        if vocabulary.knows(joined, prefix=prefix):
            return [Term(joined, prefix)]
    return []


def _covers(wider: Term, term: Term) -> bool:
    """Whether every text the term matches, the wider one matches too (its words, the last as a prefix)."""
    wide = wider.text.split()
    words = term.text.split()
    if not wider.prefix or len(wide) != len(words) or wide[:-1] != words[:-1]:
        return False
    return words[-1].startswith(wide[-1]) and (words[-1] != wide[-1] or term.prefix)


def widened(terms: list[Term], known: SearchWords, vocabulary: Vocabulary) -> list[Term | AnyOf]:
    """The terms with the other ways of writing them: each an AnyOf of what was typed and its other forms.

    Typed words next to each other (`tensor parallel`, `flash attention`) are taken
    together when they are a form of the search words or make a word of the cards;
    a phrase or a hyphenated word (`all-reduce`) is matched as a whole. What was
    typed still finds what it found before (the words anywhere, in any order); the
    other forms add cards, and a card saying it several ways ranks higher. A short
    abbreviation typed (`tp`) is a whole word: tpot is another thing.
    """
    out: list[Term | AnyOf] = []
    i = 0
    while i < len(terms):
        term = terms[i]
        if " " in term.text:  # a phrase: its words in order, with its other forms
            out.append(_phrase_forms(term, known, vocabulary))
            i += 1
            continue
        run = 1
        while i + run < len(terms) and " " not in terms[i + run].text and run < max(known.longest, 2):
            run += 1
        for length in range(run, 0, -1):  # the longest run of words said another way
            typed_terms = terms[i : i + length]
            typed = tuple(word for t in typed_terms for word in words_of(t.text))
            last_prefix = typed_terms[-1].prefix
            others = _said_otherwise(typed, last_prefix, known, vocabulary) if typed else []
            if others:
                if known.term_of(typed) is not None and not _as_prefix(typed, last_prefix):
                    typed_terms = [*typed_terms[:-1], Term(typed_terms[-1].text, prefix=False)]
                options = [tuple(typed_terms)]
                if length > 1:  # the words side by side count too, for the ranking
                    options.append((Term(" ".join(typed), _as_prefix(typed, last_prefix)),))
                options += [(other,) for other in others]
                out.append(AnyOf(tuple(options)))
                i += length
                break
        else:
            out.append(term)
            i += 1
    return out


def _phrase_forms(term: Term, known: SearchWords, vocabulary: Vocabulary) -> Term | AnyOf:
    """A phrase and the same phrase with its first run of words said another way (flash attention: flashattention)."""
    words = words_of(term.text)
    for start in range(len(words)):
        for end in range(min(len(words), start + max(known.longest, 2)), start, -1):
            at_end = end == len(words)
            others = _said_otherwise(words[start:end], term.prefix and at_end, known, vocabulary)
            if others:
                options = [(term,)]
                for other in others:
                    text = " ".join([*words[:start], other.text, *words[end:]])
                    options.append((Term(text, other.prefix if at_end else term.prefix),))
                return AnyOf(tuple(options))
    return term


def _search_terms(index: CardIndex, terms: list[Term]) -> list[Term | AnyOf]:
    return widened(terms, bundled_search_words(), index.table.vocabulary()) if terms else []


def matches(index: CardIndex, query: str) -> list[str]:
    """Every card id the query finds: all its words and filters must hold.

    With words, the most relevant card comes first (bm25 over id, prompt, answer,
    tags, topic and deck); with filters alone, due cards first, then by id.

    `topic:`, `kind:`, `tag:` and `is:` take a whole name, or the start of one while
    no name is spelled out in full (`topic:coll` finds collectives); `id:` takes any
    part of an id; a word finds the words it starts (`flash` finds flashattention),
    a "quoted phrase" those words in that order within one field; each word or
    phrase also finds its other forms (see `widened`).
    """
    filters, typed = parse_query(query)
    terms = _search_terms(index, typed)
    allowed: set[int] | None = None
    id_parts: list[str] = []
    for key, value in filters:
        if key == "id":
            id_parts.append(value)
            continue
        found = _named(index.by[key], _kind(value) if key == "kind" else value)
        allowed = found if allowed is None else allowed & found
    ranked = index.table.ranked(terms)
    if ranked is not None:
        positions = ranked if allowed is None else [i for i in ranked if i in allowed]
    else:
        positions = list(range(len(index))) if allowed is None else sorted(allowed)
    ids = index.lower_ids
    for part in id_parts:
        positions = [i for i in positions if part in ids[i]]
    if ranked is not None:
        return [index.ids[i] for i in positions]
    due = index.by["is"].get("due", set())
    return [index.ids[i] for i in positions if i in due] + [index.ids[i] for i in positions if i not in due]


def _named(table: Mapping[str, set[int]], value: str) -> set[int]:
    """The cards filed under `value`, or while it is still being typed, under every name it begins."""
    if value in table:
        return set(table[value])
    return set().union(*(cards for name, cards in table.items() if name.startswith(value)))


def search(index: CardIndex, query: str, limit: int = 200) -> list[str]:
    """The first `limit` card ids the query finds (see `matches`); an empty query lists every card."""
    return matches(index, query)[:limit]


def suggestion(index: CardIndex, query: str) -> str | None:
    """The query with its misspelt words corrected, when it finds fewer than FEW_FOUND cards and the correction more.

    A misspelt word is one no card holds (nor begins with, for a word still being
    typed); it is replaced by the nearest word of the cards (drill.store.search.Vocabulary).
    """
    found = len(matches(index, query))
    if found >= FEW_FOUND:
        return None
    vocabulary = index.table.vocabulary()
    corrected = query
    for term in parse_query(query)[1]:
        words = words_of(term.text)
        for n, word in enumerate(words):
            prefix = term.prefix and n == len(words) - 1
            if vocabulary.knows(word, prefix=prefix):
                continue
            near = vocabulary.nearest(word, prefix=prefix)
            if near is not None:
                corrected = re.sub(rf"(?<![^\W_]){re.escape(word)}(?![^\W_])", near, corrected, flags=re.IGNORECASE)
    if corrected == query or len(matches(index, corrected)) <= found:
        return None
    return corrected


def spelling_hints(index: CardIndex, query: str) -> list[str]:
    """A "did you mean" line for a query that finds little, or none."""
    corrected = suggestion(index, query)
    return [] if corrected is None else [f"did you mean: {corrected}"]


def matching_line(index: CardIndex, card_id: str, query: str) -> str:
    """The first line of the card's prompt, else of its answer, holding a word the query matched.

    The prompt's first line when the words matched elsewhere (the id, a tag) or the
    query has no words.
    """
    card_text = index.table.highlighted(index.position[card_id], _search_terms(index, parse_query(query)[1]))
    if card_text is not None:
        for text in card_text:
            for line in text.splitlines():
                if MARK_START in line:
                    return " ".join(line.replace(MARK_START, "").replace(MARK_END, "").split())
    prompt = index.prompts[index.position[card_id]]
    return next((" ".join(line.split()) for line in prompt.splitlines() if line.strip()), "")


_TEMPLATE_TAG = re.compile(r"\{\{.*?\}\}|\{%.*?%\}|\{#.*?#\}")


def rendered_line(card: Card, line: str) -> str:
    """`line` of the card's text as a review shows it: a line holding template tags (`{{ model.title }}`) is
    replaced by the line of the rendered prompt (`preview_prompt`) that holds its longest literal part, else by
    the rendered prompt's first line. A line without tags is returned as it is."""
    if not _TEMPLATE_TAG.search(line):
        return line
    literal = max((part.strip() for part in _TEMPLATE_TAG.split(line)), key=len, default="")
    rendered = [" ".join(text.split()) for text in preview_prompt(card).splitlines() if text.strip()]
    holding = next((text for text in rendered if literal and literal in text), None)
    return holding if holding is not None else next(iter(rendered), "")


def preview_prompt(card: Card) -> str:
    """The prompt as a review shows it: a parameterised card rendered with one draw fixed by its id.

    A card whose numbers cannot be drawn (one `drill check` rejects) says so
    rather than show its template text.
    """
    if card.kind == "scenario":
        from drill.cards.scenario import scenario_preview

        return scenario_preview(card)
    if card.kind != "memory_ledger":
        return card.prompt
    from drill.cards.templating import TemplateProblem, draw_params, render

    try:
        return render(card, draw_params(card, random.Random(card.id))).prompt
    except TemplateProblem as exc:
        return f"(its numbers could not be drawn: {exc})"

"""Load YAML decks into validated Cards, with `path:line` on every problem."""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Mapping

from drill import paths
from drill.cards.kinds import COMMON_FIELDS, KINDS, describe, type_name
from drill.cards.model import Card, Problem
from drill.cards.salvage import each_card_alone
from drill.textsafe import shown, shown_fields
from drill.words import counted

# YAML is imported only where a deck or the topic list is parsed: a start from the deck cache
# (drill.cards.deck_cache) never imports it.
if TYPE_CHECKING:
    import yaml

ID_PATTERN = re.compile(r"^[a-z0-9][a-z0-9._-]*$")
# Far above any real card or deck (the longest bundled deck is under 100 KB), far below what stalls the app.
_KB = 1024  # the kilobyte and megabyte these limits are stated in
_MB = 1024 * _KB
MAX_FIELD_CHARS = 64 * _KB
MAX_DECK_BYTES = 4 * _MB
FIELD_LIMIT_WORDS = f"a card field may hold at most {MAX_FIELD_CHARS:,} characters ({MAX_FIELD_CHARS // _KB} KB)"
DECK_LIMIT_WORDS = f"a deck file may be at most {MAX_DECK_BYTES // _MB} MB (split it into several files)"


def _megabytes(size: int) -> str:
    return f"{size / _MB:,.1f} MB"


def _text_size(value: Any) -> int:
    """The characters of text in a field's value, its lists and mappings included (their depth is bounded)."""
    if isinstance(value, str):
        return len(value)
    if isinstance(value, dict):
        return sum(_text_size(k) + _text_size(v) for k, v in value.items())
    if isinstance(value, list):
        return sum(_text_size(v) for v in value)
    return 0


def _yaml_loader() -> Any:
    import yaml

    return getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@dataclass
class DeckSet:
    """Cards from one or more decks, every problem found on the way, and (on a deep load) every warning."""

    cards: dict[str, Card] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)
    warnings: list[Problem] = field(default_factory=list)

    def left_out(self) -> str:
        """For a command that goes on without the broken cards (when there are problems): one line saying so."""
        return f"{counted(len(self.problems), 'problem')} in the decks, those cards left out (`drill check` lists them)"


@lru_cache(maxsize=1)
def known_topics() -> dict[str, dict[str, Any]]:
    """The topic list (cards/data/topics.yaml) by id; read once, or taken from the deck cache."""
    if _cached_topics is not None:
        return _cached_topics
    import yaml

    path = paths.data_files_dir() / "topics.yaml"
    data = yaml.load(path.read_text(encoding="utf-8"), Loader=_yaml_loader()) or {}
    return {t["id"]: t for t in data.get("topics", [])}


_cached_topics: dict[str, dict[str, Any]] | None = None  # the topic list as the deck cache saved it


def use_cached_topics(topics: dict[str, dict[str, Any]]) -> None:
    """Give known_topics the topic list the deck cache saved, so a start from the cache reads no YAML."""
    global _cached_topics
    _cached_topics = topics


def deck_files(roots: Iterable[Path]) -> list[Path]:
    """YAML deck files under the given files or folders; `data/` folders hold no decks."""
    found: list[Path] = []
    for root in roots:
        root = Path(root)
        if root.is_file():
            found.append(root)
        elif root.is_dir():
            for p in sorted(root.rglob("*.y*ml")):
                if p.suffix in (".yaml", ".yml") and "data" not in p.relative_to(root).parts[:-1]:
                    found.append(p)
    return found


def _id_pattern(card_id: str) -> re.Pattern[bytes]:
    """`id: <card_id>` as a deck writes it: block or flow style, quoted or not, with a comment after it or not."""
    quoted = rb"['\"]?"
    return re.compile(
        rb"(?<![\w-])id:[ \t]*" + quoted + re.escape(card_id.encode()) + quoted + rb"(?=[ \t]*(?:[,}#\r\n]|$))"
    )


def load_deck_of(card_id: str, roots: Iterable[Path] | None = None) -> DeckSet | None:
    """The one deck file that defines `card_id`, loaded alone: a command about one card need not parse every deck.

    None when no file, or more than one place, gives that id (load_decks then finds the card, or reports
    the duplicate), or when a file cannot be read.
    """
    roots = [paths.cards_dir()] if roots is None else list(roots)
    pattern = _id_pattern(card_id)
    holders: list[tuple[Path, bytes]] = []
    for path in deck_files(roots):
        try:
            data = path.read_bytes()
        except OSError:
            return None
        holders.extend((path, data) for _ in pattern.finditer(data))
    if len(holders) != 1:
        return None
    path, data = holders[0]
    return load_decks([path], read={path: data})


def load_decks(
    roots: Iterable[Path] | None = None, *, deep: bool = False, read: Mapping[Path, bytes] | None = None
) -> DeckSet:
    """Load every deck under `roots` (default: the bundled decks).

    `deep` also runs each kind's own check (templates render, kernels compile...),
    which `drill check` wants and the app's start-up does not. `read`: the files' bytes as the caller
    already read them (the deck cache, which keys its cache on the same bytes); others are read here.
    """
    roots = [paths.cards_dir()] if roots is None else list(roots)
    result = DeckSet()
    seen: dict[str, Card] = {}
    for root in roots:
        if not Path(root).exists():
            result.problems.append(Problem(str(root), 0, "-", "no such file or folder"))
    for path in deck_files(roots):
        for item in _load_file(path, None if read is None else read.get(path)):
            if isinstance(item, Caution):  # the card loads; `drill check` says what was wrong
                if deep:
                    result.warnings.append(item)
                continue
            if isinstance(item, Problem):
                result.problems.append(item)
                continue
            card = item
            if card.id in seen:
                first = seen[card.id]
                result.problems.append(
                    Problem(str(card.path), card.line, card.id, f"duplicate id: also defined at {first.where}")
                )
                continue
            seen[card.id] = card
            if deep:
                try:
                    messages = KINDS[card.kind].check(card)
                except Exception as exc:  # a checker bug must not hide the deck's other problems
                    messages = [f"could not be checked: {type(exc).__name__}: {exc}"]
                result.problems.extend(Problem(str(card.path), card.line, card.id, m) for m in messages)
                warnings = KINDS[card.kind].advise(card)
                result.warnings.extend(Problem(str(card.path), card.line, card.id, f"warning: {m}") for m in warnings)
    result.cards = seen
    result.problems.extend(_follow_up_problems(seen))
    return result


def _follow_up_problems(cards: dict[str, Card]) -> list[Problem]:
    """Every `follow_ups` id must name another card of the loaded decks."""
    problems = []
    for card in cards.values():
        for other in card.follow_ups:
            if other == card.id:
                message = "`follow_ups` names the card itself"
            elif other not in cards:
                hint = _closest(other, cards)
                message = f"`follow_ups` names unknown card {other[:80]!r}"
                if hint:
                    message += f" (did you mean {hint!r}?)"
            else:
                continue
            problems.append(Problem(str(card.path), card.line, card.id, message))
    return problems


# What each deck file gave, by (path, its text, the topic list's identity): a process that loads the decks
# again (the stats and mock screens, a second app in the tests) parses only the files that changed.
_parsed: dict[tuple[str, str, int], list[Card | Problem]] = {}


def _load_file(path: Path, data: bytes | None = None) -> list[Card | Problem]:
    """The cards and problems of one deck file; `data`: its bytes, when they were read already."""
    where = str(path)
    try:
        size = path.stat().st_size if data is None else len(data)
        if size > MAX_DECK_BYTES:  # never read: parsing 50 MB of YAML held the app at a blank screen for minutes
            return [Problem(where, 0, "-", f"is {_megabytes(size)}; {DECK_LIMIT_WORDS}")]
        text = path.read_text(encoding="utf-8") if data is None else deck_text(data)
    except (OSError, UnicodeDecodeError) as exc:
        return [Problem(where, 0, "-", f"cannot read: {exc}")]
    key = (where, text, id(known_topics()))
    if key not in _parsed:
        while len(_parsed) >= 64:
            del _parsed[next(iter(_parsed))]
        _parsed[key] = _load_text(text, path, salvage=True)  # cards and problems are frozen: shared safely
    return list(_parsed[key])


def deck_text(data: bytes) -> str:
    """A deck file's bytes as `Path.read_text` gives them: UTF-8, each line ending read as a newline."""
    return data.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")


def _load_text(text: str, path: Path, *, salvage: bool = False) -> list[Card | Problem]:
    import yaml

    from drill.cards.yaml_guards import FILE_MAX_DEPTH, file_shape

    where = str(path)
    shape = file_shape(text)
    if shape.too_deep_at is not None:
        message = f"nested more than {FILE_MAX_DEPTH:,} levels deep; the file cannot be read safely"
        return [Problem(where, shape.too_deep_at, "-", message)]
    loader = _yaml_loader()(text)
    try:
        try:
            root = loader.get_single_node()
        except yaml.MarkedYAMLError as exc:
            cards = each_card_alone(text, path, _load_text) if salvage else None
            if cards is not None:  # the cards around the broken one still load
                return cards
            return [Problem(where, _line(exc), "-", f"YAML syntax error: {_yaml_message(exc)}")]
        except yaml.reader.ReaderError as exc:
            line = text.count("\n", 0, max(0, exc.position)) + 1
            code = ord(exc.character) if isinstance(exc.character, str) else int(exc.character)
            return [Problem(where, line, "-", f"YAML error: character U+{code:04X} is not allowed ({exc.reason})")]
        except yaml.YAMLError as exc:
            return [Problem(where, 1, "-", "YAML error: " + " ".join(str(exc).split()))]
        except RecursionError:
            return [Problem(where, 1, "-", "nested too deeply to read")]
        if root is None:
            return [Problem(where, 1, "-", "empty deck")]
        if not isinstance(root, yaml.MappingNode):
            return [Problem(where, root.start_mark.line + 1, "-", "a deck is a mapping with `deck:` and `cards:`")]
        top = {k.value: (k, v) for k, v in root.value if isinstance(k, yaml.ScalarNode)}
        out: list[Card | Problem] = []
        for key, (knode, _) in top.items():
            if key not in ("deck", "cards"):
                out.append(
                    Problem(where, knode.start_mark.line + 1, "-", f"unknown deck key `{key}` (expected deck, cards)")
                )
        deck_title = path.stem
        if "deck" in top:
            title = _construct(loader, top["deck"][1], where, "-", out, shape.measure_cards)
            deck_title = shown(str(title or path.stem))
        if "cards" not in top:
            out.append(Problem(where, 1, "-", "deck has no `cards:` list"))
            return out
        cards_node = top["cards"][1]
        if not isinstance(cards_node, yaml.SequenceNode):
            out.append(Problem(where, cards_node.start_mark.line + 1, "-", "`cards:` must be a list"))
            return out
        plain = _plain_text(text)
        for node in cards_node.value:
            out.extend(_card_from_node(loader, node, path, deck_title, shape.measure_cards, plain))
        return out
    finally:
        loader.dispose()


def _construct(loader: Any, node: yaml.Node, where: str, card_id: str, out: list[Any], measure: bool = True) -> Any:
    import yaml

    from drill.cards.yaml_guards import MAX_DEPTH, MAX_VALUES, expanded_size

    values = 0
    depth = 0
    if measure:
        values, depth = expanded_size(node)
    if values > MAX_VALUES:
        out.append(
            Problem(
                where,
                node.start_mark.line + 1,
                card_id,
                f"expands to more than {MAX_VALUES:,} values (YAML aliases used over and over?)",
            )
        )
        return None
    if depth > MAX_DEPTH:
        out.append(Problem(where, node.start_mark.line + 1, card_id, f"nested more than {MAX_DEPTH} levels deep"))
        return None
    try:
        if not measure:  # no anchors, so no alias shares a node: the quick path builds the same values
            return _value_of(loader, node)
        return loader.construct_object(node, deep=True)
    except RecursionError:
        out.append(Problem(where, node.start_mark.line + 1, card_id, "nested too deeply to read"))
    except yaml.MarkedYAMLError as exc:
        out.append(Problem(where, _line(exc, node), card_id, f"YAML error: {_yaml_message(exc)}"))
    except (yaml.YAMLError, ValueError, TypeError) as exc:
        out.append(Problem(where, node.start_mark.line + 1, card_id, f"YAML error: {exc}"))
    return None


def _card_from_node(
    loader: Any, node: yaml.Node, path: Path, deck: str, measure: bool, plain: bool = False
) -> list[Card | Problem]:
    """The card a deck's node holds, or its problems. `measure`: the file has anchors (aliases may multiply
    values); `plain`: its text holds no control character and no escape that could write one."""
    import yaml

    where = str(path)
    line = node.start_mark.line + 1
    if not isinstance(node, yaml.MappingNode):
        return [Problem(where, line, "-", "a card must be a mapping of keys to values")]
    key_lines = {k.value: k.start_mark.line + 1 for k, _ in node.value if isinstance(k, yaml.ScalarNode)}
    id_node = next((v for k, v in node.value if getattr(k, "value", None) == "id"), None)
    card_id = id_node.value if isinstance(id_node, yaml.ScalarNode) and id_node.value else "-"
    problems: list[Card | Problem] = []
    raw = _construct(loader, node, where, card_id, problems, measure)
    if problems or not isinstance(raw, dict):
        return problems or [Problem(where, line, card_id, "a card must be a mapping")]
    unsafe = None
    if not plain:
        raw, unsafe = shown_fields(raw)  # control characters shown, never sent to a terminal or an export
    cautions: list[Caution] = []
    if unsafe is not None:
        cautions.append(Caution(where, key_lines.get(unsafe[0], line), card_id, _unsafe(*unsafe)))

    def bad(key: str | None, message: str) -> None:
        problems.append(Problem(where, key_lines.get(key, line) if key else line, card_id, message))

    for key in raw:
        if not isinstance(key, str):
            bad(None, f"keys must be text, got {key!r}")
    # without aliases a card's values hold no more characters than its text spans
    if measure or _span(node) > MAX_FIELD_CHARS:
        for key, value in raw.items():
            size = _text_size(value)
            if size > MAX_FIELD_CHARS:
                bad(str(key), f"`{key}` holds {size:,} characters; {FIELD_LIMIT_WORDS}")
    if "id" not in raw:
        bad(None, "missing required field `id`")
        return problems
    if not isinstance(raw["id"], str) or not ID_PATTERN.match(raw["id"]):
        bad("id", f"id must be lowercase letters, digits, '.', '_' or '-' (got {raw['id']!r})")
        return problems
    kind = raw.get("kind")
    if kind is None:
        bad(None, "missing required field `kind`")
        return problems
    if not isinstance(kind, str) or kind not in KINDS:
        bad("kind", f"unknown kind {str(kind)[:80]!r} (known: {', '.join(KINDS)})")
        return problems
    spec = KINDS[kind]
    allowed = {**COMMON_FIELDS, **spec.fields}
    for key in raw:
        if isinstance(key, str) and key not in allowed:
            message = f"unknown key `{key}`"
            hint = _closest(key, allowed)
            if hint:
                message += f" (did you mean `{hint}`?)"
            bad(key, message)
    for name, (typ, required) in allowed.items():
        if name not in raw or raw[name] is None:
            if required:
                bad(None, f"missing required field `{name}`")
            continue
        value = raw[name]
        if not isinstance(value, typ) or isinstance(value, bool) and typ is not bool:
            bad(name, f"`{name}` must be {type_name(typ)}, got {describe(value)}")
        elif isinstance(value, str) and not value.strip() and required:
            bad(name, f"`{name}` is empty")
    for name in ("tags", "rubric", "sources", "follow_ups"):
        value = raw.get(name)
        if isinstance(value, list) and not all(isinstance(v, str) and v.strip() for v in value):
            bad(name, f"every item of `{name}` must be non-empty text")
    if isinstance(raw.get("sources"), list) and not raw["sources"]:
        bad("sources", "`sources` needs at least one source")
    topic = raw.get("topic")
    if isinstance(topic, str) and topic not in known_topics():
        bad("topic", f"unknown topic {topic!r} (see cards/data/topics.yaml)")
    if kind == "scenario" and not problems:  # each stage's keys, at the stage's own line
        from drill.cards.scenario_check import stage_shape_problems

        stage_lines = _item_lines(node, "stages")
        for index, message in stage_shape_problems(raw):
            if index is not None and index < len(stage_lines):
                at = stage_lines[index]
            else:  # the card's own key the message names ("round: ...")
                at = key_lines.get(message.partition(":")[0], line)
            problems.append(Problem(where, at, card_id, message))
    if problems:
        return problems
    common = set(COMMON_FIELDS)
    return [
        *cautions,
        Card(
            id=raw["id"],
            kind=kind,
            topic=raw["topic"],
            prompt=raw["prompt"],
            answer=raw["answer"],
            tags=tuple(raw.get("tags") or ()),
            rubric=tuple(raw.get("rubric") or ()),
            sources=tuple(raw["sources"]),
            follow_ups=tuple(raw.get("follow_ups") or ()),
            fields={k: v for k, v in raw.items() if k not in common},
            deck=deck,
            path=path,
            line=line,
            content_hash=content_hash(raw),
        ),
    ]


_STR_TAG = "tag:yaml.org,2002:str"
_MAP_TAG = "tag:yaml.org,2002:map"
_SEQ_TAG = "tag:yaml.org,2002:seq"
_KEY_TAGS = frozenset(
    (_STR_TAG, "tag:yaml.org,2002:int", "tag:yaml.org,2002:float", "tag:yaml.org,2002:bool", "tag:yaml.org,2002:null")
)


def _value_of(loader: Any, node: yaml.Node) -> Any:
    """What `loader.construct_object(node, deep=True)` builds, for a node graph without aliases: text, lists and
    plain mappings directly, anything else (numbers, dates, merge keys, other tags) by the loader itself.
    Building thousands of cards through the loader's generic path was most of a big deck's first start."""
    import yaml

    kind = type(node)
    if kind is yaml.ScalarNode:
        return node.value if node.tag == _STR_TAG else loader.construct_object(node, deep=True)
    if kind is yaml.SequenceNode and node.tag == _SEQ_TAG:
        return [_value_of(loader, item) for item in node.value]
    if kind is yaml.MappingNode and node.tag == _MAP_TAG:
        pairs = node.value
        if all(type(k) is yaml.ScalarNode and k.tag in _KEY_TAGS for k, _ in pairs):  # no merge key (`<<`)
            return {_value_of(loader, k): _value_of(loader, v) for k, v in pairs}
    return loader.construct_object(node, deep=True)


def _plain_text(text: str) -> bool:
    """Whether a deck's text holds no control character and no backslash: none of its values can then hold one
    (an escape such as "\\x1b" is the only way YAML writes a character the text does not show)."""
    return "\\" not in text and shown(text) == text


def _span(node: yaml.Node) -> int:
    """The characters a node's text spans."""
    return int(node.end_mark.index) - int(node.start_mark.index)


def _item_lines(node: yaml.MappingNode, key: str) -> list[int]:
    """The line of each item of the list under `key` in a card's mapping (none when it is not a list)."""
    value = next((v for k, v in node.value if getattr(k, "value", None) == key), None)
    items = getattr(value, "value", None)
    if not isinstance(items, list):
        return []
    return [item.start_mark.line + 1 for item in items]


@dataclass(frozen=True)
class Caution(Problem):
    """A warning about a card that loads all the same; `drill check` prints it."""


def _unsafe(key: str, char: str) -> str:
    return f"warning: `{key}` holds {char}, a control character a terminal would act on; it is shown as a symbol"


def content_hash(raw: dict[str, Any]) -> str:
    blob = json.dumps(raw, sort_keys=True, default=str, ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:16]


def _closest(key: str, names: Iterable[str]) -> str | None:
    import difflib

    match = difflib.get_close_matches(key, list(names), n=1, cutoff=0.6)
    return match[0] if match else None


def _line(exc: yaml.MarkedYAMLError, node: yaml.Node | None = None) -> int:
    mark = exc.problem_mark or exc.context_mark
    if mark is not None:
        return int(mark.line) + 1
    return int(node.start_mark.line) + 1 if node is not None else 0


def _yaml_message(exc: yaml.MarkedYAMLError) -> str:
    parts = [p for p in (exc.context, exc.problem) if p]
    message = "; ".join(parts) or str(exc).splitlines()[0]
    opened = exc.context_mark
    found = exc.problem_mark
    if opened is not None and found is not None and opened.line != found.line:
        message += f" (the construct opened at line {opened.line + 1})"
    return message

"""The settings file: where it lives, its keys with their defaults and checks, reading it and writing one key."""

from __future__ import annotations

import contextlib
import datetime as dt
import difflib
import json
import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping, cast

from drill.config import keybindings
from drill.config.template import TEMPLATE as TEMPLATE  # its home was here; tests and the README check it
from drill.hosts import EXAMPLES, BadHost, parse_host
from drill.paths import chosen_data_dir
from drill.study.scheduling import DEFAULT_SCHEDULER, SCHEDULERS
from drill.study.session import DEFAULT_NEW_ORDER, DEFAULT_NEW_PER_DAY, DEFAULT_ROLLOVER_HOUR, NEW_ORDERS
from drill.study.sm2 import DEFAULT_MAX_INTERVAL
from drill.study.targets import DEFAULT_MINUTES_PER_DAY, DEFAULT_TARGET

if TYPE_CHECKING:
    import tomlkit

ENV_VAR = "DRILL_CONFIG"  # a path to use instead of the platform's (tests, a second profile)
FILE_NAME = "config.toml"
DEFAULT_THEME = "textual-dark"
DEFAULT_JUDGE_TIMEOUT = 60.0  # seconds a kernel run may take (the judge client, `drill kernel run`, the kernel screen)
MAX_INTERVAL_LIMIT = 36500  # days (100 years): the most max_interval_days may be
MINUTES_PER_DAY_LIMIT = 24 * 60  # the most minutes_per_day may be: a whole day
# Keys that earlier flags (or a scheduler switch) saved in the database's setting table.
SAVED_KEYS = ("new_per_day", "day_starts_at", "new_order", "scheduler")

# The themes drill offers: the built-in themes of the pinned Textual, by name (tests/config/test_settings.py checks that
# Textual has each). The settings are read without importing Textual; the app hands the name to Textual.
THEMES = frozenset(
    "ansi-dark ansi-light atom-one-dark atom-one-light catppuccin-frappe catppuccin-latte catppuccin-macchiato "
    "catppuccin-mocha dracula flexoki gruvbox monokai nord rose-pine rose-pine-dawn rose-pine-moon solarized-dark "
    "solarized-light textual-dark textual-light tokyo-night".split()
)
_BINDING_ID = re.compile(r"[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+")
_KEY_LIST = re.compile(r"[^\s,]+(,[^\s,]+)*")


# Values nested hundreds deep exhaust the TOML readers' recursion; a settings file needs two levels at most.
TOO_DEEP = "values are nested too deeply to read (a settings file needs two levels at most: [keys] and its entries)"


class ConfigError(Exception):
    """A settings file drill cannot use, or a value it cannot take; the message names the file and the key."""

    def __init__(self, path: Path, problem: str, key: str | None = None) -> None:
        super().__init__(f"{path}: {key}: {problem}" if key else f"{path}: {problem}")
        self.path = path
        self.key = key


class Invalid(ValueError):
    """A value a key cannot take; `key` names a part deeper than the key checked (a binding in `keys`)."""

    def __init__(self, problem: str, key: str | None = None) -> None:
        super().__init__(problem)
        self.key = key


@dataclass(frozen=True)
class Settings:
    """The file's settings over the defaults; `in_file` names the keys the file sets."""

    new_per_day: int = DEFAULT_NEW_PER_DAY
    day_starts_at: int = DEFAULT_ROLLOVER_HOUR
    scheduler: str = DEFAULT_SCHEDULER
    max_interval_days: int = DEFAULT_MAX_INTERVAL
    new_order: str = DEFAULT_NEW_ORDER
    theme: str = DEFAULT_THEME
    gpu_host: str = ""
    judge_timeout: float = DEFAULT_JUDGE_TIMEOUT
    interview_date: dt.date | None = None  # None: no interview date (the file's "")
    interview_track: str = ""  # a track id of tracks.yaml; "": every card
    minutes_per_day: int = DEFAULT_MINUTES_PER_DAY
    readiness_target: float = DEFAULT_TARGET
    keys: Mapping[str, str] = field(default_factory=dict)
    path: Path | None = None
    in_file: frozenset[str] = frozenset()

    def from_file(self, key: str) -> Any:
        """The file's value of `key`, or None when the file leaves it to a flag, the saved setting or the default."""
        return getattr(self, key) if key in self.in_file else None


@dataclass(frozen=True)
class Effective:
    """One setting in effect and where it came from: "flag", "file", "saved setting" or "default"."""

    key: str
    value: object
    source: str


def shown(value: object) -> str:
    """A value as TOML writes it, for messages: "lots", 24, true, a table."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:  # a setting that is off (no interview date) is written "" in the file
        return '""'
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, (str, int)):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, float):
        return f"{value:g}" if math.isfinite(value) else repr(value)
    return "a table" if isinstance(value, Mapping) else f"a {type(value).__name__}"  # a list, a date, ...


def _whole(value: object, low: int, high: int | None, rule: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < low or (high is not None and value > high):
        raise Invalid(f"{rule} (got {shown(value)})")
    return value


def _choice(value: object, choices: tuple[str, ...]) -> str:
    if not isinstance(value, str) or value not in choices:
        raise Invalid(f"must be one of {', '.join(choices)} (got {shown(value)})")
    return value


def check_theme(value: object) -> str:
    if isinstance(value, str) and value in THEMES:
        return value
    close = difflib.get_close_matches(value, sorted(THEMES), n=3) if isinstance(value, str) else []
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    raise Invalid(f"must be a Textual theme such as textual-dark, textual-light or nord (got {shown(value)}){hint}")


def check_gpu_host(value: object) -> str:
    """The host as checked for ssh (drill.hosts, as --gpu-host is), or "" to judge kernels on this machine."""
    if value == "":
        return value
    try:
        if not isinstance(value, str):
            raise BadHost(f"must be {EXAMPLES}")
        parse_host(value)
    except BadHost as exc:
        raise Invalid(f'{exc}, or "" to judge kernels on this machine (got {shown(value)})') from None
    return value.strip()


def check_judge_timeout(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
        raise Invalid(f"must be a number of seconds > 0 (got {shown(value)})")
    return float(value)


def check_interview_date(value: object) -> dt.date | None:
    """A day such as 2026-12-15 (a TOML date, or the same as text); "" for no interview date."""
    if value == "":
        return None
    if isinstance(value, dt.date) and not isinstance(value, dt.datetime):
        return value
    if isinstance(value, str):
        try:
            return dt.date.fromisoformat(value.strip())
        except ValueError:
            pass
    raise Invalid(f'must be a date such as 2026-12-15, or "" for none (got {shown(value)})')


def check_interview_track(value: object) -> str:
    """A track id of cards/data/tracks.yaml, or "" for every card."""
    from drill.study.tracks import load_tracks

    if value == "":
        return value
    tracks = load_tracks()
    if isinstance(value, str) and value.strip().lower() in tracks:
        return value.strip().lower()
    raise Invalid(f'must be a track: {", ".join(tracks)}, or "" for every card (got {shown(value)})')


def check_readiness_target(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < 1:
        raise Invalid(f"must be a recall between 0 and 1, such as 0.9 (got {shown(value)})")
    return float(value)


def _binding_where(binding: str) -> str:
    named = json.dumps(binding[:60] + ("..." if len(binding) > 60 else ""))
    return f"keys.{named}" if "." in binding else f"keys.{named[1:-1]}"


def check_binding_id(binding: str) -> str:
    """A binding id one of drill's screens has, such as review.suspend."""
    if not _BINDING_ID.fullmatch(binding):
        raise Invalid("must be a binding id such as review.suspend (a screen, a dot, a name)", _binding_where(binding))
    problem = keybindings.binding_problem(binding)
    if problem:
        raise Invalid(problem, _binding_where(binding))
    return binding


def check_binding(binding: str, keys: object) -> str:
    """One key binding override: a binding id such as review.suspend, and a key list such as "ctrl+y" that
    Textual can read and that takes no key the learner types into an answer."""
    check_binding_id(binding)
    brief = keys[:60] + "..." if isinstance(keys, str) and len(keys) > 60 else keys
    if not isinstance(keys, str) or not _KEY_LIST.fullmatch(keys):
        raise Invalid(
            f'must be a key, or keys separated by commas, such as "ctrl+y" (got {shown(brief)})',
            _binding_where(binding),
        )
    problem = keybindings.keys_problem(binding, keys)
    if problem:
        raise Invalid(problem, _binding_where(binding))
    return keys


def check_keys(value: object) -> dict[str, str]:
    if not isinstance(value, Mapping):
        raise Invalid(
            f'must be a table of binding id = "keys", such as "review.suspend" = "ctrl+y" (got {shown(value)})'
        )
    return {str(binding): check_binding(str(binding), keys) for binding, keys in value.items()}


CHECKS: dict[str, Callable[[object], Any]] = {
    "new_per_day": lambda v: _whole(v, 0, None, "must be a whole number >= 0"),
    "day_starts_at": lambda v: _whole(v, 0, 23, "must be a whole number from 0 to 23"),
    "scheduler": lambda v: _choice(v, SCHEDULERS),
    "max_interval_days": lambda v: _whole(
        v, 1, MAX_INTERVAL_LIMIT, f"must be a whole number of days from 1 to {MAX_INTERVAL_LIMIT}"
    ),
    "new_order": lambda v: _choice(v, NEW_ORDERS),
    "theme": check_theme,
    "gpu_host": check_gpu_host,
    "judge_timeout": check_judge_timeout,
    "interview_date": check_interview_date,
    "interview_track": check_interview_track,
    "minutes_per_day": lambda v: _whole(
        v, 1, MINUTES_PER_DAY_LIMIT, f"must be a whole number of minutes from 1 to {MINUTES_PER_DAY_LIMIT}"
    ),
    "readiness_target": check_readiness_target,
    "keys": check_keys,
}
KEYS = tuple(CHECKS)  # every key the file may hold, in the order `drill config show` lists them


def _unknown(key: str) -> str:
    close = difflib.get_close_matches(key, KEYS, n=1)
    return f"unknown key (did you mean {close[0]}?)" if close else f"unknown key (known: {', '.join(KEYS)})"


def parse_text(key: str, text: str) -> object:
    """A value typed on the command line (or saved in the database) as the file would hold it; the check judges it."""
    text = text.strip()
    if key in (
        "new_per_day",
        "day_starts_at",
        "max_interval_days",
        "judge_timeout",
        "minutes_per_day",
        "readiness_target",
    ):
        for number in (int, float) if key in ("judge_timeout", "readiness_target") else (int,):
            try:
                return number(text)
            except ValueError:
                pass
        return text
    if key in ("scheduler", "new_order", "theme", "interview_track"):
        return text.lower()
    if key == "interview_date" and text:
        try:
            return dt.date.fromisoformat(text)  # written to the file as a TOML date
        except ValueError:
            return text
    return text


def config_path(data_dir: str | os.PathLike[str] | None = None) -> Path:
    """The settings file: $DRILL_CONFIG; else config.toml in the data directory the learner named (`data_dir`,
    the command's --data-dir, else DRILL_HOME), so that a folder given for a trial or a second profile carries
    its own settings; else config.toml in the platform's user config folder."""
    override = os.environ.get(ENV_VAR)
    if override:
        return Path(override).expanduser()
    chosen = chosen_data_dir(data_dir)
    if chosen is not None:
        return chosen / FILE_NAME
    from platformdirs import user_config_dir

    return Path(user_config_dir("drill", appauthor=False)) / FILE_NAME


def _read_text(path: Path) -> str | None:
    """The file's text, or None when there is none; ConfigError when it cannot be read."""
    try:
        return path.read_text(encoding="utf-8")
    except (FileNotFoundError, PermissionError):
        if not os.path.exists(path):  # none, or a folder on the way we may not search (another user's home)
            return None
        raise ConfigError(path, "cannot read the settings file (Permission denied)") from None
    except UnicodeDecodeError:
        raise ConfigError(path, "not UTF-8 text") from None
    except OSError as exc:
        raise ConfigError(path, f"cannot read the settings file ({exc.strerror or exc})") from None


def load_settings(path: Path | None = None) -> Settings:
    """The settings in the file (the defaults when there is none); ConfigError names the first problem."""
    path = path or config_path()
    text = _read_text(path)
    if text is None:
        return Settings(path=path)
    import tomllib

    try:
        return settings_from(tomllib.loads(text), path)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(path, f"not valid TOML: {exc}") from None
    except RecursionError:
        raise ConfigError(path, TOO_DEEP) from None


def settings_from(data: Mapping[str, object], path: Path) -> Settings:
    """Settings from a parsed file, every key checked; ConfigError names the first bad one."""
    values: dict[str, Any] = {}
    for key, value in data.items():
        try:
            if key not in CHECKS:
                raise Invalid(_unknown(key))
            values[key] = CHECKS[key](value)
        except Invalid as exc:
            raise ConfigError(path, str(exc), exc.key or key) from None
    in_file = frozenset(k for k, v in values.items() if k != "keys" or v)
    return Settings(**values, path=path, in_file=in_file)


def effective(
    settings: Settings, saved: Mapping[str, str], flags: Mapping[str, object | None] | None = None
) -> list[Effective]:
    """Every setting in effect: a flag over the file, the file over the saved setting, that over the default."""
    defaults = Settings()
    out: list[Effective] = []
    for key in KEYS:
        flag = (flags or {}).get(key)
        if flag is not None:
            out.append(Effective(key, flag, "flag"))
        elif key in settings.in_file:
            out.append(Effective(key, getattr(settings, key), "file"))
        elif key in SAVED_KEYS and (value := _saved(key, saved)) is not None:
            out.append(Effective(key, value, "saved setting"))
        else:
            out.append(Effective(key, getattr(defaults, key), "default"))
    return out


def _saved(key: str, saved: Mapping[str, str]) -> object | None:
    """A saved setting as its key's type; None when absent or not a value the key can take (the default applies)."""
    try:
        return cast(object, CHECKS[key](parse_text(key, saved[key]))) if key in saved else None
    except Invalid:
        return None


def study_settings(settings: Settings, saved: Mapping[str, str], **flags: int | str | None) -> tuple[int, int, str]:
    """new_per_day, day_starts_at and new_order (flags by those names): each from a flag, the file, the database or the default."""
    chosen = {e.key: e.value for e in effective(settings, saved, flags)}
    return cast(int, chosen["new_per_day"]), cast(int, chosen["day_starts_at"]), cast(str, chosen["new_order"])


def rollover_hour(settings: Settings, saved: Mapping[str, str], day_starts_at: int | None = None) -> int:
    """The local hour the study day starts at: --day-starts-at, else the settings file, else what the review app
    saved, else the default. The app and every command take it from here (drill.config.study_day)."""
    return study_settings(settings, saved, day_starts_at=day_starts_at)[1]


@dataclass(frozen=True)
class Assignment:
    """`drill config set KEY VALUE`, checked: a top-level key, or one binding in `keys` ("" removes it)."""

    key: str
    value: object
    binding: str | None = None

    @property
    def name(self) -> str:
        return f"keys.{self.binding}" if self.binding is not None else self.key


def parse_assignment(path: Path, key: str, text: str) -> Assignment:
    """KEY VALUE from the command line, checked as the file's value would be; ConfigError names what is wrong."""
    key = key.strip()
    for given in (key, text):
        if not _is_unicode(given):  # a byte the shell passed on that is no UTF-8 character
            raise ConfigError(path, "not UTF-8 text: type the value again", key.encode(errors="replace").decode())
    binding = key.removeprefix("keys.") if key.startswith("keys.") else None
    change = (
        Assignment("keys", text.strip(), binding) if binding is not None else Assignment(key, parse_text(key, text))
    )
    try:
        if binding is not None:
            if change.value:
                check_binding(binding, change.value)
            else:  # "" removes the override: only the id is checked
                check_binding_id(binding)
        elif key == "keys":
            raise Invalid("set one binding at a time: keys.ID KEYS, such as keys.review.suspend ctrl+y")
        elif key not in CHECKS:
            raise Invalid(_unknown(key))
        else:
            CHECKS[key](change.value)
    except Invalid as exc:
        raise ConfigError(path, str(exc), exc.key or key) from None
    return change


def _is_unicode(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def read_document(path: Path) -> "tomlkit.TOMLDocument":
    """The file as an editable document that keeps its comments; the documented template when there is none."""
    import tomlkit
    from tomlkit.exceptions import TOMLKitError

    text = _read_text(path)
    try:
        return tomlkit.parse(TEMPLATE if text is None else text)
    except TOMLKitError as exc:
        raise ConfigError(path, f"not valid TOML: {exc}") from None
    except RecursionError:
        raise ConfigError(path, TOO_DEEP) from None


def assign(doc: "tomlkit.TOMLDocument", change: Assignment) -> tuple["tomlkit.TOMLDocument", object]:
    """The document with the value set beside whatever else it holds, and what it held before (None: nothing)."""
    import tomlkit

    if change.binding is None:
        before = doc.get(change.key)
        if before is None and (placed := _beside_example(doc, change)) is not None:
            return placed, None
        doc[change.key] = change.value
    else:
        if not isinstance(doc.get("keys"), Mapping):
            doc["keys"] = tomlkit.table()
        table = cast("dict[str, object]", doc["keys"])
        before = table.get(change.binding)
        if change.value:
            table[change.binding] = change.value
        else:
            table.pop(change.binding, None)
    return doc, cast(object, before.unwrap() if isinstance(before, tomlkit.items.Item) else before)


def remove(doc: "tomlkit.TOMLDocument", key: str) -> tuple["tomlkit.TOMLDocument", object]:
    """The document without the top-level `key`, and what it held (None: nothing)."""
    import tomlkit

    before = doc.pop(key, None)
    return doc, cast(object, before.unwrap() if isinstance(before, tomlkit.items.Item) else before)


def _beside_example(doc: "tomlkit.TOMLDocument", change: Assignment) -> "tomlkit.TOMLDocument | None":
    """The document with the key on the line after its commented-out example (`# key = ...`), when it has one."""
    import tomlkit

    lines = doc.as_string().splitlines(keepends=True)
    for at, line in enumerate(lines):
        if line.startswith("["):  # past the top-level keys
            return None
        if re.fullmatch(rf"#\s*{change.key}\s*=.*\n?", line):
            lines.insert(at + 1, f"{change.key} = {tomlkit.item(change.value).as_string()}\n")
            placed = tomlkit.parse("".join(lines))
            return placed if placed.get(change.key) == change.value else None
    return None


def write_document(path: Path, doc: "tomlkit.TOMLDocument") -> None:
    """Replace the file in one step, so a crash leaves the old file or the new one."""
    import tomlkit

    partial = path.with_name(path.name + ".partial")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial.write_text(tomlkit.dumps(doc), encoding="utf-8")
        os.replace(partial, path)
    except OSError as exc:
        raise ConfigError(path, f"cannot write the settings file ({exc.strerror or exc})") from None
    except UnicodeEncodeError:
        raise ConfigError(path, "cannot write the settings file (a value is not UTF-8 text)") from None
    finally:
        with contextlib.suppress(OSError):  # gone once it became the file; a failed write leaves none behind
            partial.unlink(missing_ok=True)

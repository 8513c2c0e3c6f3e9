"""The key bindings a settings file may change: drill's binding ids, and the key names Textual reads.

The screens own their bindings; this module names them without importing
Textual (which costs a quarter of a second), and tests hold both lists equal
to the screens' BINDINGS and to Textual's own key names.
"""

from __future__ import annotations

import difflib

# Every binding id of drill's screens (tests/config/test_settings.py holds this equal to their BINDINGS).
BINDING_IDS = frozenset(
    """
    app.keys app.quit
    browser.close browser.down browser.pagedown browser.pageup browser.switch_focus browser.switch_focus_back
    browser.unsuspend browser.up
    kernel.accept kernel.answer kernel.back kernel.cancel kernel.grade0 kernel.grade1 kernel.grade2 kernel.grade3
    kernel.grade4 kernel.grade5 kernel.reset kernel.run kernel.submit
    mock.cancel_override mock.down mock.end mock.next mock.next_field mock.open_kernel mock.override mock.pagedown
    mock.pageup mock.previous_field mock.show_choices mock.skip mock.up
    mock_report.close mock_report.down mock_report.html mock_report.pagedown mock_report.pageup mock_report.up
    mock_setup.back mock_setup.hard mock_setup.practice
    review.accept review.browser review.bury review.down review.grade0 review.grade1 review.grade2 review.grade3
    review.grade4 review.grade5 review.leave_input review.mock review.next_field review.pagedown review.pageup
    review.previous_field review.quit_when_done review.reveal review.stats review.suspend review.undo review.up
    stats.close stats.reverse stats.sort
    """.split()
)
# Screens with fields the learner types into (the app's bindings act on every screen): there a key that
# types a character belongs to the field, except for the bindings below, which act only while no field
# has focus (the grades once the answer is shown, space to reveal it, q when the day is done).
TYPING_SCREENS = ("app", "review", "mock", "kernel", "browser", "mock_setup")
OUTSIDE_FIELDS = frozenset(
    "review.grade0 review.grade1 review.grade2 review.grade3 review.grade4 review.grade5 review.reveal "
    "review.quit_when_done kernel.grade0 kernel.grade1 kernel.grade2 kernel.grade3 kernel.grade4 kernel.grade5 "
    "mock.open_kernel mock.override".split()
)
GRADE_DIGITS = frozenset("012345")  # on the review and kernel screens a digit grades once the answer is shown

MODIFIERS = ("ctrl", "alt", "shift", "meta", "super", "hyper")
TYPING_MODIFIERS = frozenset({"shift"})  # shift+a still types a letter
# Keys Textual names by a word (textual.keys.Keys), and the names it gives printable characters
# (textual.keys: a character's Unicode name in lower case, or its replacement such as "slash").
NAMED_KEYS = frozenset(
    ["escape", "enter", "return", "tab", "backspace", "delete", "insert", "home", "end", "pageup", "pagedown"]
    + ["up", "down", "left", "right", *(f"f{n}" for n in range(1, 25))]
)
CHARACTER_NAMES = frozenset(
    """
    space exclamation_mark quotation_mark number_sign dollar_sign percent_sign ampersand apostrophe
    left_parenthesis right_parenthesis asterisk plus comma minus full_stop slash colon semicolon
    less_than_sign equals_sign greater_than_sign question_mark at left_square_bracket backslash
    right_square_bracket circumflex_accent underscore grave_accent left_curly_bracket vertical_line
    right_curly_bracket tilde
    """.split()
)
MOST_KEYS = 8  # keys one binding may take
LONGEST_KEY = 40  # characters of one key, modifiers included ("ctrl+shift+right_square_bracket" is 31)


def binding_problem(binding: str) -> str | None:
    """What is wrong with a binding id, or None when drill has it."""
    if binding in BINDING_IDS:
        return None
    close = difflib.get_close_matches(binding, sorted(BINDING_IDS), n=1)
    hint = f" (did you mean {close[0]}?)" if close else " (`drill config show` and the README list them)"
    return f"{binding[:60]!r} is not one of drill's binding ids{hint}"


def keys_problem(binding: str, keys: str) -> str | None:
    """What is wrong with the keys given to a (known) binding, or None when it can take them."""
    names = keys.split(",")
    if len(names) > MOST_KEYS:
        return f"{len(names)} keys; a binding takes at most {MOST_KEYS}"
    for name in names:
        problem = _key_problem(name)
        if problem:
            return problem
        if _types_a_character(name) and _typed_into(binding, name):
            return _typed_into(binding, name)
    return None


def _key_problem(name: str) -> str | None:
    if len(name) > LONGEST_KEY:
        return f"a key name of {len(name):,} characters; Textual's longest are about 30"
    *modifiers, base = name.split("+") if len(name) > 1 else [name]
    unknown = [m for m in modifiers if m not in MODIFIERS]
    if unknown or len(set(modifiers)) != len(modifiers):
        return f"{name!r} is not a key: modifiers are {', '.join(MODIFIERS)}, each once, then a key, as in ctrl+y"
    if not (base in NAMED_KEYS or base in CHARACTER_NAMES or _character(base)):
        return f"{name!r} is not a key Textual knows: a letter, a digit, a symbol, or a name such as f5, pageup, tab"
    return None


def _character(base: str) -> bool:
    return len(base) == 1 and base.isprintable() and not base.isspace() and base != ","


def _types_a_character(name: str) -> bool:
    *modifiers, base = name.split("+") if len(name) > 1 else [name]
    return set(modifiers) <= TYPING_MODIFIERS and (_character(base) or base in CHARACTER_NAMES)


def _typed_into(binding: str, name: str) -> str | None:
    """Why a key that types a character cannot be this binding's, or None when it can."""
    screen = binding.split(".", 1)[0]
    if screen not in TYPING_SCREENS:
        return None
    if binding not in OUTSIDE_FIELDS:
        return f"{name!r} types a character into an answer; bind a key such as ctrl+y or f6"
    if name in GRADE_DIGITS and binding.split(".", 1)[1] != f"grade{name}":
        return f"{name!r} gives grade {name} once the answer is shown; bind another key"
    return None

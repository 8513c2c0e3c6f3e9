"""The screen's one text filter: every widget's content passes `screen_text` (drill.textsafe's `shown`) here.

Text drill shows comes from data as often as not: card text loaded or read back
from the deck cache, answers and history read from the store, a kernel's
output and the judge's errors, a mock's report. A control character in it
(ESC ] 52 writes the clipboard, ESC [ moves the cursor, an 8-bit CSI) would
reach the terminal as a command. The filter runs where text becomes a widget's
content, not where data is read, so no store or path can bring one past it:

- the widgets of the screens are the ones below (`SafeStatic`, `SafeLabel`,
  `DrawnStatic`, `SafeOptionList`, `SafeSelectionList`, `SafeInput`), a table's
  (`SafeDataTable`, drill.ui.screen_table) and the kernel editor's
  (`SafeTextArea`, drill.ui.screen_editor: kept apart, as their Textual widgets
  take a while to import and the first card needs neither), each filtering what
  it is given or draws; tests/ui/test_screen_escapes.py checks that drill.ui makes
  no other;
- a notice passes `notice_text` (the app's `notify` calls it);
- Markdown is filtered as source, before it is parsed (drill.ui.markdown_view).

Newline and tab are kept: they are layout. The filter replaces each control
character by one visible symbol, so a text keeps its length and the styles
laid over it (a Rich Text's spans) stay where they were. Data placed into
console markup is escaped as well (`markup_text`): it must not add markup.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Generic

from rich.measure import Measurement
from rich.protocol import rich_cast
from rich.segment import Segment
from rich.text import Text
from textual.content import Content
from textual.visual import Visual, VisualType
from textual.widgets import Input, Label, OptionList, SelectionList, Static
from textual.widgets.option_list import Option
from textual.widgets.selection_list import Selection, SelectionType

from drill.textsafe import shown

if TYPE_CHECKING:
    from rich.console import Console, ConsoleOptions, RenderableType, RenderResult
    from textual.app import RenderResult as WidgetRender


def screen_text(text: str) -> str:
    """`text` as a widget may show it: every control character but newline and tab as a visible symbol."""
    return shown(text)


def markup_text(value: object) -> str:
    """`value` as text inside console markup: filtered, and every square bracket escaped, so it adds no markup.

    Rich's `escape` leaves a bracket that does not look like a tag (`[9`, `[ `), but Textual's markup opens a
    tag at every bracket not preceded by a backslash: `a[0] [b]x[/b]` fails to parse. A backslash that ends
    the text would escape the markup after it, so a zero-width space follows it.
    """
    text = screen_text(str(value)).replace("[", "\\[")
    return text + "\u200b" if text.endswith("\\") else text


def plain_content(text: str) -> Content:
    """Text from data as a widget's content that is never read as markup (a list's option, a table's cell)."""
    return Content(screen_text(text))


def screen_renderable(renderable: RenderableType) -> RenderableType:
    """A Rich renderable with its text through the filter: a Text keeps its styles; any other renderable
    (Markdown, Syntax, a table) is drawn through `ShownRenderable`."""
    if isinstance(renderable, str):
        return screen_text(renderable)
    if isinstance(renderable, Text):
        return shown_rich_text(renderable)
    if isinstance(renderable, ShownRenderable):
        return renderable
    return ShownRenderable(renderable)


def screen_content(content: VisualType) -> VisualType:
    """A widget's content through the filter. A string stays console markup (the filter leaves brackets alone:
    data placed into it is escaped where it is placed, with `markup_text`)."""
    if isinstance(content, Content):
        return Content(screen_text(content.plain), list(content.spans))
    if isinstance(content, Visual):
        raise TypeError(f"a {type(content).__name__} cannot be filtered: give the widget its text instead")
    return screen_renderable(content)  # type: ignore[arg-type]  # what is not a Visual is a Rich renderable


def shown_rich_text(text: Text) -> Text:
    """A copy of a Rich Text with its characters through the filter, its styles where they were."""
    plain = text.plain
    clean = screen_text(plain)
    if clean == plain:
        return text
    copy = text.copy()
    copy.plain = clean  # the filter keeps the length, so every span still covers the same characters
    return copy


class ShownRenderable:
    """A Rich renderable drawn with every segment's text through the filter; cursor moves and other control
    segments a renderable may yield are left out (a widget's content never moves the cursor)."""

    def __init__(self, inner: RenderableType) -> None:
        self.inner = inner

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        for segment in console.render(self.inner, options):
            if segment.control:
                continue
            clean = screen_text(segment.text)
            yield segment if clean == segment.text else Segment(clean, segment.style)

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        """The inner renderable's own measure, unclamped as Textual asks for it (a code block wider than the pane
        keeps its width, to scroll sideways)."""
        inner = rich_cast(self.inner)
        measure = getattr(inner, "__rich_measure__", None)
        if measure is not None:
            return measure(console, options)  # type: ignore[no-any-return]
        return Measurement.get(console, options, inner)


def notice_text(message: str) -> str:
    """A notice's words (shown as text, never read as markup: a notice carries card ids, paths, errors)."""
    return screen_text(message)


# -- the widgets ------------------------------------------------------------------------------------------------
class _FilteredContent(Static):
    """The filter on a Static's content, given at construction, by `update` or as `content`: the one definition the
    safe widgets below share. Textual reads a widget's CSS types (what `Label { ... }` and `query(Label)` match)
    along each class's first base only, so a safe widget names its own Textual widget first in its bases."""

    def __init__(self, content: VisualType = "", **kwargs: Any) -> None:
        super().__init__(screen_content(content), **kwargs)

    def update(self, content: VisualType = "", *, layout: bool = True) -> None:
        super().update(screen_content(content), layout=layout)

    @property
    def content(self) -> VisualType:
        return Static.content.fget(self)  # type: ignore[attr-defined,no-any-return]

    @content.setter
    def content(self, content: VisualType) -> None:
        Static.content.fset(self, screen_content(content))  # type: ignore[attr-defined]


class SafeStatic(_FilteredContent):
    """A Static whose content, given at construction, by `update` or as `content`, passes the filter."""


class SafeLabel(Label, _FilteredContent):
    """A Label whose content, given at construction, by `update` or as `content`, passes the filter."""


class DrawnStatic(SafeStatic):
    """A widget drawn afresh from data each time it is painted (a chart): what `draw` returns passes the filter."""

    def draw(self) -> RenderableType:
        raise NotImplementedError

    def render(self) -> WidgetRender:
        return screen_renderable(self.draw())


def _prompt(prompt: Any) -> Any:
    """A list's prompt through the filter: a string is text, never markup."""
    if isinstance(prompt, str):
        return plain_content(prompt)
    return screen_content(prompt)


def _option(option: Any) -> Any:
    if option is None:  # a separator
        return None
    if isinstance(option, Option):
        return Option(_prompt(option.prompt), option.id, option.disabled)
    return _prompt(option)


class SafeOptionList(OptionList):
    """An OptionList whose options' prompts pass the filter, as text (a prompt from data adds no markup)."""

    def add_options(self, new_options: Iterable[Any]) -> SafeOptionList:
        super().add_options([_option(option) for option in new_options])
        return self

    def replace_option_prompt(self, option_id: str, prompt: VisualType) -> SafeOptionList:
        super().replace_option_prompt(option_id, _prompt(prompt))
        return self

    def replace_option_prompt_at_index(self, index: int, prompt: VisualType) -> SafeOptionList:
        super().replace_option_prompt_at_index(index, _prompt(prompt))
        return self


def _selection(item: Any) -> Any:
    """A SelectionList's item (a Selection, or a (prompt, value[, selected]) tuple) with its prompt filtered."""
    if isinstance(item, Selection):
        return Selection(_prompt(item.prompt), item.value, item.initial_state, item.id, item.disabled)
    if isinstance(item, tuple) and item:
        return (_prompt(item[0]), *item[1:])
    return item


class SafeSelectionList(SelectionList[SelectionType], Generic[SelectionType]):
    """A SelectionList whose prompts pass the filter, as text (a point from data adds no markup)."""

    def __init__(self, *selections: Any, **kwargs: Any) -> None:
        super().__init__(*(_selection(s) for s in selections), **kwargs)

    def add_options(self, items: Iterable[Any]) -> SafeSelectionList[SelectionType]:
        super().add_options([_selection(item) for item in items])
        return self


class SafeInput(Input):
    """An Input whose value and placeholder pass the filter however they are set: typed, pasted or assigned."""

    def validate_value(self, value: str) -> str:
        return screen_text(value)

    def validate_placeholder(self, placeholder: str) -> str:
        return screen_text(placeholder)

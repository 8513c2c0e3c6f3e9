"""The card browser: search every card, read its schedule and history, unsuspend it or practise it now.

A card practised from here is reviewed on a screen above the browser; once graded,
the learner is back in the browser with the search as it was.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import re
import textwrap
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import events, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.message import Message
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Input

from drill.browse import IS_LABELS, SHORT_KINDS, CardIndex, matches, preview_prompt
from drill.study.sm2 import SHORT_MEANINGS
from drill.ui.answer_fields import InOrderInput
from drill.ui.messages import PracticeAsked, UnsuspendAsked
from drill.ui.review import ReviewScreen
from drill.ui.screen_table import SafeDataTable
from drill.ui.screen_text import SafeStatic, markup_text
from drill.words import counted

if TYPE_CHECKING:
    from drill.cards.model import Card
    from drill.study.records import CardState
    from drill.workspace import Workspace

ROW_LIMIT = 200
PROMPT_LINES = 3
HISTORY_LINES = 8  # what the pane has room for below its heading
HISTORY_WIDTH = 34
PLACEHOLDER = f'search words, "a phrase", topic:T kind:K tag:T id:X is:{"|".join(IS_LABELS)}'
# The table names one state a card: the first of these it has (the detail pane lists them all).
STATE_ORDER = ("suspended", "buried", "due", "leech", "new", "learning", "review")
# How the detail pane says a label that is not a state of the schedule.
LABEL_WORDS = {"today": "studied today"}
FIXED_WIDTHS = {"topic": 16, "kind": 9, "state": 9, "due": 10, "ease": 4, "lapses": 6}


@dataclass
class HistoryRead(Message):
    """A card's review log was read (oldest first), or could not be: `error` says why."""

    card_id: str
    rows: list[dict[str, Any]]
    error: str | None = None


@dataclass
class StudiedRead(Message):
    """The ids of the cards graded this study day were read from the log (for `is:today`)."""

    card_ids: set[str]


def table_state(labels: tuple[str, ...]) -> str:
    return next((s for s in STATE_ORDER if s in labels), "")


class BrowserScreen(Screen[None]):
    """Every card, searched as you type; the highlighted card's details below the list."""

    BINDINGS = [
        Binding("escape", "close", "Close", id="browser.close"),
        Binding("ctrl+r", "unsuspend", "Unsuspend", id="browser.unsuspend"),
        Binding("tab", "switch_focus", "Search ↔ list", id="browser.switch_focus", show=False),
        Binding("shift+tab", "switch_focus", "Search ↔ list", id="browser.switch_focus_back", show=False),
        Binding("down", "move(1)", "Next card", id="browser.down", show=False),
        Binding("up", "move(-1)", "Previous card", id="browser.up", show=False),
        Binding("pagedown", "move(10)", "Page down", id="browser.pagedown", show=False),
        Binding("pageup", "move(-10)", "Page up", id="browser.pageup", show=False),
    ]
    DEFAULT_CSS = """
    BrowserScreen { layout: vertical; }
    BrowserScreen #btop { height: 1; padding: 0 1; background: $boost; }
    BrowserScreen #query { margin: 0 1; }
    BrowserScreen #results { height: 1fr; width: 100%; }
    BrowserScreen #detail { height: 10; border-top: solid $panel-lighten-1; }
    BrowserScreen #dinfo { width: 1fr; padding: 0 1; text-wrap: nowrap; text-overflow: ellipsis; }
    BrowserScreen #dhist { width: 34; padding: 0 1; border-left: solid $panel-lighten-1; }
    BrowserScreen #bbar { height: 1; padding: 0 1; background: $panel; }
    """

    def __init__(
        self,
        cards: Mapping[str, "Card"],
        states: Mapping[str, "CardState"],
        today: dt.date,
        workspace: "Workspace",
    ) -> None:
        super().__init__()
        self.cards = cards
        self.workspace = workspace  # the learner's data: a card's history, the cards of a day
        self.index = CardIndex(cards, states, today)
        self.found: list[str] = []
        self.shown: str | None = None
        self.histories: dict[str, HistoryRead] = {}
        self.id_width = 30

    def compose(self) -> ComposeResult:
        yield SafeStatic(id="btop")
        yield InOrderInput(placeholder=PLACEHOLDER, id="query", compact=True)
        yield SafeDataTable(id="results", cursor_type="row", zebra_stripes=True)
        with Horizontal(id="detail"):
            yield SafeStatic(id="dinfo")
            yield SafeStatic(id="dhist")
        yield SafeStatic(
            "[b]tab[/b] search ↔ list · [b]↑↓[/b] move · [b]enter[/b] in the list: practise now · "
            "[b]ctrl+r[/b] unsuspend · [b]esc[/b] close",
            id="bbar",
        )
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.query_one("#query", Input).focus()
        self.fit_columns(self.app.size.width)
        self.read_studied()

    def on_resize(self, event: events.Resize) -> None:
        if self.id_width != self.id_width_for(event.size.width):
            self.fit_columns(event.size.width)

    @staticmethod
    def id_width_for(screen_width: int) -> int:
        """What the id column gets: the width the other columns, their padding and the scrollbar leave."""
        fixed = sum(FIXED_WIDTHS.values()) + 2 * (len(FIXED_WIDTHS) + 1) + 2
        return max(12, screen_width - fixed)

    def fit_columns(self, screen_width: int) -> None:
        table = self.query_one("#results", SafeDataTable)
        keep = self.highlighted()
        self.id_width = self.id_width_for(screen_width)
        table.clear(columns=True)
        table.add_column("id", key="id", width=self.id_width)
        for name, width in FIXED_WIDTHS.items():
            table.add_column(name, key=name, width=width)
        self.refresh_results(self.query_one("#query", Input).value, keep=keep)

    # -- results -------------------------------------------------------------
    def refresh_results(self, query: str, keep: str | None = None) -> None:
        """Search again and list what is found; the highlight goes to the first card (or stays on `keep`)."""
        found = matches(self.index, query)
        table = self.query_one("#results", SafeDataTable)
        if found and found == self.found and table.row_count == min(len(found), ROW_LIMIT) and keep is None:
            return  # a space or a filter not yet spelled out: the list stands (filling it is the costly part)
        self.found = found
        table.clear()
        for card_id in self.found[:ROW_LIMIT]:
            table.add_row(*self.cells(card_id), key=card_id)
        self.update_top()
        if self.found:
            row = self.found.index(keep) if keep in self.found[:ROW_LIMIT] else 0
            table.move_cursor(row=row, scroll=True)
            self.show_detail(self.found[row])
        else:
            from drill.browse import spelling_hints, unknown_filters

            self.shown = None
            # wrapped, not cut at the pane's edge: the names a filter takes are the point of the line
            said = [
                "No card matches. Each word and filter must hold.",
                *unknown_filters(self.index, query),
                *spelling_hints(self.index, query),
            ]
            lines = [line for words in said for line in self.wrapped(words)]
            self.query_one("#dinfo", SafeStatic).update("\n".join(markup_text(line) for line in lines))
            self.query_one("#dhist", SafeStatic).update("")

    def update_top(self) -> None:
        total = len(self.found)
        shown = min(total, ROW_LIMIT)
        more = f" · {total - shown} more: narrow the search to see them" if total > shown else ""
        due = len(self.index.by["is"].get("due", ()))
        self.query_one("#btop", SafeStatic).update(
            f"[b]find cards[/b] │ found {total} of {counted(len(self.index), 'card')}{more} │ {due} due today"
        )

    def cells(self, card_id: str) -> list[Text]:
        card = self.cards[card_id]
        state = self.index.states.get(card_id)
        labels = self.index.labels[card_id]
        seen = state is not None and not state.is_new
        due = state.due.isoformat() if state is not None and seen and state.due else ""
        return [
            Text(card_id if len(card_id) <= self.id_width else card_id[: self.id_width - 1] + "…"),
            Text(card.topic if len(card.topic) <= FIXED_WIDTHS["topic"] else card.topic[:15] + "…"),
            Text(SHORT_KINDS.get(card.kind, card.kind)),
            Text(table_state(labels)),
            Text(due),
            Text(f"{state.sm2.ef:.2f}" if state is not None and seen else ""),
            Text(str(state.lapses) if state is not None and seen else "", justify="right"),
        ]

    def highlighted(self) -> str | None:
        table = self.query_one("#results", SafeDataTable)
        if not self.found or table.row_count == 0:
            return None
        return self.found[min(table.cursor_row, table.row_count - 1)]

    # -- the detail pane -------------------------------------------------------
    def show_detail(self, card_id: str, *, again: bool = False) -> None:
        if card_id == self.shown and not again:
            return
        self.shown = card_id
        self.query_one("#dinfo", SafeStatic).update(self.detail_text(card_id))
        self.query_one("#dhist", SafeStatic).update(self.history_text(card_id))
        if card_id not in self.histories:
            self.read_history(card_id)

    def detail_text(self, card_id: str) -> str:
        """The card's prompt (its first lines), topic, tags, sources and schedule; a line each, cut to fit."""
        card = self.cards[card_id]
        state = self.index.states.get(card_id)
        lines = [
            f"[b]{markup_text(card_id)}[/b]  {markup_text(card.kind.replace('_', ' '))} · {markup_text(card.deck)}"
        ]
        width = self.detail_width()
        plain = re.sub(r"\*\*|__|`", "", preview_prompt(card))  # the prompt's markdown emphasis, not shown as such here
        prompt = self.wrapped(plain)
        shown = prompt[:PROMPT_LINES]
        if len(prompt) > PROMPT_LINES:
            shown[-1] = shown[-1][: width - 2] + " …"
        lines += [markup_text(line) for line in shown]
        lines.append(
            f"[b]topic[/b] {markup_text(card.topic)} · [b]tags[/b] {markup_text(', '.join(card.tags) or 'none')}"
        )
        lines.append(f"[b]sources[/b] {markup_text('; '.join(card.sources) or 'none')}")
        labels = ", ".join(LABEL_WORDS.get(label, label) for label in self.index.labels[card_id])
        if state is None or state.is_new:
            lines.append(f"[b]state[/b] {labels}: not studied yet")
        else:
            s = state.sm2
            due = state.due.isoformat() if state.due else "not set"
            lines.append(f"[b]due[/b] {due} · [b]interval[/b] {s.interval} d · [b]ease[/b] {s.ef:.2f}")
            lines.append(f"[b]repetitions[/b] {s.repetitions} · [b]lapses[/b] {state.lapses} · [b]state[/b] {labels}")
        return "\n".join(lines)

    def detail_width(self) -> int:
        """The columns a line of the detail pane has, beside the history."""
        return max(20, self.app.size.width - HISTORY_WIDTH - 3)

    def wrapped(self, text: str) -> list[str]:
        """`text` as lines of the detail pane, its spaces and line breaks collapsed."""
        return textwrap.wrap(" ".join(text.split()), self.detail_width()) or [""]

    def history_text(self, card_id: str) -> str:
        """The card's last reviews, newest last: day, grade and mode."""
        read = self.histories.get(card_id)
        if read is None:
            return "[b]history[/b]\nreading…"
        if read.error is not None:
            return f"[b]history[/b]\ncannot be read: {markup_text(read.error)}"
        if not read.rows:
            return "[b]history[/b]\nno reviews yet"
        rows = read.rows[-HISTORY_LINES:]
        earlier = len(read.rows) - len(rows)
        head = f"[b]history[/b] last {len(rows)} of {len(read.rows)}" if earlier else f"[b]history[/b] ({len(rows)})"
        head += ", newest last"
        body = [
            f"{markup_text(str(r['day']))} {markup_text(str(r['grade']))} {SHORT_MEANINGS.get(r['grade'], ''):<7} {markup_text(str(r['mode']))}"
            for r in rows
        ]
        return "\n".join([head, *body])

    @work(thread=True, exclusive=True, group="history")
    def read_history(self, card_id: str) -> None:
        try:
            rows = self.workspace.card_history(card_id)
        except Exception as exc:  # shown in the pane, never a traceback
            self.post_message(HistoryRead(card_id, [], str(exc)))
            return
        self.post_message(HistoryRead(card_id, rows))

    def on_history_read(self, message: HistoryRead) -> None:
        self.histories[message.card_id] = message
        if message.card_id == self.shown:
            self.show_detail(message.card_id, again=True)

    @work(thread=True, exclusive=True, group="studied")
    def read_studied(self) -> None:
        try:
            card_ids = self.workspace.studied_on(self.index.today)
        except Exception as exc:  # is:today then finds nothing; said once, never a traceback
            self.app.call_from_thread(self.notify, f"is:today cannot read the log: {exc}", severity="warning")
            return
        self.post_message(StudiedRead(card_ids))

    def on_studied_read(self, message: StudiedRead) -> None:
        self.index.mark_studied(message.card_ids)
        self.refresh_results(self.query_one("#query", Input).value)  # the list stands unless is: changes it
        if self.shown is not None:
            self.query_one("#dinfo", SafeStatic).update(self.detail_text(self.shown))  # its labels: `today` too

    # -- events and actions ---------------------------------------------------------
    def on_input_changed(self, message: Input.Changed) -> None:
        self.refresh_results(message.value)

    def on_input_submitted(self, message: Input.Submitted) -> None:
        message.stop()
        if self.found:
            self.query_one("#results", SafeDataTable).focus()

    def on_data_table_row_highlighted(self, message: DataTable.RowHighlighted) -> None:
        # one queued while an earlier search filled the list may arrive after a search that found nothing
        if message.row_key.value is not None and message.row_key in message.data_table.rows:
            self.show_detail(message.row_key.value)

    def on_data_table_row_selected(self, message: DataTable.RowSelected) -> None:
        message.stop()
        card_id = message.row_key.value
        if card_id is None:
            return
        # The app opens the card above this screen (BrowsedCardReview), and calls `practised` once it is graded.
        self.app.post_message(PracticeAsked(card_id=card_id))

    def practised(self, card_id: str, state: "CardState") -> None:
        """Back from grading a card practised from here: its new state, its history read again, the search run again."""
        self.index.update_state(state)
        self.index.mark_studied([card_id])
        self.histories.pop(card_id, None)
        if self.shown == card_id:
            self.shown = None  # shown again below, with the history read afresh
        self.refresh_results(self.query_one("#query", Input).value, keep=card_id)

    def action_switch_focus(self) -> None:
        table = self.query_one("#results", SafeDataTable)
        if self.focused is table:
            self.query_one("#query", Input).focus()
        else:
            table.focus()

    def action_move(self, rows: int) -> None:
        table = self.query_one("#results", SafeDataTable)
        if table.row_count:
            table.move_cursor(row=max(0, min(table.row_count - 1, table.cursor_row + rows)))

    def action_unsuspend(self) -> None:
        card_id = self.highlighted()
        if card_id is None:
            return
        state = self.index.states.get(card_id)
        if state is None or not state.suspended:
            self.notify(f"{card_id} is not suspended", timeout=3)
            return
        self.post_message(UnsuspendAsked(card_id))
        self.index.update_state(dataclasses.replace(state, suspended=False))
        table = self.query_one("#results", SafeDataTable)
        table.update_cell(card_id, "state", Text(table_state(self.index.labels[card_id])))
        self.update_top()
        self.show_detail(card_id, again=True)

    def action_close(self) -> None:
        self.dismiss(None)


class BrowsedCardReview(ReviewScreen):
    """A card practised from the browser, reviewed above it: once graded (and passed), back to the browser.

    ctrl+f, which opens the browser from a review, goes back to it without a grade.
    """

    async def show_current(self, *, composed: bool = False) -> None:
        if self.card is None:  # the card is done: the browser, not an "All done" page
            self.dismiss(None)
            return
        await super().show_current(composed=composed)

    def action_open_browser(self) -> None:
        self.dismiss(None)

"""The stats screen: the heatmap grid as a pure function, the screen on a seeded history, and its snapshots."""

import datetime as dt

import pytest
from textual.widgets import DataTable

from drill.cards.loader import load_decks
from drill.start import AppOptions
from drill.store.store import Store
from drill.study.records import CardState
from drill.study.sm2 import days_after, review
from drill.study.standing import TopicFigures
from drill.ui.app import make_app
from drill.ui.stats_screen import (
    BY_KEY,
    LEAVE_OUT_FIRST,
    StatsScreen,
    column_width,
    columns_that_fit,
    sort_topics,
)
from drill.ui.stats_widgets import (
    HeatmapChart,
    MockHistory,
    RetentionChart,
    bar_rows,
    heatmap_cells,
    heatmap_start,
    month_labels,
)
from drill.workspace import collect
from tests.conftest import FixedClock, refresh, type_keys
from tests.ui.test_checked import DECK as CHECKED

NOW = dt.datetime(2026, 5, 10, 12, 0)  # a Sunday: today closes the heatmap's last column
TODAY = NOW.date()
SIZE = (100, 30)

CONCEPT = """\
  - id: {id}
    kind: concept
    topic: {topic}
    prompt: "Question {id}?"
    answer: "Answer {id}."
    sources: [FACTS.md]
"""
KERNEL = """\
  - id: reduce
    kind: kernel
    topic: cuda-reduction
    language: cuda
    starter: reduce.cu
    solution: reduce.cu
    writeup: reduce.md
    harness: reduce_harness.py
    target_pct: 90
    prompt: Sum a vector at copy bandwidth.
    answer: Registers, then warp shuffles, then one atomic a block.
    sources: [FACTS.md]
"""
TOPICS = ("gpu-arch", "collectives", "serving")
DECK = CHECKED + "".join(CONCEPT.format(id=f"c{i:02d}", topic=TOPICS[i % 3]) for i in range(9)) + KERNEL

# grades cycled per card: the shape trace keeps failing, the diagnosis keeps passing
GRADES = {"t-shape": (2, 3, 1, 4, 2), "t-ledger": (4, 5, 3, 5), "t-diag": (5, 4, 5), "c00": (2, 4, 1), "c03": (3, 1)}
KERNEL_PCTS = (22.0, 41.5, 58.0, 63.2)


def review_days() -> dict[dt.date, int]:
    """Eight weeks up to today, with every fourth day off and one to five reviews on the others."""
    days = {}
    for back in range(55, -1, -1):
        if back % 4 != 3:
            days[TODAY - dt.timedelta(days=back)] = 1 + (back * 7) % 5
    return days


def seed_history(data_dir, cards) -> None:
    """Reviews through the scheduler on `review_days`, four kernel runs and one finished mock."""
    ids = sorted(cards)
    states: dict[str, CardState] = {}
    store = Store(data_dir)
    try:
        for day, count in review_days().items():
            for j in range(count):
                cid = ids[(day.toordinal() + j) % len(ids)]
                before = states.get(cid, CardState(cid))
                grades = GRADES.get(cid, (4, 5, 3))
                grade = grades[(day.toordinal() + j) % len(grades)]
                memory = review(before.sm2, grade, day)
                after = CardState(
                    cid,
                    sm2=memory,
                    due=days_after(day, memory.interval),
                    lapses=before.lapses + (grade < 3),
                    introduced_on=before.introduced_on or day,
                    last_review_day=day,
                )
                at = dt.datetime.combine(day, dt.time(9, j))
                store.record_review(before, after, grade=grade, at=at, day=day, duration_ms=5000, mode="review")
                states[cid] = after
        for pct in KERNEL_PCTS:
            store.record_kernel_attempt("reduce", "// source", {"pct_of_ceiling": pct})
        store.record_kernel_attempt("reduce", "// source", {"correct": None})  # a run no GPU could time
        started = NOW - dt.timedelta(days=2, hours=3)
        mock = store.start_mock(started, 30, [{"card_id": "t-shape"}, {"card_id": "t-diag"}])
        for position, (cid, topic, kind, score) in enumerate(
            [("t-shape", "transformer-shapes", "shape_trace", 1 / 3), ("t-diag", "profiling", "diagnosis", 1.0)]
        ):
            store.save_mock_answer(
                mock,
                cid,
                position=position,
                topic=topic,
                kind=kind,
                budget_s=600,
                spent_s=400,
                status="answered",
                score=score,
            )
        store.finish_mock(mock, started + dt.timedelta(minutes=24), "finished", 2 / 3, {"id": mock})
    finally:
        store.close()


@pytest.fixture
def seeded(tmp_path, write_deck):
    """(deck, data dir, report) for a history of eight weeks."""
    deck = write_deck(DECK)
    cards = load_decks([deck]).cards
    data = tmp_path / "data"
    seed_history(data, cards)
    return deck, data, collect(cards, data, now=NOW)


async def settle(pilot) -> None:
    await pilot.app.workers.wait_for_complete()
    for field in pilot.app.screen.query("Input, TextArea"):
        field.cursor_blink = False
    await refresh(pilot)


async def open_stats(pilot) -> StatsScreen:
    await settle(pilot)
    await type_keys(pilot, "ctrl+g")
    await settle(pilot)
    assert isinstance(pilot.app.screen, StatsScreen)
    return pilot.app.screen


# -- the heatmap grid ---------------------------------------------------------------------------
def test_an_empty_history_is_all_zeros():
    cells = heatmap_cells({}, TODAY)
    assert len(cells) == 7 and all(len(row) == 26 for row in cells)
    assert {level for row in cells for level in row} == {0}


@pytest.mark.parametrize(
    "day, row, column",
    [
        ("2026-05-10", 6, 25),  # today, a Sunday: the last cell
        ("2026-05-04", 0, 25),  # this week's Monday
        ("2026-05-06", 2, 25),  # Wednesday
        ("2026-04-30", 3, 24),  # Thursday of last week
        ("2025-11-10", 0, 0),  # the Monday 25 weeks before this week's
    ],
)
def test_a_review_lands_on_its_weekday_and_week(day, row, column):
    cells = heatmap_cells({day: 3}, TODAY)
    assert cells[row][column] > 0
    assert sum(level > 0 for r in cells for level in r) == 1


@pytest.mark.parametrize("day", ["2025-11-09", "2026-05-11"], ids=["before the grid", "after today"])
def test_days_outside_the_grid_are_left_out(day):
    assert {level for row in heatmap_cells({day: 4}, TODAY) for level in row} == {0}


def test_levels_rise_with_the_reviews_a_day():
    counts = {"2026-05-04": 1, "2026-05-05": 2, "2026-05-06": 3, "2026-05-07": 4, "2026-05-08": 12}
    levels = heatmap_cells(counts, TODAY)
    week = [levels[row][25] for row in range(5)]
    assert week == sorted(week) and week[0] == 1 and week[-1] == 4


def test_month_names_sit_over_the_week_of_their_first_day():
    labels = month_labels(heatmap_start(TODAY))
    assert labels.startswith("   Dec Jan")  # 1 Dec 2025 opens the grid's fourth week: no room for "Nov"
    assert labels.index("May") == 24  # 1 May 2026 is the Friday of last week


def test_retention_weeks_without_reviews_are_gaps():
    trend = [{"week_start": f"2026-02-{16 + i}", "reviews": 0, "retention": None} for i in range(10)]
    trend += [{"week_start": "2026-04-27", "reviews": 9, "retention": 0.6}]
    trend += [{"week_start": "2026-05-04", "reviews": 10, "retention": 0.9}]
    lines = RetentionChart(trend).render().plain.splitlines()
    assert "latest 90%" in lines[0]
    assert lines[-3].endswith("·· " * 10 + "██ ██")  # the bottom row: dots for the empty weeks
    assert lines[-2].startswith(" 50% └")  # the axis starts at 50 % while no week falls lower


@pytest.mark.parametrize(
    "history, count, shown",
    [(None, 0, "None yet"), ([], 0, "None yet"), (None, 3, "3 taken")],
    ids=["absent", "empty", "counted only"],
)
def test_mock_history_without_rows(history, count, shown):
    assert shown in MockHistory(history, count).render().plain


def test_bars_fill_eighths_and_leave_gaps():
    assert bar_rows([0, 4, 8, None], 1, 8) == [" ▄█ "]
    assert bar_rows([16, 1], 2, 16) == ["█ ", "█▁"]  # a small value still shows


def test_missing_values_sort_last_in_either_direction():
    topics = [
        TopicFigures("a", "A", retention=0.9, weakness=0.1, practised=True),
        TopicFigures("b", "B", retention=None, weakness=0.3, practised=True),
        TopicFigures("c", "C", retention=0.5, weakness=0.2, practised=True),
    ]
    assert [t.topic for t in sort_topics(topics, "retention")] == ["c", "a", "b"]
    assert [t.topic for t in sort_topics(topics, "retention", reverse=True)] == ["a", "c", "b"]
    assert [t.topic for t in sort_topics(topics, "weakness")] == ["b", "c", "a"]


def test_a_topic_not_practised_yet_has_no_weakness_and_sorts_after_those_measured():
    topics = [
        TopicFigures("new", "New", weakness=0.13, practised=False),
        TopicFigures("weak", "Weak", weakness=0.3, practised=True),
        TopicFigures("strong", "Strong", weakness=0.05, practised=True),
    ]
    assert [t.topic for t in sort_topics(topics, "weakness")] == ["weak", "strong", "new"]
    assert [t.topic for t in sort_topics(topics, "weakness", reverse=True)] == ["strong", "weak", "new"]
    weakness = BY_KEY["weakness"]
    assert [StatsScreen.cell(weakness, t).plain for t in topics] == ["-", "0.30", "0.05"]


def test_a_column_is_as_wide_as_its_widest_text_and_its_padding():
    assert column_width("weakness ▼", ["0.25", "0.07"]) == 12  # the arrow is one cell
    assert column_width("topic", ["transformer-shapes"]) == 20
    assert column_width("topic", []) == 7  # no topic yet: the label alone


def test_columns_are_left_out_in_the_chosen_order_until_the_table_fits():
    widths = {"topic": 22, "weakness": 12, "cards": 7, "reviews": 9, "retention": 9, "lapses": 8, "due_7d": 8}
    assert columns_that_fit(widths, 75, "weakness") == (list(widths), [])
    shown, left_out = columns_that_fit(widths, 60, "weakness")
    assert left_out == ["reviews", "cards"] and shown == ["topic", "weakness", "retention", "lapses", "due_7d"]
    shown, left_out = columns_that_fit(widths, 60, "reviews")  # the sorted column stays
    assert left_out == ["cards", "lapses"] and "reviews" in shown
    shown, left_out = columns_that_fit(widths, 10, "weakness")  # never fewer than the columns that always stay
    assert left_out == [k for k in LEAVE_OUT_FIRST if k in widths] and shown == ["topic", "weakness", "retention"]


# -- the screen ---------------------------------------------------------------------------------
async def test_stats_screen_on_a_seeded_history(seeded):
    deck, data, report = seeded
    app = make_app(AppOptions(data, [deck], clock=FixedClock(NOW), seed=1))
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_stats(pilot)
        table = screen.query_one("#sttopics", DataTable)
        order = [row.key.value for row in table.ordered_rows]
        weakness = {t.topic: t.weakness for t in report.topics}
        assert sorted(order) == sorted(weakness)
        assert [weakness[t] for t in order] == sorted(weakness.values(), reverse=True)
        assert order[0] == "transformer-shapes"  # the shape trace failed most and scored 1/3 in the mock
        assert "weakness, weakest first" in str(screen.query_one("#stsort").render())
        serving = table.get_row("serving")  # never in a mock, no kernel card: shown as "-"
        assert [str(serving[table.get_column_index(k)]) for k in ("last_mock", "kernel_best_pct_of_target")] == [
            "-"
        ] * 2

        def column(key: str) -> list[str]:
            return [str(table.get_row(row.key)[table.get_column_index(key)]) for row in table.ordered_rows]

        await type_keys(pilot, "s")  # the next column: cards, most first
        assert screen.sort_key == "cards" and "cards, highest first" in str(screen.query_one("#stsort").render())
        assert column("cards") == sorted(column("cards"), key=int, reverse=True)
        await type_keys(pilot, "r")
        assert column("cards") == sorted(column("cards"), key=int)

        await pilot.click("#sttopics", offset=(3, 0))  # the header of the topic column
        await refresh(pilot)
        assert screen.sort_key == "topic" and "topic, A to Z" in str(screen.query_one("#stsort").render())
        assert column("topic") == sorted(column("topic"), key=str.casefold)

        lines = screen.query_one(HeatmapChart).render().plain.splitlines()
        start = heatmap_start(TODAY)
        for day in (TODAY - dt.timedelta(days=back) for back in range(120)):
            offset = (day - start).days
            cell = lines[2 + offset % 7][4 + offset // 7]
            assert (cell in "░▒▓█") == (day in review_days()), day

        text = screen.query_one("#stmocks").render().plain
        assert "finished" in text and "67%" in text
        kernels = screen.query_one("#stkernels").render().plain
        assert "reduce" in kernels and "63%" in kernels
        row = next(line for line in kernels.splitlines() if line.startswith("reduce"))
        assert row.split()[1] == str(len(KERNEL_PCTS) + 1)  # the untimed run counts as a run

        await type_keys(pilot, "escape")
        await settle(pilot)
        assert not isinstance(app.screen, StatsScreen)


async def test_at_80_columns_the_table_leaves_out_counts_and_says_which(seeded):
    deck, data, _ = seeded
    app = make_app(AppOptions(data, [deck], clock=FixedClock(NOW), seed=1))
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_stats(pilot)
        table = screen.query_one("#sttopics", DataTable)
        keys = [str(column.key.value) for column in table.ordered_columns]
        assert keys == [
            "topic",
            "weakness",
            "retention",
            "lapses",
            "due_7d",
            "mean_ease",
            "last_mock",
            "kernel_best_pct_of_target",
        ]
        assert table.virtual_size.width <= table.scrollable_content_region.width  # nothing cut off at the right
        assert "left out to fit this width: reviews, cards" in str(screen.query_one("#stsort").render())
        await type_keys(pilot, "s")  # the next column shown: weakness -> retention, not the left-out cards
        assert screen.sort_key == "retention"
        await pilot.resize_terminal(100, 30)
        await settle(pilot)
        assert len(table.ordered_columns) == 10 and "left out" not in str(screen.query_one("#stsort").render())


async def test_an_empty_history_reads_plainly(tmp_path, write_deck):
    deck = write_deck(DECK)
    app = make_app(AppOptions(tmp_path / "data", [deck], clock=FixedClock(NOW), seed=1))
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_stats(pilot)
        assert screen.query_one("#sttopics", DataTable).row_count == 6
        assert "None yet" in screen.query_one("#stmocks").render().plain
        assert "nothing scheduled" in screen.query_one("#stforecast").render().plain
        assert "no reviews yet" in screen.query_one("#stretention").render().plain
        await type_keys(pilot, "q")
        await settle(pilot)
        assert not isinstance(app.screen, StatsScreen)


@pytest.mark.parametrize("size", [(100, 30), (80, 24)], ids=["100x30", "80x24"])
@pytest.mark.parametrize("keys", [(), ("end",)], ids=["top", "scrolled-to-the-end"])
def test_stats_snapshot(snap_compare, seeded, keys, size):
    deck, data, _ = seeded
    app = make_app(AppOptions(data, [deck], clock=FixedClock(NOW), seed=1))

    async def run_before(pilot) -> None:
        await open_stats(pilot)
        if keys:
            await type_keys(pilot, *keys)
            await settle(pilot)

    assert snap_compare(app, terminal_size=size, run_before=run_before)


def test_kernel_cards_run_where_nothing_could_time_them_are_listed():
    from drill.ui.stats_widgets import KernelProgress

    text = KernelProgress({"reduce": [40.0]}, {"transpose": 2, "reduce": 1}).render().plain
    assert "No kernel run yet" not in text
    rows = {line.split()[0]: line for line in text.splitlines()[2:]}
    assert rows["transpose"].split()[1] == "2" and "none timed (no GPU, or not correct yet)" in rows["transpose"]
    assert rows["reduce"].split()[1] == "2" and "40%" in rows["reduce"]
    assert "No kernel run yet" in KernelProgress({}, {}).render().plain

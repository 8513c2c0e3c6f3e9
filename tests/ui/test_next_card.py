"""Showing the next card quickly: a form with the same fields is filled with the next card rather than
mounted anew, the footer is rebuilt only when its keys change, and plain prompts skip the Markdown parser.
Each must look and behave exactly as before."""

import datetime as dt
import gc
import json

import pytest
from textual.widgets import Input, Label, Static
from textual.widgets._footer import FooterKey

from drill.start import AppOptions
from drill.ui.answering import AnswerForm, ConceptForm, ShapeTraceForm
from drill.ui.app import make_app
from drill.ui.markdown_view import MarkdownView, PlainParagraph, is_plain_paragraph, markdown
from tests.conftest import FixedClock, bundled_cards, rows, settle, type_keys

NOW = dt.datetime(2026, 5, 10, 12, 0)

SHAPES = """\
cards:
  - id: s-one
    kind: shape_trace
    topic: transformer-shapes
    prompt: Trace the projections.
    given: "X: (B, S, D)"
    steps:
      - {label: "Q = X Wq", shape: "(B, S, D)"}
      - {label: "K = X Wk", shape: "(B, S, D)"}
    answer: Both keep the model width.
    sources: [FACTS.md]
  - id: s-two
    kind: shape_trace
    topic: transformer-shapes
    prompt: Trace the scores.
    given: "Q, K: (B, H, S, Dh)"
    steps:
      - {label: "scores", shape: "(B, H, S, S)"}
      - {label: "weights", shape: "(B, H, S, S)"}
    answer: S by S per head.
    sources: [FACTS.md]
  - {id: c-last, kind: concept, topic: gpu-arch, prompt: "Why warps?", answer: "One instruction stream.", sources: [s]}
"""

LEDGERS = """\
cards:
""" + "".join(
    f"""\
  - id: l-{tokens}
    kind: memory_ledger
    topic: serving
    params:
      model: {{model: [opt-13b]}}
      t: {{choices: [{tokens}]}}
    prompt: "KV cache of {{{{ model.title }}}} for {{{{ t }}}} tokens in fp16?"
    answers:
      - {{label: KV cache, expr: "kv_bytes(model, tokens=t, dtype='fp16')", unit: bytes}}
    answer: "800 KB a token."
    sources: [s]
"""
    for tokens in (2048, 1024)
)


def prompt_of(app):
    return app.screen.query_one("#prompt", MarkdownView).source


async def test_the_next_concept_card_reuses_the_form_with_an_empty_live_field(tmp_path, concept_deck):
    data = tmp_path / "data"
    app = make_app(AppOptions(data, [concept_deck(3)], clock=FixedClock(NOW)))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        form, field = app.screen.form, app.screen.query_one("#typed", Input)
        assert app.screen.focused is field
        await type_keys(pilot, *"warps", "enter")
        await settle(pilot)
        assert app.screen.revealed and form.submitted and not field.display and app.screen.query_one("#answer").display
        await type_keys(pilot, "4")
        await settle(pilot)
        assert app.screen.form is form and form.card.id == "c01" and app.screen.query_one("#typed", Input) is field
        assert "Question c01?" in prompt_of(app) and "done 1 · left 2" in str(app.screen.query_one("#top").render())
        assert field.value == "" and not field.disabled and app.screen.focused is field
        assert not app.screen.revealed and not form.submitted and not app.screen.query_one("#answer").display
        assert str(app.screen.query_one("#verdict", Static).render()) == ""
        await type_keys(pilot, *"second", "enter")
        await settle(pilot)
        assert "second" in str(app.screen.query_one("#typed-whole", Static).render()) and not field.display
        assert "Answer c01." in app.screen.query_one("#answer", MarkdownView).source
        await type_keys(pilot, "5")
        await settle(pilot)
    logged = [(cid, json.loads(answer)) for cid, answer in rows(data, "SELECT card_id, answer FROM review_log")]
    assert logged == [("c00", {"typed": "warps"}), ("c01", {"typed": "second"})]


async def test_a_shape_trace_with_as_many_steps_shows_its_own_labels_and_clean_fields(tmp_path, write_deck):
    app = make_app(AppOptions(tmp_path / "data", [write_deck(SHAPES)], clock=FixedClock(NOW), new_order="deck"))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        form = app.screen.form
        assert isinstance(form, ShapeTraceForm) and form.card.id == "s-one"
        await type_keys(pilot, *"(B, S)", "enter", *"(B, S)", "enter")  # both wrong
        await settle(pilot)
        assert "0/2 steps right" in str(app.screen.query_one("#verdict", Static).render())
        assert all(box.has_class("wrong") for box in form.query(Input))
        await type_keys(pilot, "1")
        await settle(pilot)
        assert app.screen.form is form and form.card.id == "s-two" and "Trace the scores." in prompt_of(app)
        assert "Q, K: (B, H, S, Dh)" in prompt_of(app)
        assert [str(label.render()) for label in form.query(Label)] == ["1. scores", "2. weights"]
        boxes = list(form.query(Input))
        assert [b.value for b in boxes] == ["", ""] and not any(b.has_class("wrong") or b.disabled for b in boxes)
        assert app.screen.focused is boxes[0]
        await type_keys(pilot, *"(B, H, S, S)", "enter", *"(B, H, S, S)", "enter")
        await settle(pilot)
        assert "2/2 steps right" in str(app.screen.query_one("#verdict", Static).render())
        await type_keys(pilot, "5")
        await settle(pilot)
        # another kind: a new form of its own
        assert isinstance(app.screen.form, ConceptForm) and not form.is_attached
        assert len(app.screen.query(AnswerForm)) == 1 and "Why warps?" in prompt_of(app)


async def test_a_memory_ledger_keeps_the_draw_of_the_card_it_shows(tmp_path, write_deck):
    data = tmp_path / "data"
    app = make_app(AppOptions(data, [write_deck(LEDGERS)], clock=FixedClock(NOW), new_order="deck", seed=3))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        form = app.screen.form
        assert "2048 tokens" in prompt_of(app)
        await type_keys(pilot, *"1.5625 GiB", "enter")
        await settle(pilot)
        assert "1/1 right" in str(app.screen.query_one("#verdict", Static).render())
        await type_keys(pilot, "5")
        await settle(pilot)
        assert app.screen.form is form and "1024 tokens" in prompt_of(app)
        assert form.draw == {"model": "opt-13b", "t": 1024}
        await type_keys(pilot, *"0.78125 GiB", "enter")
        await settle(pilot)
        assert "1/1 right" in str(app.screen.query_one("#verdict", Static).render())
        assert "800 MiB" in app.screen.query_one("#answer", MarkdownView).source  # 1,024 tokens of 800 KiB
        await type_keys(pilot, "5")
        await settle(pilot)
    draws = [json.loads(a)["draw"]["t"] for (a,) in rows(data, "SELECT answer FROM review_log ORDER BY id")]
    assert draws == [2048, 1024]


async def test_a_late_submit_from_the_card_before_checks_nothing(tmp_path, concept_deck):
    app = make_app(AppOptions(tmp_path / "data", [concept_deck(2)], clock=FixedClock(NOW)))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await type_keys(pilot, "enter", "3")
        await settle(pilot)
        app.screen.form.post_message(AnswerForm.Submitted())
        await settle(pilot)
        assert not app.screen.revealed and app.screen.card.id == "c01"


def footer_keys(app):
    return [key.description for key in app.screen.query(FooterKey)]


async def test_the_footer_is_rebuilt_only_when_its_keys_change(tmp_path, concept_deck):
    app = make_app(AppOptions(tmp_path / "data", [concept_deck(2)], clock=FixedClock(NOW)))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        keys = list(app.screen.query(FooterKey))
        assert footer_keys(app)[:3] == ["Undo", "Suspend", "Bury"] and all(k.has_class("-compact") for k in keys)
        await type_keys(pilot, "enter", "4")  # focus moves off the field and back on the next card's
        await settle(pilot)
        assert list(app.screen.query(FooterKey)) == keys
        await type_keys(pilot, "enter", "4")  # the last card: nothing left to suspend or bury
        await settle(pilot)
        app.screen.refresh_bindings()  # how Textual tells the footer that the keys' states may have changed
        await settle(pilot, pauses=2)
        assert "Suspend" not in footer_keys(app) and "Bury" not in footer_keys(app)
        assert footer_keys(app)[0] == "Undo"


async def test_the_collector_runs_again_once_the_first_card_is_painted(tmp_path, concept_deck):
    gc.disable()  # as `drill` does before the app starts
    try:
        app = make_app(AppOptions(tmp_path / "data", [concept_deck(1)], clock=FixedClock(NOW)))
        async with app.run_test(size=(80, 24)) as pilot:
            await settle(pilot)
            assert gc.isenabled()
    finally:
        gc.enable()


async def test_the_frame_handoff_interval_lasts_as_long_as_the_app(tmp_path, concept_deck):
    import sys

    from drill.ui.app import FRAME_HANDOFF_S

    before = sys.getswitchinterval()
    app = make_app(AppOptions(tmp_path / "data", [concept_deck(1)], clock=FixedClock(NOW)))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert sys.getswitchinterval() == pytest.approx(FRAME_HANDOFF_S)
    assert sys.getswitchinterval() == pytest.approx(before)  # a process that goes on without the app keeps its own


async def test_a_refused_start_leaves_the_collector_on(tmp_path, concept_deck, capsys):
    from drill.cli import app as cli_app

    args = cli_app.no_arguments()
    args.data_dir = str(tmp_path / "data")
    args.decks = [str(concept_deck(1))]
    args.card = "no-such-card"
    assert cli_app.run(args) == 2
    assert gc.isenabled()
    assert "no-such-card" in capsys.readouterr().err


async def test_no_widget_of_the_review_screen_is_styled_by_its_place_among_its_siblings(tmp_path, concept_deck):
    # Textual styles such a widget again each time a sibling is mounted: a rule on `*:first-child` once had every
    # widget of the first card styled two or three times before it was painted
    app = make_app(AppOptions(tmp_path / "data", [concept_deck(2)], clock=FixedClock(NOW)))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await type_keys(pilot, "enter")  # the answer shown, in a view of its own
        await settle(pilot)
        placed = [node for node in app.screen.walk_children(with_self=True) if node._has_order_style]
        assert placed == []


async def test_a_markdown_views_blocks_are_a_blank_line_apart(tmp_path):
    from textual.app import App

    source = "Prose first.\n\n```\nline 1\nline 2\n```\n\nProse between.\n\n    indented code\n\nProse last."

    class OneView(App[None]):
        def compose(self):
            yield MarkdownView(source, id="view")

    def tops_and_gaps(view):
        regions = [child.region for child in view.children]
        return regions[0].y - view.region.y, [b.y - (a.y + a.height) for a, b in zip(regions, regions[1:])]

    app = OneView()
    async with app.run_test(size=(60, 30)) as pilot:
        await pilot.pause()
        view = app.query_one("#view", MarkdownView)
        assert len(view.children) == 5 and tops_and_gaps(view) == (0, [1, 1, 1, 1])
        view.show("One paragraph.")  # another arrangement of blocks: new children
        await pilot.pause()
        assert len(view.children) == 1 and tops_and_gaps(view) == (0, [])
        view.show(source)
        await pilot.pause()
        await pilot.pause()
        assert len(view.children) == 5 and tops_and_gaps(view) == (0, [1, 1, 1, 1])


def rendered(renderable, width):
    from rich.console import Console

    console = Console(width=width, force_terminal=True, color_system="truecolor")
    return list(console.render(renderable, console.options))


@pytest.mark.parametrize(
    "text, plain",
    [
        ("Why is the warp the unit of scheduling?", True),
        ('A colleague says: "Llama-3-8B is 16 GB in fp16" (weights only), so 24 GB is plenty.\n', True),
        ("Two lines\nof one paragraph", True),
        ("Uses **bold**", False),
        ("a `code` span", False),
        ("Two\n\nparagraphs", False),
        ("- a list", False),
        ("1. a list", False),
        ("    indented code", False),
        ("trailing spaces  \nmake a break", False),
        ("a | table", False),
        ("an &amp; entity", False),
        ("Heading\n===", False),
    ],
)
def test_plain_paragraphs_skip_the_parser_and_look_the_same(text, plain):
    from rich.markdown import Markdown

    assert is_plain_paragraph(text.rstrip("\n")) is plain
    assert isinstance(markdown(text), PlainParagraph) is plain
    for width in (12, 40, 78):
        assert rendered(markdown(text), width) == rendered(
            Markdown(text, code_theme="monokai", hyperlinks=False), width
        )


def test_every_bundled_plain_prompt_looks_as_rich_markdown_draws_it():
    from rich.markdown import Markdown

    plain = [c.prompt for c in bundled_cards().values() if is_plain_paragraph(c.prompt.rstrip("\n"))]
    assert len(plain) > 100
    for text in plain:
        assert rendered(markdown(text), 78) == rendered(Markdown(text, code_theme="monokai", hyperlinks=False), 78)


async def test_a_concept_answer_longer_than_its_field_is_shown_whole_under_it(tmp_path, concept_deck):
    import datetime as dt

    from textual.widgets import Input, Static

    from drill.start import AppOptions
    from drill.ui.app import make_app
    from tests.conftest import FixedClock, settle, type_keys

    app = make_app(AppOptions(tmp_path / "data", [concept_deck(2)], clock=FixedClock(dt.datetime(2026, 5, 10, 12))))
    async with app.run_test(size=(60, 24)) as pilot:
        await settle(pilot)
        whole = app.screen.query_one("#typed-whole", Static)
        await type_keys(pilot, *"short")
        await settle(pilot)
        assert str(whole.render()) == ""
        sentence = " and the warp shuffles reduce within a warp before one atomic per block"
        await type_keys(pilot, *sentence)
        await settle(pilot)
        assert str(whole.render()) == "short" + sentence  # all of it, though the field shows its end
        assert app.screen.query_one(Input).value == "short" + sentence
        await type_keys(pilot, "enter", "4")
        await settle(pilot)
        assert str(app.screen.query_one("#typed-whole", Static).render()) == ""  # the next card starts clean

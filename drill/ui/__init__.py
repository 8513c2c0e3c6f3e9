"""The Textual user interface. One way: screens and widgets post messages (`messages`), the app routes them
(`routes`), and no module here imports `app`.

- `app`: the DrillApp, assembled on a start decided before it (drill.start), its keys and quit, and `make_app`,
  the one factory the command line and the tests use.
- `routes`: ScreenRequests, the App class DrillApp is built on: its answers to what screens ask for (mocks,
  stats, the browser, focused practice) and what is kept when the app quits.
- `messages`: the messages screens post, named for what happened.
- `review`: today's queue one card at a time (the ReviewScreen, given a typed ReviewContext), its palette
  commands, and the kernel editor it opens for a kernel card.
- `answering`, `answer_fields`: the answer forms of each card kind, and their fields' keys in arrival order.
- `kernel_screen`, `verdict_view`: the kernel card's editor (a saved draft is always continued), and the
  judge's verdict as text.
- `mock_setup`, `mock_screen`: setting up a mock interview and its report; the timed questions.
- `stats_screen`, `stats_widgets`, `readiness_view`: weak topics and the charts; readiness for the interview
  date and the forecast's calibration.
- `browser`: every card, its schedule and history.
- `markdown_view`, `screen_keys`: a light Markdown view, and the keys several screens share (PageScreen: a
  screen with a scrolling page and maybe an answer form; the grade keys).
- `drill.tcss`: the styles, each scoped to its screen or widget.
"""

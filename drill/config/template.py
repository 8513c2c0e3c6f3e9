"""The settings file drill writes when there is none: every key at its default, commented out, with what it takes."""

TEMPLATE = """\
# drill's settings. Flags override this file; it overrides what earlier flags
# saved. `drill config show` lists what is in effect and why; `drill config
# set KEY VALUE` checks a value and writes it here, keeping these comments.

# New cards introduced per study day: a whole number, 0 or more.
# new_per_day = 10

# The local hour (0-23) at which the study day rolls over.
# day_starts_at = 4

# The scheduler: "sm2" or "fsrs". `drill config set scheduler fsrs` also
# rebuilds every card's schedule from the review log; no review is lost.
# scheduler = "sm2"

# The longest interval, in days, either scheduler may give a card: 1 to 36500
# (100 years, Anki's default). A new value applies from each card's next review.
# max_interval_days = 36500

# Which new cards come first: "lab" (the labs' topics in turn), "random"
# (a fresh draw each study day) or "deck" (deck by deck).
# new_order = "lab"

# A Textual theme: textual-dark, textual-light, nord, gruvbox, dracula, ...
# theme = "textual-dark"

# Judge kernel cards over SSH on "user@host", "host" (an ~/.ssh/config alias)
# or "user@host:port" (drill and its kernels extra installed there); ""
# judges them on this machine.
# gpu_host = ""

# Seconds a kernel run may take before it is stopped: a number above 0.
# judge_timeout = 60

# The interview date, such as 2026-12-15: readiness and the daily plan aim at
# it (`drill plan --date` sets it, `drill plan --clear` removes it); "" none.
# interview_date = ""

# The track the plan covers: training, inference or kernels; "" every card.
# interview_track = ""

# Minutes a day you give drill until the interview: 1 to 1440.
# minutes_per_day = 60

# The recall the plan aims at on the interview date, between 0 and 1.
# readiness_target = 0.9

# Key bindings by binding id; several keys are separated by commas. The review
# screen's ids: review.undo, review.suspend, review.bury, review.mock,
# review.stats, review.browser. Keys the answer field uses (ctrl+a, ctrl+e,
# ctrl+k, ctrl+u, ctrl+w) reach the field first.
[keys]
# "review.suspend" = "ctrl+y"
"""

"""What a plan to the interview date aims for when the learner names nothing: the recall on the date and the minutes a day.

Kept apart from drill.study.plan, which uses them, so the settings (read at every start) need
not import the planner and the memory model with them.
"""

DEFAULT_TARGET = 0.9  # mean predicted recall on the interview date
DEFAULT_MINUTES_PER_DAY = 60  # the minutes a day a plan is made for when the learner names none

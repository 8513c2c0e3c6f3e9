"""What a form keeps of an answer as its card leaves, for an undo or a skipped question to put back."""

from drill.ui.answering import KeptAnswer


def test_a_kept_answer_holds_something_once_text_is_typed_or_a_reading_chosen():
    assert not KeptAnswer().gave_something
    assert not KeptAnswer(typed=("", "")).gave_something
    assert KeptAnswer(typed=("", "(B, S, D)")).gave_something
    assert KeptAnswer(chosen=0).gave_something  # the first reading counts: 0 is a choice
    assert not KeptAnswer(choices_shown=True).gave_something  # the readings shown, none chosen

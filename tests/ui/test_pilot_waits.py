"""The pilot tests' wait (`handled`) returns only when the app has really finished with what it was sent."""

import asyncio

from textual.app import App, ComposeResult
from textual.message import Message
from textual.widgets import Static

from tests.conftest import handled


class Ping(Message):
    pass


class Pong(Message):
    pass


class Far(Static):
    got_pong = False

    def on_pong(self, message: Pong) -> None:
        self.got_pong = True


class Slow(Static):
    finished = False

    async def on_ping(self, message: Ping) -> None:
        await asyncio.sleep(0.05)  # the queue is empty while this handler waits
        self.mount(Static("late", id="late"))  # not awaited: the new widget starts on its own
        self.app.query_one(Far).post_message(Pong())
        self.finished = True


class Two(App):
    def compose(self) -> ComposeResult:
        yield Slow(id="slow")
        yield Far(id="far")


async def test_handled_waits_for_a_handler_that_awaits_and_for_what_it_started():
    app = Two()
    async with app.run_test() as pilot:
        await handled(pilot)
        app.query_one(Slow).post_message(Ping())
        await handled(pilot)
        assert app.query_one(Slow).finished
        assert app.query_one(Far).got_pong
        assert app.query_one("#late", Static).is_mounted

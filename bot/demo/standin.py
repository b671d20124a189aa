"""A local stand-in for the Telegram Bot API (aiohttp, 127.0.0.1): the server the end-to-end tests
run the real bot against, and the "Telegram" of ``interview-bot demo``.

It behaves like Telegram where the bot can tell: ``getUpdates`` long polling with ``offset``,
dates in seconds, ``is_bot`` in ``getMe``, edits that return the message, callback queries with
``chat_instance``, and it is strict: text over 4096 characters (after entity parsing, in UTF-16
units), malformed HTML (unknown or unclosed tags, bad nesting, stray ``<``/``&``), ``callback_data``
over 64 bytes, too many buttons, unknown methods, poll limits — all answered with Telegram's
errors. Users can send voice messages, video notes and audio files: their content is kept, and the
bot gets it as Telegram serves it (``getFile``, then ``/file/bot<token>/<file_path>``; over 20 MB:
"file is too big"). Faults can be injected (429 with ``retry_after``, 403 blocked, 400 ``migrate_to_chat_id``)
and Telegram's rate limits can be enforced.

Tests play the users through a synchronous API (:class:`FakeTelegram` started in a thread of its
own with :meth:`FakeTelegram.start`, :class:`FakeUser`). The demo serves the same routes from its own
web application on its own event loop (:meth:`FakeTelegram.add_routes`, :meth:`FakeTelegram.add_update`)
and follows every change through :attr:`FakeTelegram.on_change`.

Nothing of the bot imports this module: it is loaded only by the demo and the tests.
"""

from __future__ import annotations

import asyncio
import itertools
import threading
import time
from collections.abc import Callable
from typing import Any

from aiohttp import web

from bot.demo.bot_api import BOT_ID, BOT_USERNAME, TOKEN, Chat, Fault, Sent
from bot.demo.bot_methods import BotApiMethods
from bot.demo.markup import ALLOWED_TAGS, ApiError, check_markup, parse_html, parse_html_entities, utf16_len

__all__ = [
    "ALLOWED_TAGS",
    "BOT_ID",
    "BOT_USERNAME",
    "TOKEN",
    "ApiError",
    "Chat",
    "FakeTelegram",
    "FakeUser",
    "Fault",
    "Sent",
    "check_markup",
    "parse_html",
    "parse_html_entities",
    "utf16_len",
]


class FakeTelegram(BotApiMethods):
    """The fake server. Start with :meth:`start`; its methods are safe to call from tests. What the
    bot sees is in its bases: the state and HTTP side (:class:`~bot.demo.bot_api.BotApiServer`) and
    the Bot API methods (:class:`~bot.demo.bot_methods.BotApiMethods`)."""

    # -- lifecycle ------------------------------------------------------------------------------
    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> FakeTelegram:
        ready = threading.Event()

        def run() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            asyncio.set_event_loop(loop)
            loop.run_until_complete(self._start_server())
            ready.set()
            loop.run_forever()
            loop.run_until_complete(self._stop_server())
            pending = asyncio.all_tasks(loop)  # a long poll still open when the grace ran out
            for task in pending:
                task.cancel()
            loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
            loop.close()

        self._thread = threading.Thread(target=run, name="fake-telegram", daemon=True)
        self._thread.start()
        ready.wait(10)
        return self

    def stop(self) -> None:
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
        if self._thread is not None:
            self._thread.join(10)

    def add_routes(self, app: web.Application) -> None:
        """The Bot API's routes (``/bot<token>/<method>``, ``/file/bot<token>/<path>``); the updates
        wait on the loop that serves them."""
        self._cond = asyncio.Condition()
        self.polled = asyncio.Event()  # set at the bot's first getUpdates
        app.router.add_route("*", "/bot{token}/{method}", self._handle)
        app.router.add_route("*", "/file/bot{token}/{path:.*}", self._file)

    async def _start_server(self) -> None:
        app = web.Application(client_max_size=60 * 1024 * 1024)
        self.add_routes(app)
        # a stop need not wait for idle keep-alive connections (aiohttp's default grace: ~1 s per stop)
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.1)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = int(self._runner.addresses[0][1])

    async def _stop_server(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    def _call(self, coro: Any, timeout: float = 30) -> Any:
        assert self._loop is not None
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout)

    # -- the users' side ------------------------------------------------------------------------
    def private_chat(self, user_id: int) -> Chat:
        with self._lock:
            return self.chats.setdefault(user_id, Chat(user_id, "private"))

    def group(self, chat_id: int, title: str = "Study group", *, admins: set[int] | None = None,
              supergroup: bool = False) -> Chat:  # fmt: skip
        with self._lock:
            chat = self.chats.setdefault(chat_id, Chat(chat_id, "supergroup" if supergroup else "group", title))
            chat.admins |= admins or set()
            return chat

    def user(self, user_id: int, first_name: str = "Anna", language_code: str | None = "ru",
             chat: Chat | None = None) -> FakeUser:  # fmt: skip
        return FakeUser(self, user_id, first_name, language_code, chat or self.private_chat(user_id))

    def push_update(self, update: dict[str, Any]) -> int:
        """Add an update for the bot's next ``getUpdates`` (from another thread than the server's)."""
        result: int = self._call(self.add_update(update))
        return result

    async def add_update(self, update: dict[str, Any]) -> int:
        """Add an update (on the serving loop); returns its update_id."""
        update_id = next(self.update_ids)
        assert self._cond is not None
        async with self._cond:
            self.updates.append({"update_id": update_id, **update})
            self._cond.notify_all()
        return update_id

    # -- fault injection ------------------------------------------------------------------------
    def inject(self, method: str | None, code: int, description: str, *, chat_id: int | None = None,
               parameters: dict[str, Any] | None = None, times: int = 1,
               predicate: Callable[[dict[str, Any]], bool] | None = None) -> None:  # fmt: skip
        with self._lock:
            self.faults.append(Fault(method, chat_id, code, description, parameters, times, predicate))

    def retry_after(self, seconds: int, *, method: str | None = "sendMessage", times: int = 1,
                    chat_id: int | None = None) -> None:  # fmt: skip
        self.inject(method, 429, f"Too Many Requests: retry after {seconds}", chat_id=chat_id,
                    parameters={"retry_after": seconds}, times=times)  # fmt: skip

    def storm_429(self, every: int = 10, *, method: str = "sendMessage") -> None:
        """Answer every ``every``-th call of ``method`` with 429 and retry_after 1..3 s."""
        calls = itertools.count(1)

        def hit(params: dict[str, Any]) -> bool:
            n = next(calls)
            if n % every:
                return False
            seconds = 1 + (n // every) % 3
            self.faults.append(Fault(method, None, 429, f"Too Many Requests: retry after {seconds}",
                                     {"retry_after": seconds}, 1))  # fmt: skip
            return False

        self.inject(method, 429, "unused", times=10**9, predicate=hit)

    def sends_during_pauses(
        self, method: str = "sendMessage", slack: float = 0.1, *, in_flight: float | None = None
    ) -> list[float]:
        """Times of ``method`` calls that arrived while a 429's retry_after was still running
        (``in_flight``, default ``slack``: how late after the 429 a send already on the wire may come)."""
        with self._lock:
            calls = [at for m, _, at in self.calls if m == method]
            pauses = list(self.pauses)
        early = slack if in_flight is None else in_flight
        return [at for at in calls for start, length in pauses if start + early < at < start + length - slack]

    def block(self, chat_id: int) -> None:
        with self._lock:
            self.chats[chat_id].blocked = True

    def migrate(self, chat_id: int, new_id: int) -> None:
        with self._lock:
            old = self.chats[chat_id]
            old.migrated_to = new_id
            self.chats[new_id] = Chat(new_id, "supergroup", old.title, set(old.admins))

    # -- observing the bot ----------------------------------------------------------------------
    def messages(self, chat_id: int | None = None) -> list[Sent]:
        with self._lock:
            return [m for m in self.sent if chat_id is None or m.chat_id == chat_id]

    def wait_for(self, predicate: Callable[[], bool], timeout: float = 10.0, what: str = "") -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if predicate():
                return
            time.sleep(0.02)
        raise AssertionError(f"timed out after {timeout}s waiting for {what or predicate}")

    def wait_messages(self, chat_id: int, count: int, *, after: int = 0, timeout: float = 10.0) -> list[Sent]:
        self.wait_for(lambda: len(self.messages(chat_id)) >= after + count, timeout,
                      f"{count} message(s) in chat {chat_id} after {after}")  # fmt: skip
        return self.messages(chat_id)[after:]

    def calls_of(self, method: str) -> list[dict[str, Any]]:
        with self._lock:
            return [p for m, p, _ in self.calls if m == method]


class FakeUser:
    """A person in a chat: sends messages, replies, presses buttons, edits, answers polls."""

    def __init__(self, fake: FakeTelegram, user_id: int, first_name: str, language_code: str | None,
                 chat: Chat) -> None:  # fmt: skip
        self.fake, self.id, self.first_name, self.language_code = fake, user_id, first_name, language_code
        self.chat = chat

    def as_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"id": self.id, "is_bot": False, "first_name": self.first_name}
        if self.language_code:
            data["language_code"] = self.language_code
        return data

    def in_chat(self, chat: Chat) -> FakeUser:
        return FakeUser(self.fake, self.id, self.first_name, self.language_code, chat)

    def _message(self, text: str, reply_to: int | None = None, message_id: int | None = None) -> dict[str, Any]:
        message: dict[str, Any] = {
            "message_id": message_id or self.fake.new_message_id(self.chat.id),
            "date": int(time.time()),
            "chat": self.chat.as_dict(),
            "from": self.as_dict(),
            "text": text,
        }
        if text.startswith("/"):
            command = text.split()[0]
            message["entities"] = [{"type": "bot_command", "offset": 0, "length": utf16_len(command)}]
        if reply_to is not None:
            original = next((m for m in self.fake.messages(self.chat.id) if m.message_id == reply_to), None)
            message["reply_to_message"] = {
                "message_id": reply_to, "date": int(time.time()), "chat": self.chat.as_dict(),
                "from": self.fake._bot_user(), "text": original.text if original else "…",
            }  # fmt: skip
        return message

    def mark(self) -> None:
        """The next :meth:`expect` waits for bot messages sent after this point."""
        self._seen = len(self.fake.messages(self.chat.id))

    def send(self, text: str, *, reply_to: int | None = None) -> int:
        """Send a message; returns its message id."""
        self.mark()
        message = self._message(text, reply_to)
        self.fake.push_update({"message": message})
        return int(message["message_id"])

    def message_update(self, text: str, *, reply_to: int | None = None) -> dict[str, Any]:
        """The update of a message from this user (for :meth:`FakeTelegram.add_update`)."""
        return {"message": self._message(text, reply_to)}

    def edit(self, message_id: int, text: str) -> None:
        self.mark()
        message = self._message(text, message_id=message_id)
        message["edit_date"] = int(time.time())
        self.fake.push_update({"edited_message": message})

    def send_voice(self, content: bytes, duration: int, *, kind: str = "voice", reply_to: int | None = None,
                   file_size: int | None = None) -> int:  # fmt: skip
        """Send a voice message (``kind``: voice, video_note or audio) with this audio; ``file_size``
        overrides the size Telegram reports. Returns the message id."""
        self.mark()
        update = self.voice_update(content, duration, kind=kind, reply_to=reply_to, file_size=file_size)
        self.fake.push_update(update)
        return int(update["message"]["message_id"])

    def voice_update(self, content: bytes, duration: int, *, kind: str = "voice", reply_to: int | None = None,
                     file_size: int | None = None) -> dict[str, Any]:  # fmt: skip
        """The update of a voice message (see :meth:`send_voice`); the file is kept for ``getFile``."""
        extension, folder = {"voice": ("oga", "voice"), "video_note": ("mp4", "video_notes"),
                             "audio": ("mp3", "music")}[kind]  # fmt: skip
        file_id, unique_id = self.fake.add_file(content, extension, folder)
        media: dict[str, Any] = {"file_id": file_id, "file_unique_id": unique_id, "duration": duration,
                                 "file_size": len(content) if file_size is None else file_size}  # fmt: skip
        if kind == "voice":
            media["mime_type"] = "audio/ogg"
        elif kind == "video_note":
            media["length"] = 240
        else:
            media.update(mime_type="audio/mpeg", file_name="answer.mp3")
        message = self._message("", reply_to)
        del message["text"]
        message[kind] = media
        return {"message": message}

    def send_sticker(self) -> None:
        self.mark()
        message = {
            "message_id": self.fake.new_message_id(self.chat.id), "date": int(time.time()),
            "chat": self.chat.as_dict(), "from": self.as_dict(),
            "sticker": {"file_id": "s1", "file_unique_id": "s1u", "width": 512, "height": 512,
                        "is_animated": False, "is_video": False, "type": "regular"},
        }  # fmt: skip
        self.fake.push_update({"message": message})

    def press(self, message: Sent, data: str) -> str:
        self.mark()
        query_id = f"cq{time.monotonic_ns()}"
        self.fake.push_update(self.press_update(message, data, query_id))
        return query_id

    def press_update(self, message: Sent, data: str, query_id: str) -> dict[str, Any]:
        """The update of a press on a button of ``message`` (a callback query with ``query_id``)."""
        return {
            "callback_query": {
                "id": query_id, "from": self.as_dict(), "chat_instance": f"ci{self.chat.id}",
                "data": data,
                "message": {"message_id": message.message_id, "date": int(message.at),
                            "chat": self.chat.as_dict(), "from": self.fake._bot_user(),
                            "text": message.text,
                            # as Telegram does: the message carries its current inline keyboard
                            **({"reply_markup": message.reply_markup} if message.reply_markup else {})},
            }
        }  # fmt: skip

    def inline_query(self, text: str, offset: str = "") -> str:
        """Type ``@bot text`` in some chat: an inline query; returns its id (see inline_answers)."""
        query_id = f"iq{time.monotonic_ns()}"
        self.fake.inline_queries.add(query_id)
        self.fake.push_update(
            {"inline_query": {"id": query_id, "from": self.as_dict(), "query": text, "offset": offset,
                              "chat_type": "sender"}}
        )  # fmt: skip
        return query_id

    def answer_poll(self, poll_id: str, option: int | None) -> None:
        """Tap an option of a poll (None: retract the vote)."""
        self.fake.push_update(self.poll_answer_update(poll_id, option))

    def poll_answer_update(self, poll_id: str, option: int | None) -> dict[str, Any]:
        options = [] if option is None else [option]
        return {
            "poll_answer": {
                "poll_id": poll_id,
                "user": self.as_dict(),
                "option_ids": options,
                "option_persistent_ids": [str(o) for o in options],
            }
        }

    _seen = 0

    def expect(self, count: int = 1, timeout: float = 10.0) -> list[Sent]:
        """Wait for the bot's next ``count`` messages in this chat since the last action."""
        before = self._seen
        got = self.fake.wait_messages(self.chat.id, count, after=before, timeout=timeout)[:count]
        self._seen = before + count
        return got

    def quiet(self, seconds: float = 0.5) -> list[Sent]:
        """Messages the bot sent since the last action, after waiting a little (for "no reply")."""
        time.sleep(seconds)
        return self.fake.messages(self.chat.id)[self._seen :]

"""Daily settings: parse, validate and store a chat's daily question — time, zone, weekdays,
on/off, question or quiz, and the group's evening reveal.

``parse_command`` reads the words of ``/daily …`` and ``button_change`` a settings button; both
return a :class:`Change`: the values to store, or the message key of what is wrong. ``save``
stores the values and recomputes the next push (never a second push on a day already served).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from bot.bank.model import is_number
from bot.core.schedule import ScheduleError, parse_time, parse_zone, schedule_fields
from bot.db import chat_store as chats
from bot.db import deliveries
from bot.db.engine import Database
from bot.db.models import Chat, PushKind

DEFAULT_MINUTE = 9 * 60
OFF_WORDS = frozenset({"off", "выкл", "выключить", "stop", "стоп", "нет"})
ON_WORDS = frozenset({"on", "вкл", "включить", "да"})
WEEKDAY_WORDS = frozenset({"weekdays", "будни", "будние"})
EVERYDAY_WORDS = frozenset({"everyday", "daily", "ежедневно", "каждый", "все"})
QUIZ_WORDS = frozenset({"quiz", "квиз", "опрос"})
QUESTION_WORDS = frozenset({"question", "вопрос"})
REVEAL_WORDS = frozenset({"reveal", "разбор"})


@dataclass(frozen=True, slots=True)
class Change:
    """Values to store, or ``error``: the message key (``daily.bad_input`` names ``value``)."""

    values: Mapping[str, object] = field(default_factory=dict)
    error: str = ""
    value: str = ""  # what could not be read (at most 40 characters)


def minute_or_default(minute: int | None) -> int:
    return minute if minute is not None else DEFAULT_MINUTE


def parse_command(words: Sequence[str], *, private: bool, minute: int | None) -> Change:
    """The change ``/daily <words>`` asks for; ``minute`` is the chat's current push time."""
    head = words[0].lower()
    if head in OFF_WORDS:
        return Change({"push_enabled": False})
    if head in ON_WORDS:
        return Change({"push_enabled": True, "push_minute": minute_or_default(minute)})
    if head in WEEKDAY_WORDS | EVERYDAY_WORDS:
        return Change({"push_weekdays_only": head in WEEKDAY_WORDS})
    if head in QUIZ_WORDS | QUESTION_WORDS:
        if private:
            return Change(error="daily.quiz_groups_only")
        return Change({"push_kind": PushKind.QUIZ if head in QUIZ_WORDS else PushKind.QUESTION})
    if head in REVEAL_WORDS:
        if private:
            return Change(error="daily.reveal_groups_only")
        value = words[1].lower() if len(words) > 1 else ""
        if value in OFF_WORDS:
            return Change({"reveal_minute": None})
        try:
            return Change({"reveal_minute": parse_time(value)})
        except ScheduleError:
            return Change(error="daily.bad_value")
    try:
        push_minute = parse_time(words[0])
        zone = parse_zone(" ".join(words[1:])) if len(words) > 1 else None
    except ScheduleError as exc:
        return Change(error="daily.bad_input", value=str(exc)[:40])
    values: dict[str, object] = {"push_enabled": True, "push_minute": push_minute}
    if zone is not None:
        values["timezone"] = zone
    return Change(values)


def button_change(action: str, chat: Chat) -> Change | None:
    """The change a settings button asks for (None: a stale button)."""
    if action == "on":
        return Change({"push_enabled": True, "push_minute": minute_or_default(chat.push_minute)})
    if action == "off":
        return Change({"push_enabled": False})
    if action == "wd":
        return Change({"push_weekdays_only": not chat.push_weekdays_only})
    if action.startswith("t") and is_number(action[1:]) and int(action[1:]) < 24 * 60:
        return Change({"push_enabled": True, "push_minute": int(action[1:])})
    return None


async def save(
    db: Database,
    *,
    chat_id: int,
    user_id: int | None,
    values: Mapping[str, object],
    now: datetime,
    default_zone: str,
) -> Chat:
    """Store settings and recompute the next push; in a private chat the zone is the user's too
    (``/stats`` counts days in it). Returns the chat as stored."""
    async with db.write() as session:
        await chats.set_chat_fields(session, chat_id, **values)
        chat = await session.get(Chat, chat_id, populate_existing=True)
        assert chat is not None
        if chat.push_enabled and chat.push_minute is not None:
            zone = chat.timezone or default_zone
            last = await deliveries.last_delivery_date(session, chat_id)
            fields = schedule_fields(
                zone, chat.push_minute, chat.push_weekdays_only, now, last + timedelta(days=1) if last else None
            )
            await chats.set_chat_fields(session, chat_id, **fields, push_stopped_reason=None)
            chat.next_push_at, chat.next_push_date = fields["next_push_at"], fields["next_push_date"]
        if "timezone" in values and user_id is not None and chat.type == "private":
            await chats.set_user_fields(session, user_id, timezone=values["timezone"])
    return chat

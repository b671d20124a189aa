"""/daily: the chat's daily question — time, zone, weekdays, on/off, and the group's evening reveal."""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy import func, select
from telegram import InlineKeyboardButton, InlineKeyboardMarkup, Update
from telegram.constants import ChatType

from bot.bank.markdown import escape
from bot.bank.model import is_number
from bot.core.schedule import ScheduleError, describe_zone, format_minute, get_tz, parse_time, parse_zone
from bot.db import repo
from bot.db.models import Chat, Delivery
from bot.i18n import t
from bot.push.planner import schedule_fields
from bot.tg.callbacks import Callback, encode
from bot.tg.common import command_args, reply, reply_text
from bot.tg.context import Ctx
from bot.tg.handlers.admin_checks import require_group_admin
from bot.tg.views import View

DEFAULT_MINUTE = 9 * 60
PRESETS = (8 * 60, 9 * 60, 12 * 60, 18 * 60, 21 * 60)
OFF_WORDS = {"off", "выкл", "выключить", "stop", "стоп", "нет"}
ON_WORDS = {"on", "вкл", "включить", "да"}
WEEKDAY_WORDS = {"weekdays", "будни", "будние"}
EVERYDAY_WORDS = {"everyday", "daily", "ежедневно", "каждый", "все"}
QUIZ_WORDS = {"quiz", "квиз", "опрос"}
QUESTION_WORDS = {"question", "вопрос"}


async def _save(update: Update, context: Ctx, **values: object) -> Chat:
    """Store settings and recompute the next push (never a second push on a day already served)."""
    s = context.services
    chat_id = update.effective_chat.id  # type: ignore[union-attr]
    now = s.clock()
    async with s.db.write() as session:
        await repo.set_chat_fields(session, chat_id, **values)
        chat = await session.get(Chat, chat_id, populate_existing=True)
        assert chat is not None
        if chat.push_enabled and chat.push_minute is not None:
            zone = chat.timezone or s.settings.default_timezone
            last = await session.scalar(select(func.max(Delivery.local_date)).where(Delivery.chat_id == chat_id))
            fields = schedule_fields(
                zone,
                chat.push_minute,
                chat.push_weekdays_only,
                now,
                last + timedelta(days=1) if last else None,
            )
            await repo.set_chat_fields(session, chat_id, **fields, push_stopped_reason=None)
            chat.next_push_at, chat.next_push_date = fields["next_push_at"], fields["next_push_date"]
        if "timezone" in values and update.effective_user and chat.type == ChatType.PRIVATE:
            await repo.set_user_fields(session, update.effective_user.id, timezone=values["timezone"])
    context.chat_row = chat
    return chat


def _when(chat: Chat, lang: str, now: datetime, zone: str) -> str:
    if not chat.push_enabled or chat.next_push_at is None:
        return ""
    local = chat.next_push_at.astimezone(get_tz(zone))
    today = now.astimezone(get_tz(zone)).date()
    if local.date() == today:
        day = t(lang, "daily.today")
    elif local.date() == today + timedelta(days=1):
        day = t(lang, "daily.tomorrow")
    else:
        day = local.strftime("%d.%m")
    return t(lang, "daily.next", day=day, time=local.strftime("%H:%M"))


def settings_view(chat: Chat, context: Ctx) -> View:
    lang = context.lang
    s = context.services
    zone = chat.timezone or s.settings.default_timezone
    now = s.clock()
    topic = s.catalog.bank.topic(chat.topic_filter or "")
    lines = [
        t(lang, "daily.title", state=t(lang, "daily.on" if chat.push_enabled else "daily.off")),
        t(
            lang,
            "daily.time",
            time=format_minute(chat.push_minute if chat.push_minute is not None else DEFAULT_MINUTE),
            zone=escape(describe_zone(zone, now)),
        ),
        t(lang, "daily.days_weekdays" if chat.push_weekdays_only else "daily.days_all"),
        t(lang, "daily.topic", topic=escape(topic.title(lang)) if topic else t(lang, "daily.all_topics")),
    ]
    if chat.type != ChatType.PRIVATE:
        reveal = format_minute(chat.reveal_minute) if chat.reveal_minute is not None else t(lang, "daily.off")
        lines.append(t(lang, "daily.reveal", reveal=reveal))
        lines.append(t(lang, "daily.kind_quiz" if chat.push_kind == "quiz" else "daily.kind_question"))
    when = _when(chat, lang, now, zone)
    if when:
        lines.append(when)
    if chat.push_stopped_reason:
        lines.append(t(lang, "daily.stopped"))
    lines.append("")
    lines.append(t(lang, "daily.usage_short"))

    def btn(label: str, action: str) -> InlineKeyboardButton:
        return InlineKeyboardButton(label, callback_data=encode("d", action))

    toggle = btn(t(lang, "daily.btn_off"), "off") if chat.push_enabled else btn(t(lang, "daily.btn_on"), "on")
    weekdays = btn(("✓ " if chat.push_weekdays_only else "") + t(lang, "daily.btn_weekdays"), "wd")
    presets = [btn(format_minute(m), f"t{m:04d}") for m in PRESETS]
    rows = [[toggle, weekdays], presets, [btn(t(lang, "daily.btn_topics"), "topics")]]
    return View("\n".join(lines), InlineKeyboardMarkup(rows))


def _minute_or_default(chat: Chat) -> int:
    return chat.push_minute if chat.push_minute is not None else DEFAULT_MINUTE


def _help(lang: str) -> str:
    return t(lang, "daily.bad_value")


async def cmd_daily(update: Update, context: Ctx) -> None:
    args = command_args(context)
    chat = context.chat_row
    assert chat is not None
    if not args:
        await reply(update, settings_view(chat, context))
        return
    if not await require_group_admin(update, context):
        return
    words = args.split()
    head = words[0].lower()
    if head in OFF_WORDS:
        chat = await _save(update, context, push_enabled=False)
    elif head in ON_WORDS:
        chat = await _save(update, context, push_enabled=True, push_minute=_minute_or_default(chat))
    elif head in WEEKDAY_WORDS | EVERYDAY_WORDS:
        chat = await _save(update, context, push_weekdays_only=head in WEEKDAY_WORDS)
    elif head in QUIZ_WORDS | QUESTION_WORDS:
        if chat.type == ChatType.PRIVATE:
            await reply_text(update, t(context.lang, "daily.quiz_groups_only"))
            return
        chat = await _save(update, context, push_kind="quiz" if head in QUIZ_WORDS else "question")
    elif head in ("reveal", "разбор"):
        if chat.type == ChatType.PRIVATE:
            await reply_text(update, t(context.lang, "daily.reveal_groups_only"))
            return
        value = words[1].lower() if len(words) > 1 else ""
        if value in OFF_WORDS:
            chat = await _save(update, context, reveal_minute=None)
        else:
            try:
                minute = parse_time(value)
            except ScheduleError:
                await reply_text(update, _help(context.lang))
                return
            chat = await _save(update, context, reveal_minute=minute)
    else:
        try:
            minute = parse_time(words[0])
            zone = parse_zone(" ".join(words[1:])) if len(words) > 1 else None
        except ScheduleError as exc:
            await reply_text(
                update,
                t(context.lang, "daily.bad_input", value=escape(str(exc)[:40])) + "\n\n" + _help(context.lang),
            )
            return
        values: dict[str, object] = {"push_enabled": True, "push_minute": minute}
        if zone is not None:
            values["timezone"] = zone
        chat = await _save(update, context, **values)
    await reply(update, settings_view(chat, context))


async def cb_daily(update: Update, context: Ctx, cb: Callback) -> None:
    action = cb.args[0]
    chat = context.chat_row
    assert chat is not None
    if action == "topics":
        from bot.tg.handlers.browse import cmd_topics

        await cmd_topics(update, context)
        return
    if not await require_group_admin(update, context):
        return
    if action == "on":
        chat = await _save(update, context, push_enabled=True, push_minute=_minute_or_default(chat))
    elif action == "off":
        chat = await _save(update, context, push_enabled=False)
    elif action == "wd":
        chat = await _save(update, context, push_weekdays_only=not chat.push_weekdays_only)
    elif action.startswith("t") and is_number(action[1:]) and int(action[1:]) < 24 * 60:
        chat = await _save(update, context, push_enabled=True, push_minute=int(action[1:]))
    else:
        await reply_text(update, t(context.lang, "stale_button"))
        return
    view = settings_view(chat, context)
    query = update.callback_query
    if query is not None and query.message is not None:
        await context.bot.edit_message_text(
            view.text,
            chat_id=chat.id,
            message_id=query.message.message_id,
            parse_mode="HTML",
            reply_markup=view.keyboard,
        )
    else:
        await reply(update, view)

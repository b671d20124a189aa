"""/daily: the chat's daily question — time, zone, weekdays, on/off, and the group's evening reveal."""

from __future__ import annotations

from datetime import datetime, timedelta

from telegram import InlineKeyboardButton, InlineKeyboardMarkup, Update
from telegram.constants import ChatType

from bot.bank.markdown import escape
from bot.core.schedule import describe_zone, format_minute, get_tz
from bot.db.models import Chat, PushKind
from bot.i18n import t
from bot.services import daily
from bot.tg.callbacks import DailyAction
from bot.tg.common import command_args, reply, reply_text
from bot.tg.context import Ctx
from bot.tg.handlers.admin_checks import require_group_admin
from bot.tg.views import View

PRESETS = (8 * 60, 9 * 60, 12 * 60, 18 * 60, 21 * 60)


async def _save(update: Update, context: Ctx, change: daily.Change) -> Chat:
    """Store the settings (and the next push); the update's state sees them too."""
    s, chat, user = context.services, update.effective_chat, update.effective_user
    assert chat is not None
    context.chat_row = await daily.save(
        s.db, chat_id=chat.id, user_id=user.id if user else None, values=change.values, now=s.clock(),
        default_zone=s.settings.default_timezone,
    )  # fmt: skip
    return context.chat_row


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
    topic = s.bank.topic(chat.topic_filter or "")
    lines = [
        t(lang, "daily.title", state=t(lang, "daily.on" if chat.push_enabled else "daily.off")),
        t(
            lang,
            "daily.time",
            time=format_minute(chat.push_minute if chat.push_minute is not None else daily.DEFAULT_MINUTE),
            zone=escape(describe_zone(zone, now)),
        ),
        t(lang, "daily.days_weekdays" if chat.push_weekdays_only else "daily.days_all"),
        t(lang, "daily.topic", topic=escape(topic.title(lang)) if topic else t(lang, "daily.all_topics")),
    ]
    if chat.type != ChatType.PRIVATE:
        reveal = format_minute(chat.reveal_minute) if chat.reveal_minute is not None else t(lang, "daily.off")
        lines.append(t(lang, "daily.reveal", reveal=reveal))
        lines.append(t(lang, "daily.kind_quiz" if chat.push_kind == PushKind.QUIZ else "daily.kind_question"))
    when = _when(chat, lang, now, zone)
    if when:
        lines.append(when)
    if chat.push_stopped_reason:
        lines.append(t(lang, "daily.stopped"))
    lines.append("")
    lines.append(t(lang, "daily.usage_short"))

    def btn(label: str, action: str) -> InlineKeyboardButton:
        return InlineKeyboardButton(label, callback_data=DailyAction(action).encode())

    toggle = btn(t(lang, "daily.btn_off"), "off") if chat.push_enabled else btn(t(lang, "daily.btn_on"), "on")
    weekdays = btn(("✓ " if chat.push_weekdays_only else "") + t(lang, "daily.btn_weekdays"), "wd")
    presets = [btn(format_minute(m), f"t{m:04d}") for m in PRESETS]
    rows = [[toggle, weekdays], presets, [btn(t(lang, "daily.btn_topics"), "topics")]]
    return View("\n".join(lines), InlineKeyboardMarkup(rows))


def error_text(change: daily.Change, lang: str) -> str:
    if change.error == "daily.bad_input":
        return t(lang, "daily.bad_input", value=escape(change.value)) + "\n\n" + t(lang, "daily.bad_value")
    return t(lang, change.error)


async def cmd_daily(update: Update, context: Ctx) -> None:
    args = command_args(context)
    chat = context.chat_row
    assert chat is not None
    if not args:
        await reply(update, settings_view(chat, context))
        return
    if not await require_group_admin(update, context):
        return
    change = daily.parse_command(args.split(), private=chat.type == ChatType.PRIVATE, minute=chat.push_minute)
    if change.error:
        await reply_text(update, error_text(change, context.lang))
        return
    await reply(update, settings_view(await _save(update, context, change), context))


async def cb_daily(update: Update, context: Ctx, data: DailyAction) -> None:
    action = data.action
    chat = context.chat_row
    assert chat is not None
    if action == "topics":
        from bot.tg.handlers.browse import cmd_topics

        await cmd_topics(update, context)
        return
    if not await require_group_admin(update, context):
        return
    change = daily.button_change(action, chat)
    if change is None:
        await reply_text(update, t(context.lang, "stale_button"))
        return
    view = settings_view(await _save(update, context, change), context)
    query = update.callback_query
    if query is not None and query.message is not None:
        await context.bot.edit_message_text(
            view.text, chat_id=chat.id, message_id=query.message.message_id, link_preview_options=None,
            reply_markup=view.keyboard,
        )  # fmt: skip
    else:
        await reply(update, view)

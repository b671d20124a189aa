"""/start (with deep links), /help, /lang and the menu keyboard."""

from __future__ import annotations

from typing import cast

from telegram import (
    BotCommand,
    BotCommandScope,
    BotCommandScopeAllChatAdministrators,
    BotCommandScopeAllGroupChats,
    BotCommandScopeAllPrivateChats,
    Update,
)
from telegram.constants import ChatType

from bot.bank.markdown import escape
from bot.db.models import AskSource
from bot.i18n import LANGUAGES, counted, t
from bot.services import user_data
from bot.tg.callbacks import Language
from bot.tg.common import ask_question, command_args, is_group, reply, reply_text
from bot.tg.context import Ctx
from bot.tg.handlers.browse import cmd_glossary, cmd_topics
from bot.tg.handlers.questions import next_question
from bot.tg.views import View, lang_keyboard, main_menu, term_view

COMMANDS = ("q", "answer", "topics", "glossary", "search", "daily", "interview", "review",
            "stats", "quiz", "top", "export", "forget", "lang", "help")  # fmt: skip


# What a group member uses; group admins also set the group's daily question and language.
GROUP_COMMANDS = ("q", "answer", "topics", "glossary", "search", "quiz", "top", "stats", "help")
ADMIN_COMMANDS = (*GROUP_COMMANDS[:-1], "daily", "lang", "help")


def bot_commands(lang: str, names: tuple[str, ...] = COMMANDS) -> list[BotCommand]:
    return [BotCommand(name, t(lang, f"commands.{name}")) for name in names]


def command_menus() -> list[tuple[BotCommandScope, tuple[str, ...]]]:
    """The command menu of each scope: private chats, group members, group administrators."""
    return [
        (BotCommandScopeAllPrivateChats(), COMMANDS),
        (BotCommandScopeAllGroupChats(), GROUP_COMMANDS),
        (BotCommandScopeAllChatAdministrators(), ADMIN_COMMANDS),
    ]


async def cmd_start(update: Update, context: Ctx) -> None:
    payload = command_args(context)
    if payload and await _deep_link(update, context, payload):
        return
    s = context.services.bank.summary()
    user = update.effective_user
    if is_group(update):
        await reply_text(update, t(context.lang, "welcome_group"))
        return
    text = t(
        context.lang,
        "welcome",
        name=escape(user.first_name if user else ""),
        questions=counted(cast(int, s["questions"]), "questions", context.lang),
        tasks=counted(cast(int, s["tasks"]), "tasks", context.lang),
        topics=counted(cast(int, s["topics"]), "topics_dative", context.lang),
        terms=counted(cast(int, s["terms"]), "terms_genitive", context.lang),
    )
    if payload:
        text = t(context.lang, "deep_link_bad") + "\n\n" + text
    message = update.effective_message
    assert message is not None
    await message.reply_text(text, reply_markup=main_menu(context.lang), link_preview_options=None)


async def _deep_link(update: Update, context: Ctx, payload: str) -> bool:
    """start=q_<id or number> asks a question; start=g_<term id> shows a term card."""
    bank = context.services.bank
    kind, _, ref = payload.partition("_")
    if kind == "q" and ref:
        q = bank.resolve(ref)
        if q is not None:
            await ask_question(update, context, q, source=AskSource.LINK)
            return True
    if kind == "g" and ref:
        term = bank.term(ref.lower())
        if term is not None:
            await reply(update, term_view(term, bank, context.lang))
            return True
    return False


async def cmd_help(update: Update, context: Ctx) -> None:
    text = t(context.lang, "help")
    voice = context.services.voice
    if voice is not None and voice.enabled:
        text += "\n" + t(context.lang, "voice.help", seconds=voice.max_seconds)
    await reply_text(update, text)


async def cmd_lang(update: Update, context: Ctx) -> None:
    choice = command_args(context).lower()
    if choice not in LANGUAGES:
        await reply(update, View(t(context.lang, "lang_usage"), lang_keyboard()))
        return
    await set_language(update, context, choice)


async def cb_lang(update: Update, context: Ctx, data: Language) -> None:
    await set_language(update, context, data.lang)


async def set_language(update: Update, context: Ctx, lang: str) -> None:
    from bot.tg.handlers.admin_checks import require_group_admin

    chat, user = update.effective_chat, update.effective_user
    assert chat is not None
    private = chat.type == ChatType.PRIVATE
    if not private and not await require_group_admin(update, context):
        return
    await user_data.set_language(
        context.services.db, chat_id=chat.id, user_id=user.id if user else None, private=private, lang=lang
    )
    context.lang = lang
    message = update.effective_message
    assert message is not None
    markup = main_menu(lang) if chat.type == ChatType.PRIVATE else None
    await message.reply_text(t(lang, "lang_set"), reply_markup=markup, parse_mode=None, link_preview_options=None)


async def on_menu_button(update: Update, context: Ctx) -> None:
    """The persistent menu keyboard sends its label as text."""
    text = (update.effective_message.text if update.effective_message else "") or ""
    for lang in LANGUAGES:
        if text == t(lang, "menu.question"):
            await next_question(update, context)
            return
        if text == t(lang, "menu.topics"):
            await cmd_topics(update, context)
            return
        if text == t(lang, "menu.glossary"):
            context.args = []
            await cmd_glossary(update, context)
            return
        if text == t(lang, "menu.help"):
            await cmd_help(update, context)
            return


def menu_labels() -> list[str]:
    return [t(lang, f"menu.{k}") for lang in LANGUAGES for k in ("question", "topics", "glossary", "help")]

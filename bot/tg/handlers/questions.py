"""/q, /answer, the question buttons and free-text answers."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

from telegram import Message, Update
from telegram.constants import ChatAction, ChatType
from telegram.error import TelegramError

from bot.bank import Question
from bot.bank.markdown import escape
from bot.core.text import looks_like_no_answer
from bot.db.models import Ask, AskSource
from bot.i18n import counted, t
from bot.services import answers, asking, revealing
from bot.tg.callbacks import (
    AskQuestion,
    ConfirmShort,
    Details,
    DropShort,
    Next,
    NextSearchResult,
    QuestionTerms,
    Reveal,
    SearchResult,
)
from bot.tg.common import (
    answer_query,
    ask_question,
    check_query,
    command_args,
    drop_buttons,
    is_group,
    reply,
    reply_text,
    send_view,
    show,
)
from bot.tg.context import Ctx
from bot.tg.views import (
    FeedbackButtons,
    View,
    answer_views,
    confirm_short_view,
    details_views,
    feedback_view,
    my_answer_view,
    nothing_found_view,
    question_terms_view,
    term_view,
)


async def next_question(update: Update, context: Ctx, topic: str | None = None, *, source: str = AskSource.Q) -> None:
    """Ask a random least-seen question from ``topic`` (default: the chat's filter)."""
    s = context.services
    chat = update.effective_chat
    assert chat is not None
    chat_filter = context.chat_row.topic_filter if context.chat_row else None
    choice = await asking.choose_next(
        s.deps, s.bank, chat_id=chat.id, topic=topic, chat_filter=chat_filter, source=source
    )
    if choice.question is None:
        topic_obj = s.bank.topic(choice.empty_topic or "")
        name = topic_obj.title(context.lang) if topic_obj else (choice.empty_topic or "")
        await reply_text(update, t(context.lang, "topic_empty", topic=escape(name)))
        return
    note = t(context.lang, "all_seen_cycle") if choice.new_round else ""
    await ask_question(update, context, choice.question, source=choice.source, note=note, next_topic=choice.next_topic)


async def cmd_q(update: Update, context: Ctx) -> None:
    arg = command_args(context)
    if not arg:
        await next_question(update, context)
        return
    if not await check_query(update, context, arg):
        return
    found = asking.resolve(context.services.catalog, arg)
    if found.kind == "topic":
        await next_question(update, context, found.topic)
    elif found.question is not None:
        await ask_question(update, context, found.question, source=found.source)
    elif found.kind == "not_found":
        await reply_text(update, t(context.lang, "question_not_found", ref=escape(found.ref)))
    else:
        await reply(update, nothing_found_view(context.services.bank, arg, context.lang))


async def pending_ask(update: Update, context: Ctx) -> Ask | None:
    """The question a message refers to: the replied-to question, else (private) the pending one."""
    message, chat = update.effective_message, update.effective_chat
    assert message is not None and chat is not None
    replied = message.reply_to_message
    by_bot = replied is not None and replied.from_user is not None and replied.from_user.id == context.bot.id
    pending = context.chat_row.pending_ask_id if context.chat_row and chat.type == ChatType.PRIVATE else None
    return await answers.find_ask(
        context.services.db, chat_id=chat.id, replied_message_id=replied.message_id if replied and by_bot else None,
        pending_ask_id=pending,
    )  # fmt: skip


async def reveal(update: Update, context: Ctx, q: Question) -> None:
    s = context.services
    chat, user = update.effective_chat, update.effective_user
    assert chat is not None
    private = chat.type == ChatType.PRIVATE
    shown = await revealing.reveal(s.db, q, chat_id=chat.id, user_id=user.id if user else None, private=private)
    views = answer_views(q, s.bank, context.lang)
    if shown.mine is not None:  # the user's own answer above the reference: one message if both fit
        mine = my_answer_view(shown.mine, context.lang)
        together = answer_views(q, s.bank, context.lang, lead=mine.text)
        views = together if len(together) == len(views) else [mine, *views]
    for view in views:
        await send_view(context, chat.id, view)


async def cmd_answer(update: Update, context: Ctx) -> None:
    arg = command_args(context)
    bank = context.services.bank
    if arg:
        q = bank.resolve(arg)
        if q is None:
            await reply_text(update, t(context.lang, "question_not_found", ref=escape(arg[:50])))
            return
        await reveal(update, context, q)
        return
    ask = await pending_ask(update, context)
    if ask is None:
        await reply_text(update, t(context.lang, "no_question_for_answer"))
        return
    q = bank.question(ask.question_id)
    if q is None:
        await reply_text(update, t(context.lang, "question_gone"))
        return
    await reveal(update, context, q)


async def on_answer_text(update: Update, context: Ctx) -> None:
    """A plain message: the user's answer to the replied-to or pending question."""
    message = update.effective_message
    chat, user = update.effective_chat, update.effective_user
    if message is None or chat is None or user is None or not message.text:
        return
    if await _corrects_transcript(update, context, message, user.id):
        return
    ask = await pending_ask(update, context)
    if ask is None:
        if chat.type == ChatType.PRIVATE:
            await reply_text(update, t(context.lang, "no_pending"))
        return
    q = context.services.bank.question(ask.question_id)
    if q is None:
        await reply_text(update, t(context.lang, "question_gone"), quote=True)
        return
    if looks_like_no_answer(message.text):  # «?», «ок», «привет», "thanks": asked, not graded
        view = confirm_short_view(message.text, ask.id, user.id, context.lang)
        await reply(update, view, quote=is_group(update))
        return
    await submit_answer(update, context, ask, q, message.text, message.message_id)


async def _corrects_transcript(update: Update, context: Ctx, message: Message, user_id: int) -> bool:
    """A text reply to the bot's transcript of the user's own voice answer: the corrected answer
    (graded like any answer; the transcript stays stored). False for any other message."""
    replied = message.reply_to_message
    if replied is None or replied.from_user is None or replied.from_user.id != context.bot.id:
        return False
    s = context.services
    found = await answers.voice_answer_shown_in(s.db, chat_id=message.chat_id, message_id=replied.message_id)
    if found is None or found[0].user_id != user_id:
        return False
    spoken, ask = found
    q = s.bank.question(ask.question_id)
    if q is None:
        await reply_text(update, t(context.lang, "question_gone"), quote=True)
        return True
    text = message.text or ""
    voice = answers.Voice(spoken.voice_file_id, spoken.voice_seconds, spoken.stt_backend, corrects_id=spoken.id)
    correction = Spoken(voice, head=t(context.lang, "voice.corrected"))
    await submit_answer(update, context, ask, q, text, message.message_id, correction)
    return True


async def cb_confirm_short(update: Update, context: Ctx, data: ConfirmShort | DropShort) -> None:
    """«Это ваш ответ?» — yes stores the short message as the answer, no drops it. Only its author
    can answer (the button carries the ask, the author and the text)."""
    chat, user = update.effective_chat, update.effective_user
    if chat is None or user is None:
        return
    ask: Ask | None = None
    if isinstance(data, ConfirmShort):
        if data.author != user.id:
            await answer_query(update, context, t(context.lang, "practice.confirm_not_yours"), alert=True)
            return
        ask = await answers.get_ask(context.services.db, data.ask_id)
    q = context.services.bank.question(ask.question_id) if ask and ask.chat_id == chat.id else None
    await drop_buttons(update)
    if not isinstance(data, ConfirmShort) or ask is None or q is None:
        await reply_text(update, t(context.lang, "practice.confirm_dropped"))
        return
    await submit_answer(update, context, ask, q, data.text, None)


@dataclass(frozen=True, slots=True)
class Spoken:
    """How a spoken answer is shown with its feedback: ``voice`` is stored with the answer; a voice
    message's «🎙 Расшифровываю…» (``status``) is edited into ``prefix`` (the transcript) above the
    feedback; ``head`` replaces the «answer saved» line (a typed correction of a transcript)."""

    voice: answers.Voice
    status: Message | None = None
    prefix: str = ""
    head: str = ""


async def submit_answer(
    update: Update,
    context: Ctx,
    ask: Ask,
    q: Question,
    text: str,
    message_id: int | None,
    spoken: Spoken | None = None,
) -> Message | None:
    """Store the answer, grade it, review the card, reply with feedback (or move the interview on).
    With the LLM examiner, the answer is stored first and «⏳ Проверяю…» is edited into the result.

    A voice answer passes how it is shown (``spoken``); the message that shows the transcript is
    noted, so a text reply to it corrects the transcript. Returns the message with the feedback."""
    chat, user = update.effective_chat, update.effective_user
    assert chat is not None and user is not None
    s = context.services
    voice, status = (spoken.voice, spoken.status) if spoken else (None, None)
    prefix, head = (spoken.prefix, spoken.head) if spoken else ("", "")
    checking = _Checking(update, context, status, prefix)
    attempt = answers.Attempt(ask, q, user.id, chat.id, message_id, text, context.lang, voice)
    done = await answers.submit(s.deps, s.bank, attempt, on_stored=checking)
    if s.metrics is not None and not done.follow_up_saved:
        s.metrics.answers.inc()
    if done.follow_up_saved or done.interview is not None:
        from bot.tg.handlers.interview import after_interview_answer

        shown = await after_interview_answer(update, context, done, checking.message, prefix=prefix)
    else:
        head = head or t(
            context.lang,
            "answer_saved_again" if done.again else "answer_saved",
            chars=counted(len(text), "chars", context.lang),
        )
        view = _feedback(update, context, ask, q, done, prefix + head)
        shown = await show(update, view, checking.message, quote=is_group(update))
    noted = voice.shown_in if voice else None
    if prefix and shown is not None and done.answer_id is not None and shown.message_id != noted:
        await answers.note_transcript_message(s.db, answer_id=done.answer_id, message_id=shown.message_id)
    return shown


class _Checking:
    """«⏳ Проверяю…» while a slow examiner grades a stored answer: ``status`` (a voice answer's
    transcript line) edited, or a new message; ``message`` is what the result then replaces."""

    def __init__(self, update: Update, context: Ctx, status: Message | None, prefix: str) -> None:
        self.update, self.context, self.message, self.prefix = update, context, status, prefix

    async def __call__(self) -> None:
        update, context = self.update, self.context
        line = t(context.lang, "practice.checking")
        if self.message is not None:
            self.message = await show(update, View(self.prefix + line), self.message)
        else:
            self.message = await reply_text(update, line, quote=is_group(update))
        chat = update.effective_chat
        with contextlib.suppress(TelegramError):  # only a hint that the bot is working
            if chat is not None:
                await context.bot.send_chat_action(chat.id, ChatAction.TYPING)


def _feedback(update: Update, context: Ctx, ask: Ask, q: Question, done: answers.Submitted, head: str) -> View:
    user = update.effective_user
    assert done.outcome is not None and user is not None
    buttons = FeedbackButtons(
        next_op="rv" if ask.source == AskSource.REVIEW else "n",
        next_topic=q.topic if ask.source == AskSource.TOPIC else None,
        answerer=user.id if is_group(update) else None,
        answer_id=done.answer_id,
    )
    grade, fallback = done.outcome.grade, done.outcome.fallback
    return feedback_view(q, grade, context.lang, head=head, fallback=fallback, buttons=buttons)


async def on_edited_answer(update: Update, context: Ctx) -> None:
    """An edited answer is stored as a new answer; the earlier text is kept."""
    message = update.edited_message
    chat, user = update.effective_chat, update.effective_user
    if message is None or chat is None or user is None or not message.text:
        return
    stored = await answers.record_edit(
        context.services.db, chat_id=chat.id, message_id=message.message_id, user_id=user.id, text=message.text
    )
    if stored:
        await context.bot.send_message(
            chat.id, t(context.lang, "answer_edited"), reply_to_message_id=message.message_id,
            parse_mode=None, link_preview_options=None,
        )  # fmt: skip


async def on_non_text(update: Update, context: Ctx) -> None:
    """Stickers, photos, voice... in a private chat while a question is pending."""
    if update.effective_chat and update.effective_chat.type == ChatType.PRIVATE:
        await reply_text(update, t(context.lang, "not_text"))


# Buttons -----------------------------------------------------------------------------------


async def cb_reveal(update: Update, context: Ctx, data: Reveal) -> None:
    q = context.services.bank.question(data.question_id)
    if q is None:
        await reply_text(update, t(context.lang, "question_gone"))
        return
    await reveal(update, context, q)


async def cb_details(update: Update, context: Ctx, data: Details) -> None:
    q = context.services.bank.question(data.question_id)
    chat = update.effective_chat
    if q is None or not q.details or chat is None:
        await reply_text(update, t(context.lang, "question_gone"))
        return
    for view in details_views(q, context.lang):
        await send_view(context, chat.id, view)


async def cb_glossary(update: Update, context: Ctx, data: QuestionTerms) -> None:
    bank = context.services.bank
    q = bank.question(data.question_id)
    if q is None:
        await reply_text(update, t(context.lang, "question_gone"))
        return
    term = revealing.single_term(bank, q)
    await reply(update, term_view(term, bank, context.lang) if term else question_terms_view(q, bank, context.lang))


async def cb_next(update: Update, context: Ctx, data: Next) -> None:
    if data.topic is not None and context.services.bank.topic(data.topic) is not None:
        await next_question(update, context, data.topic, source=AskSource.NEXT)
        return
    await next_question(update, context, source=AskSource.NEXT)


async def cb_search_result(update: Update, context: Ctx, data: SearchResult | NextSearchResult) -> None:
    """A question from search results, or «Следующий» after one: the next result of the same query
    follows it."""
    catalog = context.services.catalog
    index, query = data.index, data.query
    if isinstance(data, SearchResult):
        q = catalog.bank.question(data.question_id)
    else:
        q = asking.search_result(catalog, query, index)
        if q is None:  # the results are exhausted: go on by the chat's filter
            await next_question(update, context, source=AskSource.NEXT)
            return
    if q is None:
        await reply_text(update, t(context.lang, "question_gone"))
        return
    await ask_question(update, context, q, source=AskSource.SEARCH, next_search=(index + 1, query))


async def cb_ask(update: Update, context: Ctx, data: AskQuestion) -> None:
    q = context.services.bank.question(data.question_id)
    if q is None:
        await reply_text(update, t(context.lang, "question_gone"))
        return
    await ask_question(update, context, q, source=AskSource.BUTTON)

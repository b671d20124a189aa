"""The Telegram side of :class:`bot.push.channel.PushChannel`: renders pushes as views and sends
them under the one bulk send policy (:mod:`bot.tg.delivery`)."""

from __future__ import annotations

from typing import Any

from telegram.ext import ExtBot

from bot.bank import Bank, Question
from bot.core.quiz import Quiz
from bot.i18n import t
from bot.push.outcome import Outcome, Status
from bot.tg import delivery
from bot.tg.handlers.quiz import post_quiz
from bot.tg.ratelimit import NO_RETRY
from bot.tg.views import answer_views, question_view


class TelegramPushChannel:
    def __init__(self, bot: ExtBot[Any], *, paid_broadcast: bool = False) -> None:
        self.bot = bot
        self.question_style = delivery.Style(html=True, no_preview=True, paid=paid_broadcast)

    async def send_question(self, chat_id: int, question: Question, bank: Bank, lang: str, *, group: bool) -> Outcome:
        view = question_view(question, bank, lang, group=group, note=t(lang, "daily.note"))
        return await delivery.send(self.bot, chat_id, view.text, style=self.question_style, keyboard=view.keyboard)

    async def send_quiz(self, chat_id: int, quiz: Quiz) -> Outcome:
        return await delivery.attempt(post_quiz(self.bot, chat_id, quiz, rate_limit_args=NO_RETRY))

    async def send_reveal(
        self, chat_id: int, question: Question, bank: Bank, lang: str, *, answered: int, reply_to: int
    ) -> Outcome:
        views = answer_views(question, bank, lang, lead=t(lang, "daily.reveal_header", count=answered))
        outcome = Outcome.failed(Status.REJECTED, "nothing to send")
        for i, view in enumerate(views):
            outcome = await delivery.send(
                self.bot, chat_id, view.text, style=delivery.HTML, keyboard=view.keyboard,
                reply_to=reply_to if i == 0 else None,
            )  # fmt: skip
            if not outcome.ok:
                break
        return outcome

    async def send_text(self, chat_id: int, text: str) -> Outcome:
        return await delivery.send(self.bot, chat_id, text)

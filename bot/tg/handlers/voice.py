"""Voice answers: a voice message, video note or audio file that answers a question (in a private
chat: the replied-to or the pending question; in a group: by reply).

«🎙 Расшифровываю…» is sent at once (the chat action says "recording a voice" while it works), the
file is downloaded through the Bot API (getFile, then the file URL), ``services/voice`` transcribes
it, and the transcript is answered like typed text (``questions.submit_answer``): that message
becomes the transcript, as an expandable quote, above the feedback. When the voice cannot be taken
(off, too long, too big, the day's limit, a timeout, the service's error, silence), one line says
why and that the answer can be typed; the question stays pending.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import timedelta

from telegram import Audio as TgAudio
from telegram import Message, Update, VideoNote
from telegram import Voice as TgVoice
from telegram.constants import ChatAction, ChatType
from telegram.error import BadRequest, TelegramError

from bot.bank import Question
from bot.bank.markdown import escape
from bot.db.models import Ask
from bot.i18n import t
from bot.services import answers
from bot.services.voice import Audio, Refusal, SttError, VoiceAnswers
from bot.tg.common import is_group, reply_text, show
from bot.tg.context import Ctx
from bot.tg.handlers.questions import Spoken, pending_ask, submit_answer
from bot.tg.views import View

log = logging.getLogger(__name__)

SHOWN_CHARS = 1500  # of the transcript in the message (the whole text is stored and graded)
ACTION_EVERY = 4.5  # seconds: Telegram shows a chat action for about 5


def _seconds(duration: int | timedelta) -> int:
    return int(duration.total_seconds()) if isinstance(duration, timedelta) else int(duration)


def audio_of(message: Message) -> Audio | None:
    media: TgVoice | VideoNote | TgAudio | None = message.voice or message.video_note or message.audio
    if media is None:
        return None
    if isinstance(media, VideoNote):
        return Audio(media.file_id, _seconds(media.duration), media.file_size, "video_note.mp4", "video/mp4")
    if isinstance(media, TgAudio):
        name = media.file_name or "audio.mp3"
        return Audio(media.file_id, _seconds(media.duration), media.file_size, name, media.mime_type or "audio/mpeg")
    return Audio(media.file_id, _seconds(media.duration), media.file_size, "voice.ogg", media.mime_type or "audio/ogg")


def refusal_text(
    lang: str, reason: Refusal, voice: VoiceAnswers | None, audio: Audio, seconds: float | None = None
) -> str:
    """``seconds``: the duration measured in the audio, where it was (the client's claim otherwise)."""
    limit = voice.daily_limit if reason == Refusal.DAILY_LIMIT and voice else (voice.max_seconds if voice else 0)
    return t(lang, f"voice.{reason}", limit=limit, seconds=round(seconds) if seconds is not None else audio.seconds)


def transcript_html(text: str, lang: str) -> str:
    shown = text if len(text) <= SHOWN_CHARS else text[: SHOWN_CHARS - 1].rstrip() + "…"
    quote = f"<blockquote expandable>{escape(shown)}</blockquote>"
    return f"{t(lang, 'voice.transcript')}\n{quote}\n<i>{t(lang, 'voice.fix_hint')}</i>\n\n"


@contextlib.asynccontextmanager
async def chat_action(context: Ctx, chat_id: int, action: str) -> AsyncIterator[None]:
    """Keep ``action`` showing in the chat while the block runs (a hint only: failures are ignored)."""

    async def repeat() -> None:
        while True:
            with contextlib.suppress(TelegramError):
                await context.bot.send_chat_action(chat_id, action)
            await asyncio.sleep(ACTION_EVERY)

    task = asyncio.create_task(repeat())
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def _question_for(update: Update, context: Ctx, private: bool) -> tuple[Ask, Question] | None:
    """The question a voice message answers, or None (said in a private chat)."""
    ask = await pending_ask(update, context)
    if ask is None:
        if private:
            await reply_text(update, t(context.lang, "no_pending"))
        return None  # in a group, a voice that replies to no question is not for the bot
    q = context.services.bank.question(ask.question_id)
    if q is None:
        await reply_text(update, t(context.lang, "question_gone"), quote=True)
        return None
    return ask, q


def _downloader(context: Ctx, file_id: str) -> Callable[[], Awaitable[bytes]]:
    """Fetches the voice through the Bot API; a failure is an SttError the user is told of."""

    async def download() -> bytes:
        try:
            file = await context.bot.get_file(file_id)
            return bytes(await file.download_as_bytearray())
        except BadRequest as exc:
            if "too big" in str(exc).lower():
                raise SttError(Refusal.TOO_BIG) from None
            raise SttError(Refusal.FAILED, str(exc)) from None
        except TelegramError as exc:
            raise SttError(Refusal.FAILED, str(exc)) from None

    return download


async def on_voice(update: Update, context: Ctx) -> None:
    message, chat, user = update.effective_message, update.effective_chat, update.effective_user
    audio = audio_of(message) if message is not None else None
    if message is None or chat is None or user is None or audio is None:
        return
    found = await _question_for(update, context, chat.type == ChatType.PRIVATE)
    if found is None:
        return
    ask, q = found
    s, group = context.services, is_group(update)
    refusal = s.voice.refusal(audio) if s.voice is not None else Refusal.OFF
    if refusal is not None or s.voice is None:
        await reply_text(update, refusal_text(context.lang, refusal or Refusal.OFF, s.voice, audio), quote=group)
        return
    status = await reply_text(update, t(context.lang, "voice.transcribing"), quote=group)
    try:
        async with chat_action(context, chat.id, ChatAction.RECORD_VOICE):
            heard = await s.voice.transcribe(
                audio, _downloader(context, audio.file_id), user_id=user.id, language=context.lang, now=s.clock()
            )
    except SttError as exc:
        text = refusal_text(context.lang, exc.reason, s.voice, audio, exc.seconds)
        await show(update, View(text), status, quote=group)
        return
    shown_in = status.message_id if status is not None else None
    voice = answers.Voice(audio.file_id, audio.seconds, heard.backend, shown_in=shown_in)
    spoken = Spoken(voice, status, prefix=transcript_html(heard.text, context.lang))
    await submit_answer(update, context, ask, q, heard.text, message.message_id, spoken)

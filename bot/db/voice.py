"""Voice answers: the daily transcription count (STT_DAILY_LIMIT), the voice details of an answer,
and the voice answer a transcript message shows."""

from __future__ import annotations

from sqlalchemy import select, update

from bot.db import quota
from bot.db.models import Answer, SttUsage
from bot.db.session import Session


async def take_quota(session: Session, user_id: int, day: str, limit: int) -> bool:
    """Count one transcription for the user on ``day``; False once ``limit`` is reached."""
    return await quota.take(session, SttUsage, user_id, day, limit)


async def give_back(session: Session, user_id: int, day: str) -> None:
    """A transcription that failed on our side (timeout, the service's error) does not count."""
    await session.execute(
        update(SttUsage)
        .where(SttUsage.user_id == user_id, SttUsage.day == day, SttUsage.count > 0)
        .values(count=SttUsage.count - 1)
    )


async def used(session: Session, user_id: int, day: str) -> int:
    row = await session.get(SttUsage, (user_id, day))
    return row.count if row else 0


async def set_voice(
    session: Session, answer_id: int, *, file_id: str | None, seconds: int | None, backend: str | None,
    corrects_id: int | None, shown_in: int | None,
) -> None:  # fmt: skip
    await session.execute(
        update(Answer)
        .where(Answer.id == answer_id)
        .values(
            voice_file_id=file_id,
            voice_seconds=seconds,
            stt_backend=backend,
            corrects_id=corrects_id,
            transcript_message_id=shown_in,
        )
    )


async def set_transcript_message(session: Session, answer_id: int, message_id: int) -> None:
    await session.execute(update(Answer).where(Answer.id == answer_id).values(transcript_message_id=message_id))


async def answer_by_transcript(session: Session, chat_id: int, message_id: int) -> Answer | None:
    """The voice answer whose transcript the bot showed in this message."""
    result = await session.execute(
        select(Answer)
        .where(Answer.chat_id == chat_id, Answer.transcript_message_id == message_id)
        .order_by(Answer.id)
        .limit(1)
    )
    return result.scalar_one_or_none()

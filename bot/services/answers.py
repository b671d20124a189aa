"""Answering: grade → store → FSRS review → interview step, one code path for the chat and the terminal.

``submit`` is the whole flow for a message that answers a question (an :class:`Attempt`): a follow-up of a mock
interview is kept as such; otherwise the answer is graded and stored (the offline grader grades
before the write; with the LLM examiner the answer is stored first, ``on_stored`` runs — the chat
shows «⏳ Проверяю…» — and the grade is attached when it arrives), and an interview's current
question moves the interview on. ``find_ask`` is the question a message refers to;
``self_assess`` stores «Знал / Частично / Не знал» and reviews the card; ``record_edit`` keeps an
edited answer as a new one.

``record_answer`` stores the answer (with its grade when it is known) and, with a grade, reviews the
user's FSRS card, in one transaction; ``apply_grade`` attaches a grade that arrived later (the LLM
examiner) to an answer stored before it, and reviews the card then.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime

from bot.bank import Bank, Question
from bot.core.grading import Grade
from bot.db import answers, asks, cards
from bot.db import interviews as interview_store
from bot.db import voice as voice_store
from bot.db.engine import Database
from bot.db.models import Answer, Ask, AskSource, Interview, InterviewItem
from bot.services import interviews
from bot.services.deps import Deps
from bot.services.grading import Outcome


@dataclass(frozen=True, slots=True)
class Voice:
    """Where an answer's text came from when it was spoken: the voice (or video note, audio) file's
    Telegram id, its length, the STT backend that transcribed it, the bot's message that shows the
    transcript; ``corrects_id``: a typed text that corrects the transcript of that voice answer
    (which is kept)."""

    file_id: str | None
    seconds: int | None
    backend: str | None
    corrects_id: int | None = None
    shown_in: int | None = None  # the bot's message that shows the transcript


@dataclass(frozen=True, slots=True)
class Attempt:
    """A message that answers a question: the ask it answers and its question, who wrote it in
    which chat and message (None: a confirmed short answer, the terminal), the text, the interface
    language (the LLM examiner answers in it), and where the text came from when it was spoken."""

    ask: Ask
    question: Question
    user_id: int
    chat_id: int
    message_id: int | None
    text: str
    lang: str
    voice: Voice | None = None


@dataclass(frozen=True, slots=True)
class Recorded:
    answer: Answer
    again: bool  # the user had already answered this ask
    interview: tuple[Interview, InterviewItem] | None  # the mock interview the ask belongs to


async def record_answer(db: Database, attempt: Attempt, *, grade: Grade | None, now: datetime) -> Recorded:
    ask, question_id, user_id = attempt.ask, attempt.question.id, attempt.user_id
    in_interview = ask.source == AskSource.INTERVIEW  # only a mock interview's asks have items
    async with db.write() as session:
        if attempt.message_id is not None:  # the same message handled again (after a crash): stored once
            stored = await answers.stored_from_message(session, attempt.chat_id, attempt.message_id)
            if stored is not None:
                item = await interview_store.item_for_ask(session, ask.id) if in_interview else None
                return Recorded(stored, False, item)
        answered, previous_ask = await answers.latest_ask_answered(session, user_id, question_id)
        again = answered and previous_ask == ask.id
        answer = await answers.add_answer(
            session,
            answers.NewAnswer(
                ask, question_id, user_id, attempt.chat_id, attempt.message_id, attempt.text,
                coverage=grade.score if grade else None, covered=grade.covered if grade else (), at=now,
            ),
        )  # fmt: skip
        voice = attempt.voice
        if voice is not None:
            await voice_store.set_voice(
                session, answer.id, file_id=voice.file_id, seconds=voice.seconds, backend=voice.backend,
                corrects_id=voice.corrects_id, shown_in=voice.shown_in,
            )  # fmt: skip
        if grade is not None:
            await cards.review_card(session, user_id, question_id, self_grade=None, coverage=grade.score, now=now)
        interview = await interview_store.item_for_ask(session, ask.id) if in_interview else None
    return Recorded(answer, again, interview)


async def apply_grade(db: Database, *, answer: Answer, grade: Grade, now: datetime) -> None:
    async with db.write() as session:
        await answers.set_grade(session, answer.id, grade.score, grade.covered)
        await cards.review_card(
            session, answer.user_id, answer.question_id, self_grade=None, coverage=grade.score, now=now
        )
    answer.coverage = grade.score


async def find_ask(
    db: Database, *, chat_id: int, replied_message_id: int | None, pending_ask_id: int | None
) -> Ask | None:
    """The question a message refers to: the replied-to question (a message of the bot), else the
    chat's pending one (the caller passes it in private chats only)."""
    async with db.read() as session:
        if replied_message_id is not None:
            ask = await asks.ask_by_message(session, chat_id, replied_message_id)
            if ask is not None:
                return ask
        if pending_ask_id:
            return await asks.get_ask(session, pending_ask_id)
    return None


async def get_ask(db: Database, ask_id: int) -> Ask | None:
    async with db.read() as session:
        return await asks.get_ask(session, ask_id)


@dataclass(frozen=True, slots=True)
class Submitted:
    """What became of a message that answers a question.

    ``follow_up_saved``: it answered a mock interview's follow-up question (kept for the report,
    the interview moved on). Otherwise ``outcome`` is the grade; ``interview`` is set when the
    answer was to the current question of the user's open interview (moved on, unless the
    examiner asked ``follow_up``)."""

    again: bool = False
    outcome: Outcome | None = None
    interview: tuple[Interview, InterviewItem] | None = None
    follow_up: str = ""
    follow_up_saved: bool = False
    follow_up_reference: str = ""  # the bank's short answer to the follow-up just answered
    answer_id: int | None = None  # the stored answer (None for a follow-up's answer)


async def submit(
    deps: Deps, bank: Bank, attempt: Attempt, *, on_stored: Callable[[], Awaitable[object]] | None = None
) -> Submitted:
    """Store and grade an answer, review the FSRS card, move an interview on. The answer is in the
    database before this returns (and before ``on_stored`` runs, when grading is slow)."""
    db, grader, clock = deps.db, deps.grader, deps.clock
    question, text, user_id = attempt.question, attempt.text, attempt.user_id
    pending = await interviews.pending_follow_up(db, ask=attempt.ask, user_id=user_id)
    if pending is not None:
        await interviews.answer_follow_up(db, *pending, text, now=clock())
        reference = interviews.follow_up_reference(bank.question(pending[1].question_id), pending[1].follow_up)
        return Submitted(follow_up_saved=True, interview=pending, follow_up_reference=reference)
    if grader.name == "keywords":
        outcome = Outcome(grader.grade_sync(question, text, bank.lexicon))
        recorded = await record_answer(db, attempt, grade=outcome.grade, now=clock())
    else:
        recorded = await record_answer(db, attempt, grade=None, now=clock())
        if on_stored is not None:
            await on_stored()
        outcome = await grader.grade(question, text, lang=attempt.lang, user_key=str(user_id), lexicon=bank.lexicon)
        await apply_grade(db, answer=recorded.answer, grade=outcome.grade, now=clock())
    if recorded.interview is not None and interviews.is_current(*recorded.interview, user_id):
        follow_up = await interviews.record_answer(
            db, *recorded.interview, outcome.grade, now=clock(), question=question
        )
        return Submitted(recorded.again, outcome, recorded.interview, follow_up, answer_id=recorded.answer.id)
    return Submitted(recorded.again, outcome, answer_id=recorded.answer.id)


async def note_transcript_message(db: Database, *, answer_id: int, message_id: int) -> None:
    """The bot's message that shows a voice answer's transcript (a text reply to it corrects it)."""
    async with db.write() as session:
        await voice_store.set_transcript_message(session, answer_id, message_id)


async def voice_answer_shown_in(db: Database, *, chat_id: int, message_id: int) -> tuple[Answer, Ask] | None:
    """The voice answer (and its question) whose transcript this message of the bot shows."""
    async with db.read() as session:
        answer = await voice_store.answer_by_transcript(session, chat_id, message_id)
        if answer is None or answer.ask_id is None:
            return None
        ask = await asks.get_ask(session, answer.ask_id)
        return (answer, ask) if ask is not None else None


async def self_assess(
    db: Database, *, user_id: int, chat_id: int, question_id: str, grade: int, now: datetime
) -> datetime:
    """«Знал» (3) / «Частично» (2) / «Не знал» (1): stored on the latest answer (and the interview
    item) and fed to FSRS; returns when the card is due next."""
    async with db.write() as session:
        coverage = await answers.set_self_grade(session, user_id, question_id, grade)
        card = await cards.review_card(session, user_id, question_id, self_grade=grade, coverage=coverage, now=now)
        await interview_store.grade_interview_item(session, user_id, chat_id, question_id, grade)
        return card.due


async def record_edit(db: Database, *, chat_id: int, message_id: int, user_id: int, text: str) -> bool:
    """An edited answer is stored as a new answer (the earlier text is kept). False when the
    edited message was not an answer."""
    async with db.write() as session:
        earlier = await answers.answer_by_message(session, chat_id, message_id)
        if earlier is None:
            return False
        ask = await asks.get_ask(session, earlier.ask_id) if earlier.ask_id else None
        edit = answers.NewAnswer(ask, earlier.question_id, user_id, chat_id, message_id, text, edited=True)
        await answers.add_answer(session, edit)
    return True

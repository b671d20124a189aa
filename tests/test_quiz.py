"""Quiz generation over the whole shipped glossary, and the quiz/leaderboard storage."""

from __future__ import annotations

import functools
import random
import re
from datetime import UTC, datetime, timedelta

import pytest

from bot.bank import Bank
from bot.bank.model import Term
from bot.core.quiz import (
    ELLIPSIS,
    EXPLANATION_LIMIT,
    MASK,
    OPTION_LIMIT,
    QUESTION_LIMIT,
    Quiz,
    QuizKind,
    fit,
    make_quiz,
    nearest_topics,
    option_label,
    quiz_for_term,
    related,
    short_definition,
    terms_by_topic,
    tg_len,
    topic_terms,
)
from bot.db import answers, polls
from bot.db import chat_store as chats
from bot.db.engine import Database
from bot.tg.handlers.quiz import format_points, week_start
from tests.conftest import shipped_bank

BANK = shipped_bank()
TERMS = sorted(BANK.terms)
KINDS: tuple[QuizKind, ...] = ("definition", "term")
_WORDS = re.compile(r"[0-9A-Za-zА-Яа-яЁё]+")


@functools.cache
def all_quizzes() -> list[tuple[Term, QuizKind, str, int, Quiz | None]]:
    """Every term's quizzes in both languages for two seeds: built once, when the first test here
    asks (not at import, which every test worker would pay for while collecting)."""
    out = []
    for seed in range(2):
        rng = random.Random(seed)
        for tid in TERMS:
            for kind in KINDS:
                for lang in ("ru", "en"):
                    term = BANK.terms[tid]
                    out.append((term, kind, lang, seed, quiz_for_term(BANK, term, rng, lang=lang, kind=kind)))
    return out


@functools.cache
def built() -> list[tuple[Term, QuizKind, str, Quiz]]:
    """Every quiz built, with the kind it is (in English a reverse quiz is asked for in vain: its
    options would be Russian definitions)."""
    return [(term, quiz.kind, lang, quiz) for term, _, lang, _, quiz in all_quizzes() if quiz is not None]


def names_in(text: str, term: Term) -> list[str]:
    """The term's names (4+ characters) that occur verbatim as words in ``text``."""
    return [n for n in term.names if len(n) >= 4 and re.search(rf"(?<!\w){re.escape(n)}(?!\w)", text, re.IGNORECASE)]


def is_subsequence(small: list[str], big: list[str]) -> bool:
    it = iter(big)
    return all(any(word == other for other in it) for word in small)


# -- coverage of the bank --------------------------------------------------------------------------


@pytest.mark.slow  # a quiz for every one of the 214 terms: ~8 s
def test_every_term_gets_a_definition_quiz_and_enough_get_reverse_ones() -> None:
    for term, kind, lang, seed, quiz in all_quizzes():
        if kind == "definition":
            assert quiz is not None, (term.id, lang, seed)
    reverse = {term.id for term, kind, lang, quiz in built() if kind == "term" and lang == "ru"}
    assert len(reverse) >= 20  # the terms whose first sentence fits an option
    assert reverse == {tid for tid in TERMS if short_definition(BANK.terms[tid]) is not None}


@pytest.mark.slow  # a whole-bank sweep or a process of its own: the slow step (README, Development)
@pytest.mark.parametrize("lang", ["ru", "en"])
def test_every_quiz_is_within_telegram_limits(lang: str) -> None:
    for _, _, quiz_lang, quiz in built():
        if quiz_lang != lang:
            continue
        assert 1 <= tg_len(quiz.question) <= QUESTION_LIMIT, quiz.question
        assert len(quiz.options) == 4
        assert all(1 <= tg_len(o) <= OPTION_LIMIT for o in quiz.options), quiz.options
        assert tg_len(quiz.explanation) <= EXPLANATION_LIMIT, quiz.explanation
        assert quiz.explanation.count("\n") <= 2, quiz.explanation
        assert all(o.strip() == o and "  " not in o for o in quiz.options)
        for text in (quiz.question, *quiz.options):  # a cut or a mask never leaves a bracket open
            assert text.count("(") == text.count(")") and text.count("«") == text.count("»"), text


def test_an_english_quiz_speaks_english_and_labels_the_russian_definition_once() -> None:
    """Issue 32: under /lang en a quiz had an English question, Russian options and an explanation
    opening with a cut «…». Now: the English prompt says the definition is Russian, once; the options
    are English names; the explanation is English (the Russian rest of the definition is left out)."""
    cyrillic = re.compile(r"[а-яё]", re.IGNORECASE)
    english = [(term, quiz) for term, _, lang, quiz in built() if lang == "en"]
    assert english
    for term, quiz in english:
        assert quiz.kind == "definition"
        prompt, shown = quiz.question.split("\n", 1)
        assert prompt == "🧩 Which term is this? The definition, in Russian:" and cyrillic.search(shown)
        assert list(quiz.options) == [option_label(BANK.terms[tid], "en") for tid in quiz.option_terms]
        assert not any(cyrillic.search(option) for option in quiz.options), quiz.options
        assert not cyrillic.search(quiz.explanation.replace(term.term_en, "")), quiz.explanation
    for _, _, _, quiz in built():
        assert not quiz.explanation.split("\n")[1].startswith(ELLIPSIS), quiz.explanation


def test_no_option_is_duplicated() -> None:
    for _, _, _, quiz in built():
        assert len({o.casefold() for o in quiz.options}) == 4, quiz.options
        assert len(set(quiz.option_terms)) == 4, quiz.option_terms


def test_the_correct_option_is_the_right_term() -> None:
    for term, kind, lang, quiz in built():
        assert quiz.term_id == term.id
        assert quiz.option_terms[quiz.correct_option] == term.id
        right = quiz.options[quiz.correct_option]
        if kind == "definition":
            assert right == option_label(term, lang)
            assert term.term_en in right or term.term_ru in right
            # what the question shows is this term's definition, word for word (masks aside)
            shown = quiz.question.split("\n", 1)[1].removesuffix(ELLIPSIS).replace(MASK, " ")
            assert is_subsequence(_WORDS.findall(shown), _WORDS.findall(term.definition)), quiz.question
            assert len(_WORDS.findall(shown)) >= 8
        else:
            assert right == short_definition(term)
            assert right.rstrip(".") in term.definition
            assert option_label(term, lang) in quiz.question
        # every other option belongs to another term
        for i, option in enumerate(quiz.options):
            other = BANK.terms[quiz.option_terms[i]]
            if kind == "definition":
                assert option == option_label(other, lang)
            else:
                assert option == short_definition(other)
        assert f"✅ {option_label(term, lang)}" in quiz.explanation


def test_the_question_does_not_give_the_answer_away() -> None:
    for term, kind, _, quiz in built():
        if kind == "definition":
            assert names_in(quiz.question, term) == [], quiz.question
        else:  # no definition names its own term, nor the asked one
            for i, option in enumerate(quiz.options):
                assert names_in(option, BANK.terms[quiz.option_terms[i]]) == [], option
                assert names_in(option, term) == [], (term.id, option)


@pytest.mark.slow  # a whole-bank sweep or a process of its own: the slow step (README, Development)
def test_distractors_are_not_also_right() -> None:
    """A distractor never names the right term in its definition, nor is named by it."""
    for term, _, _, quiz in built():
        for tid in quiz.option_terms:
            if tid == term.id:
                continue
            other = BANK.terms[tid]
            assert names_in(term.definition, other) == [], (term.id, tid)
            assert names_in(other.definition, term) == [], (term.id, tid)


def test_rope_is_never_asked_against_positional_encoding() -> None:
    rope, pe = BANK.terms["rope"], BANK.terms["positional-encoding"]
    assert related(rope, pe)
    for seed in range(30):
        quiz = quiz_for_term(BANK, rope, random.Random(seed), kind="definition")
        assert quiz is not None and "positional-encoding" not in quiz.option_terms


# -- distractors come from the topic, then the nearest topics ---------------------------------------


@pytest.mark.slow  # a whole-bank sweep or a process of its own: the slow step (README, Development)
def test_distractors_come_from_the_topic_first() -> None:
    for topic in BANK.topics:
        pool = topic_terms(BANK, topic.id)
        for tid in pool:
            term = BANK.terms[tid]
            quiz = quiz_for_term(BANK, term, random.Random(1), topic=topic.id, kind="definition")
            assert quiz is not None
            assert quiz.topic == topic.id
            labels = {option_label(term, "ru").casefold()}
            eligible = []
            for other in pool:
                label = option_label(BANK.terms[other], "ru").casefold()
                if other != tid and not related(term, BANK.terms[other]) and label not in labels:
                    eligible.append(other)
                    labels.add(label)
            distractors = [o for o in quiz.option_terms if o != tid]
            if len(eligible) >= 3:
                assert set(distractors) <= set(pool), (topic.id, tid, distractors)
            else:  # the rest from the nearest topic that has any
                near = nearest_topics(BANK, topic.id)
                outside = [d for d in distractors if d not in pool]
                first = min(i for i, tp in enumerate(near) if set(topic_terms(BANK, tp)) & set(outside))
                assert first <= 3, (topic.id, tid, outside)


def test_nearest_topics_share_terms() -> None:
    near = nearest_topics(BANK, "lora")
    assert "lora" not in near and len(near) == len(BANK.topics) - 1
    shared = [len(set(topic_terms(BANK, "lora")) & set(topic_terms(BANK, tp))) for tp in near]
    assert shared == sorted(shared, reverse=True) and shared[0] > 0


# -- determinism, variety, least-seen ------------------------------------------------------------


def test_generation_is_deterministic_for_a_seed() -> None:
    a = [make_quiz(BANK, random.Random(42)) for _ in range(3)]
    b = [make_quiz(BANK, random.Random(42)) for _ in range(3)]
    assert a == b
    many = {make_quiz(BANK, random.Random(seed)) for seed in range(20)}
    assert len({q.term_id for q in many if q}) >= 10


def test_make_quiz_mixes_kinds_and_prefers_unseen_terms() -> None:
    rng = random.Random(5)
    kinds = [q.kind for _ in range(200) if (q := make_quiz(BANK, rng)) is not None]
    assert 20 <= kinds.count("term") <= 120 and kinds.count("definition") >= 80
    only = "kv-cache"
    seen = {tid: 3 for tid in TERMS if tid != only}
    quiz = make_quiz(BANK, random.Random(0), seen=seen)
    assert quiz is not None and quiz.term_id == only


def test_make_quiz_by_topic_and_unknown_topic() -> None:
    for seed in range(10):
        quiz = make_quiz(BANK, random.Random(seed), topic="lora")
        assert quiz is not None and quiz.term_id in topic_terms(BANK, "lora")
    assert make_quiz(BANK, random.Random(0), topic="no-such-topic") is None


@pytest.mark.slow  # a whole-bank sweep or a process of its own: the slow step (README, Development)
def test_two_terms_with_the_same_name_never_share_a_quiz() -> None:
    kv, adam = BANK.terms["kv-cache"], BANK.terms["adam"]
    twin = Term("kv-twin", kv.term_en, kv.term_ru, (), adam.definition, kv.questions)
    bank = Bank(list(BANK.topics), list(BANK.questions.values()), [*BANK.terms.values(), twin])
    together = 0
    for seed in range(4):
        rng = random.Random(seed)
        for term in bank.terms.values():
            quiz = quiz_for_term(bank, term, rng, kind="definition")
            assert quiz is not None
            assert len({o.casefold() for o in quiz.options}) == 4, quiz.options
            together += {"kv-cache", "kv-twin"} <= set(quiz.option_terms)
    assert together == 0


def test_a_tiny_glossary_cannot_make_a_quiz() -> None:
    terms = [BANK.terms[tid] for tid in ("kv-cache", "lora", "adam")]
    tiny = Bank(list(BANK.topics), list(BANK.questions.values()), terms)
    assert make_quiz(tiny, random.Random(0)) is None


# -- text helpers --------------------------------------------------------------------------------


def mask_names(text: str, names: tuple[str, ...]) -> str:
    """``text`` with the names masked as a quiz's definition has them (nothing cut)."""
    from bot.core.quiz import _shorten

    return _shorten(text, 10_000, names)[0]


def test_masking_catches_inflections_hyphens_and_pairs() -> None:
    cp = BANK.terms["checkpoints"]
    assert mask_names("Сохраняем контрольную точку и чекпоинтов много", cp.names) == "Сохраняем ___ и ___ много"
    kv = BANK.terms["kv-cache"]
    assert mask_names("KV-кэш растёт; kv cache (KV-кэш) тоже", kv.names) == "___ растёт; ___ тоже"
    storage = BANK.terms["object-storage"]
    masked = mask_names("Объектное хранилище (S3, GCS) хранит объекты", storage.names)
    assert masked == "___ (___, GCS) хранит объекты"
    bn = BANK.terms["batchnorm"]
    assert mask_names("по примерам мини-батча, а не BatchNorm2d", bn.names) == "по примерам мини-батча, а не ___"


def test_fit_cuts_at_sentences_then_words() -> None:
    text = "Первое предложение здесь. Второе предложение тоже довольно длинное и подробное."
    assert fit(text, 200) == text
    assert fit(text, 40) == "Первое предложение здесь."
    cut = fit("слово " * 30 + "и конец", 50)
    assert cut.endswith(ELLIPSIS) and tg_len(cut) <= 50 and not cut.endswith(" и" + ELLIPSIS)
    dangling = fit("Проверки: тесты, метрики, задержка и стоимость всего выката модели", 42)
    assert dangling == "Проверки: тесты, метрики, задержка…"
    emoji = fit("😀" * 60, 50)  # astral characters count twice, as in Telegram
    assert tg_len(emoji) <= 50


def test_option_labels() -> None:
    assert option_label(BANK.terms["kv-cache"], "ru") == "KV-кэш (KV cache)"
    assert option_label(BANK.terms["kv-cache"], "en") == "KV cache"
    assert option_label(BANK.terms["lora"], "ru") == "LoRA"


def test_points_and_week_start() -> None:
    assert format_points(5, "ru") == "5 баллов"
    assert format_points(1, "ru") == "1 балл"
    assert format_points(3.333, "ru") == "3,3 балла"
    assert format_points(1, "en") == "1 point"
    assert format_points(2.5, "en") == "2.5 points"
    assert format_points(2.96, "ru") == "3 балла"
    assert format_points(11, "ru") == "11 баллов"
    # Sunday 2026-03-01 22:30 UTC is already Monday 01:30 in Moscow: the Moscow week starts then
    now = datetime(2026, 3, 1, 22, 30, tzinfo=UTC)
    assert week_start(now, "Europe/Moscow") == datetime(2026, 3, 1, 21, 0, tzinfo=UTC)
    assert week_start(now, "UTC") == datetime(2026, 2, 23, 0, 0, tzinfo=UTC)
    assert week_start(now, "UTC-05:00") == datetime(2026, 2, 23, 5, 0, tzinfo=UTC)


# -- storage -------------------------------------------------------------------------------------

GROUP = -900


async def _db(url: str) -> Database:
    db = Database(url)
    await db.migrate()
    return db


async def test_poll_answers_change_and_retract(db_url: str) -> None:
    db = await _db(db_url)
    async with db.write() as s:
        await chats.upsert_chat(s, chats.ChatInfo(GROUP, "group", "G"))
        await chats.upsert_user(s, chats.UserInfo(1, "Anna"))
        poll = await polls.record_poll(
            s, poll_id="p1", chat_id=GROUP, message_id=5, term_id="lora", correct_option=2, source="quiz"
        )
        first = await polls.record_poll_answer(s, poll, 1, 0)
        assert first is not None and (first.option, first.correct) == (0, False)
    async with db.write() as s:
        poll = await polls.get_poll(s, "p1")
        assert poll is not None
        changed = await polls.record_poll_answer(s, poll, 1, 2)
        assert changed is not None and (changed.option, changed.correct) == (2, True)
    async with db.read() as s:
        board = await polls.leaderboard(s, GROUP)
        assert [(r.name, r.points, r.quiz_correct) for r in board] == [("Anna", 1.0, 1)]
        assert await polls.quizzed_terms(s, GROUP) == {"lora": 1}
    async with db.write() as s:
        poll = await polls.get_poll(s, "p1")
        assert poll is not None
        assert await polls.record_poll_answer(s, poll, 1, None) is None
    async with db.read() as s:
        assert await polls.leaderboard(s, GROUP) == []
    async with db.write() as s:
        poll = await polls.get_poll(s, "p1")
        assert poll is not None
        await polls.record_poll_answer(s, poll, 1, 2)
        await chats.migrate_chat(s, GROUP, -100900)
    async with db.read() as s:  # the supergroup keeps the group's quiz history
        assert [r.name for r in await polls.leaderboard(s, -100900)] == ["Anna"]
        assert await polls.quizzed_terms(s, -100900) == {"lora": 1}
    await db.close()


async def test_leaderboard_points_periods_and_opt_out(db_url: str) -> None:
    db = await _db(db_url)
    now = datetime.now(UTC)
    old = now - timedelta(days=30)
    async with db.write() as s:
        await chats.upsert_chat(s, chats.ChatInfo(GROUP, "group", "G"))
        await chats.upsert_chat(s, chats.ChatInfo(-901, "group", "Other"))
        for uid, name in ((1, "Anna"), (2, "Boris"), (3, "Vera"), (4, "Gleb")):
            await chats.upsert_user(s, chats.UserInfo(uid, name))

        async def answer(uid: int, qid: str, coverage: float | None, at: datetime, chat: int = GROUP) -> None:
            await answers.add_answer(s, answers.NewAnswer(ask=None, question_id=qid, user_id=uid, chat_id=chat,
                                                          message_id=None, text="…", coverage=coverage, at=at))  # fmt: skip

        # Anna: q1 twice (best coverage 0.5 counts once) + q2 without coverage = (1 + 1) + 1 = 3
        await answer(1, "q1", 0.25, now)
        await answer(1, "q1", 0.5, now)
        await answer(1, "q2", None, now)
        # Boris: q1 with full coverage = 3, one correct quiz, one wrong = +1 → 4
        await answer(2, "q1", 1.0, now)
        poll = await polls.record_poll(s, poll_id="p", chat_id=GROUP, message_id=1, term_id="lora",
                                           correct_option=0, source="quiz")  # fmt: skip
        poll2 = await polls.record_poll(s, poll_id="p2", chat_id=GROUP, message_id=2, term_id="adam",
                                            correct_option=1, source="push")  # fmt: skip
        await polls.record_poll_answer(s, poll, 2, 0, at=now)
        await polls.record_poll_answer(s, poll2, 2, 0, at=now)
        # Vera: an old answer (all time only) worth 1 + 2·0.75 = 2.5
        await answer(3, "q3", 0.75, old)
        # Gleb: lots of points, but in another group
        await answer(4, "q1", 1.0, now, chat=-901)
    since = now - timedelta(days=1)
    async with db.read() as s:
        week = await polls.leaderboard(s, GROUP, since=since)
        total = await polls.leaderboard(s, GROUP)
    assert [(r.name, r.points, r.questions, r.quiz_correct) for r in week] == [
        ("Boris", 4.0, 1, 1),
        ("Anna", 3.0, 2, 0),
    ]
    assert [(r.name, r.points) for r in total] == [("Boris", 4.0), ("Anna", 3.0), ("Vera", 2.5)]
    async with db.write() as s:
        await chats.set_board_opt_out(s, 2, True)
    async with db.read() as s:
        assert [r.name for r in await polls.leaderboard(s, GROUP)] == ["Anna", "Vera"]
    async with db.write() as s:
        await chats.set_board_opt_out(s, 2, False)
    async with db.read() as s:
        assert [r.name for r in await polls.leaderboard(s, GROUP, limit=1)] == ["Boris"]
    await db.close()


def test_polls_carry_no_markdown() -> None:
    """Telegram shows a poll's text as is: backticks and asterisks from the glossary must not reach it."""
    import random

    from bot.core.quiz import quiz_for_term

    bank = shipped_bank()
    marked = [t for t in bank.terms.values() if "`" in t.definition or "**" in t.definition]
    assert marked, "the shipped glossary has Markdown in some definitions"
    seen = 0
    for term in marked:
        for seed, kind in ((0, "definition"), (1, "term"), (2, "definition"), (3, "term")):
            quiz = quiz_for_term(bank, term, random.Random(seed), lang="ru", kind=kind)
            if quiz is None:
                continue
            seen += 1
            for text in (quiz.question, quiz.explanation, *quiz.options):
                assert "`" not in text and "**" not in text, (term.id, text)
    assert seen


def test_terms_by_topic_are_the_terms_linked_to_each_topics_questions_in_bank_order() -> None:
    by_topic = terms_by_topic(BANK)
    assert set(by_topic) == {topic.id for topic in BANK.topics}
    for topic in BANK.topics:
        ids = set(BANK.topic_question_ids(topic.id))
        assert by_topic[topic.id] == [term.id for term in BANK.terms.values() if ids & set(term.questions)]
        assert topic_terms(BANK, topic.id) == by_topic[topic.id]

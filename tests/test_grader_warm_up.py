"""The grader's phrases are prepared after start-up, in slices that leave room for updates."""

from __future__ import annotations

import asyncio

import pytest

from bot.bank import default_bank_path, load_bank
from bot.core import grading
from bot.services.grading import warm_up


@pytest.mark.slow  # a whole-bank sweep or a process of its own: the slow step (README, Development)
def test_after_the_warm_up_an_answer_to_any_question_prepares_nothing_new() -> None:
    bank = load_bank(default_bank_path())
    questions = list(bank.questions.values())
    steps = list(grading.warm_up(questions, bank.lexicon))
    phrases = sum(
        len(p)
        for q in questions
        for p in (
            *(k.match for k in q.key_points),
            *(x for m in q.misconceptions for x in (m.match, m.subject, m.object)),
        )
    )
    assert steps == list(range(1, phrases + 1))  # one step per phrase, every phrase
    matcher = grading.matcher_for(bank.lexicon)
    prepared = len(matcher._phrases)
    for question in questions[::7]:
        grading.grade(question, "Отвечаю своими словами: это зависит от задачи и данных.", bank.lexicon)
    assert len(matcher._phrases) == prepared


@pytest.mark.slow  # a whole-bank sweep or a process of its own: the slow step (README, Development)
def test_the_warm_up_stops_at_its_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    bank = load_bank(default_bank_path())
    monkeypatch.setattr(grading, "WARM_PHRASES", 100)
    steps = list(grading.warm_up(bank.questions.values(), bank.lexicon))
    assert 100 <= steps[-1] < 200


async def test_other_coroutines_run_while_it_works() -> None:
    bank = load_bank(default_bank_path())
    grading.matcher_for.cache_clear()
    ticks = 0

    async def updates() -> None:
        nonlocal ticks
        while not task.done():
            ticks += 1
            await asyncio.sleep(0)

    task = asyncio.ensure_future(warm_up(bank, slice_seconds=0.002, pause_seconds=0))
    await asyncio.gather(task, updates())
    assert ticks >= 20  # one slice at a time, not the whole bank in one go

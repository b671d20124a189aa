"""Plurals (issue 32): one helper, ``bot.i18n.counted``, gives every noun shown with a number its
right form, and no message template writes a noun after a number itself («202 вопросов» came from
a template that did)."""

from __future__ import annotations

import re
from typing import Any

import pytest

from bot.i18n import NOUNS, _catalog, counted

NUMBERS = (1, 2, 5, 11, 21, 22, 25, 111)

# written by hand: the form a Russian reader expects after each number
EXPECTED_RU = {
    "questions": ["вопрос", "вопроса", "вопросов", "вопросов", "вопрос", "вопроса", "вопросов", "вопросов"],
    "questions_genitive": ["вопроса", "вопросов", "вопросов", "вопросов", "вопроса", "вопросов", "вопросов", "вопросов"],
    "tasks": ["практическая задача", "практические задачи", "практических задач", "практических задач",
              "практическая задача", "практические задачи", "практических задач", "практических задач"],
    "tasks_short": ["задача", "задачи", "задач", "задач", "задача", "задачи", "задач", "задач"],
    "topics": ["тема", "темы", "тем", "тем", "тема", "темы", "тем", "тем"],
    "topics_dative": ["теме", "темам", "темам", "темам", "теме", "темам", "темам", "темам"],
    "terms": ["термин", "термина", "терминов", "терминов", "термин", "термина", "терминов", "терминов"],
    "terms_genitive": ["термина", "терминов", "терминов", "терминов", "термина", "терминов", "терминов", "терминов"],
    "problems": ["проблема", "проблемы", "проблем", "проблем", "проблема", "проблемы", "проблем", "проблем"],
    "chars": ["символ", "символа", "символов", "символов", "символ", "символа", "символов", "символов"],
    "days": ["день", "дня", "дней", "дней", "день", "дня", "дней", "дней"],
    "points": ["балл", "балла", "баллов", "баллов", "балл", "балла", "баллов", "баллов"],
}  # fmt: skip


@pytest.mark.parametrize("noun", NOUNS)
def test_every_counted_noun_takes_the_russian_form_each_number_needs(noun: str) -> None:
    assert [counted(n, noun, "ru") for n in NUMBERS] == [
        f"{n} {form}" for n, form in zip(NUMBERS, EXPECTED_RU[noun], strict=True)
    ]
    english = [counted(n, noun, "en") for n in NUMBERS]
    assert english[0].startswith("1 ") and not english[0].endswith("s") and all(e.endswith("s") for e in english[1:])


def _templates(lang: str) -> dict[str, str]:
    def flat(node: Any, prefix: str) -> dict[str, str]:
        if isinstance(node, dict):
            return {k: v for key, value in node.items() for k, v in flat(value, f"{prefix}{key}.").items()}
        return {prefix.rstrip("."): node} if isinstance(node, str) else {}

    return flat(_catalog(lang), "")


# What may follow a number in a template: units and abbreviations that do not change with it, and
# the words of a phrase around it («{sent} из {total}», «{limit} в день», "{n} of {total}").
_INVARIABLE = {
    "с", "s", "d", "дн.", "вопр.", "очк.", "q.", "pts", "из", "в", "of", "a", "at", "in", "и", "or", "или",
    "found", "delivered", "errors", "chats", "подряд", "по", "and",
}  # fmt: skip
_TEXTS = {"mark", "question", "text", "claim"}  # placeholders that hold words, not numbers
_AFTER_NUMBER = re.compile(r"\{(\w+)\}(?:</b>)?\s+([^\W\d_][\w.()]*)")


@pytest.mark.parametrize("lang", ["ru", "en"])
def test_no_template_writes_a_noun_after_a_number(lang: str) -> None:
    """Every template of the bot and the Mini App: a placeholder followed by a noun of its own is a
    plural waiting to go wrong; the noun comes with the number from ``counted``."""
    offenders = []
    for key, text in _templates(lang).items():
        if "(s)" in text:
            offenders.append(f"{key}: {text}")
        for name, word in _AFTER_NUMBER.findall(text):
            if name not in _TEXTS and word.rstrip("),;:").casefold() not in _INVARIABLE:
                offenders.append(f"{key}: {{{name}}} {word}")
    assert offenders == []


def test_numbers_outside_the_templates_use_the_same_helper() -> None:
    """The leaderboard's points and /review's «через N дней» come from ``counted`` too."""
    from datetime import UTC, datetime, timedelta

    from bot.core.srs import describe_interval
    from bot.tg.handlers.quiz import format_points

    now = datetime(2026, 3, 2, tzinfo=UTC)
    for n, form in zip(NUMBERS, EXPECTED_RU["points"], strict=True):
        assert format_points(n, "ru") == f"{n} {form}"
    for n, form in zip(NUMBERS, EXPECTED_RU["days"], strict=True):
        assert describe_interval(now + timedelta(days=n), now, "ru") == f"через {n} {form}"
    assert describe_interval(now + timedelta(days=1), now, "en") == "in 1 day"
    assert format_points(3.3, "ru") == "3,3 балла" and format_points(1, "en") == "1 point"

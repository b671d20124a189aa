"""No dead ends (issue 17, first steps): a topic of practice tasks gives its tasks, and `/q words`
that match nothing says so and offers a way on."""

from __future__ import annotations

import pytest

from tests.conftest import BotProcess
from tests.fakebot import FakeTelegram

pytestmark = pytest.mark.e2e


def test_a_topic_of_tasks_only_gives_its_tasks(fake: FakeTelegram, bot: BotProcess, uid: int) -> None:
    user = fake.user(uid)
    user.send("/topics")
    (topics,) = user.expect()
    labels = [label for label, _ in topics.buttons()]
    assert any(label.startswith("Дизайн ML-систем · 0/") for label in labels)
    user.press(topics, topics.button("Дизайн ML-систем"))
    chosen, question = user.expect(2)
    assert "Фильтр установлен: Дизайн ML-систем" in chosen.text
    assert "Задача" in question.text and "Дизайн ML-систем" in question.text
    user.send("/q")
    (again,) = user.expect()
    assert "Задача" in again.text and "нет вопросов" not in again.text


def test_q_with_words_that_match_nothing_says_so(fake: FakeTelegram, bot: BotProcess, uid: int) -> None:
    user = fake.user(uid)
    user.send("/q zzzz")
    (miss,) = user.expect()
    assert miss.text.startswith("По запросу «zzzz» ничего не нашлось")
    labels = [label for label, _ in miss.buttons()]
    assert labels[0] == "Случайный вопрос" and "LoRA" in labels
    user.press(miss, miss.button("Случайный вопрос"))
    (question,) = user.expect()
    assert "Ответьте своими словами" in question.text
    en = fake.user(uid + 1, language_code="en")
    en.send("/q qwertyuiop")
    (miss_en,) = en.expect()
    assert miss_en.text.startswith("Nothing matched “qwertyuiop”")


def test_glossary_suggests_only_close_names(fake: FakeTelegram, bot: BotProcess, uid: int) -> None:
    user = fake.user(uid)
    user.send("/glossary qwertyuiop")
    (miss,) = user.expect()
    assert "qwertyuiop" in miss.text and miss.buttons() == []  # no «BERT | RoPE» for a random string
    user.send("/glossary kv cahce")
    (typo,) = user.expect()
    assert [label for label, _ in typo.buttons()] == ["KV-кэш"]  # a typo still finds the term, and only it


def test_next_keeps_the_topic_asked_for(fake: FakeTelegram, bot: BotProcess, uid: int) -> None:
    user = fake.user(uid)
    user.send("/q rag")
    (first,) = user.expect()
    assert "RAG и обработка документов" in first.text
    for _ in range(3):  # the chat has no topic filter: «Следующий» stays in RAG anyway
        user.press(first, first.button("Следующий"))
        (first,) = user.expect()
        assert "RAG и обработка документов" in first.text
    user.send("Чанкуем документы, ищем по эмбеддингам и добавляем найденное в промпт.")
    (fb,) = user.expect()
    user.press(fb, fb.button("Знал"))
    fake.wait_for(lambda: "Знал" not in [label for label, _ in fb.buttons()], 5)
    assert [label for label, _ in fb.buttons()] == ["✓ Знал", "Показать ответ", "Подробнее", "Следующий"]
    user.press(fb, fb.button("Следующий"))
    (after,) = user.expect()
    assert "RAG и обработка документов" in after.text


def test_inline_mode_shares_questions_into_any_chat(fake: FakeTelegram, bot: BotProcess, uid: int) -> None:
    user = fake.user(uid)
    query = user.inline_query("lora")
    fake.wait_for(lambda: query in fake.inline_answers, 10, what="the inline answer")
    answer = fake.inline_answers[query]
    results = answer["results"]
    assert results and all("LoRA" in r["description"] + r["title"] for r in results[:3])
    assert str(answer["is_personal"]).lower() == "true" and int(answer["cache_time"]) >= 300
    card = results[0]["input_message_content"]["message_text"]
    assert "Ответить и получить разбор — в боте" in card
    (button,) = results[0]["reply_markup"]["inline_keyboard"][0]
    assert button["text"] == "Ответить в боте" and "?start=q_" in button["url"]
    assert not any("lora-" in r["description"] for r in results)  # no internal ids

    everything = user.inline_query("")
    fake.wait_for(lambda: everything in fake.inline_answers, 10)
    first = fake.inline_answers[everything]
    assert len(first["results"]) == 20 and first["next_offset"] == "20"
    more = user.inline_query("", offset="20")
    fake.wait_for(lambda: more in fake.inline_answers, 10)
    second = fake.inline_answers[more]["results"]
    assert second and not {r["id"] for r in second} & {r["id"] for r in first["results"]}
    for odd in ("²", "-5", "1e3", "９", "99999999999999999999"):  # not ASCII digits: the first page
        again = user.inline_query("", offset=odd)
        fake.wait_for(lambda q=again: q in fake.inline_answers, 10, what=f"the answer to offset {odd!r}")
        assert [r["id"] for r in fake.inline_answers[again]["results"]] == [r["id"] for r in first["results"]]

    en = fake.user(uid + 1, language_code="en")
    english = en.inline_query("kv cache")
    fake.wait_for(lambda: english in fake.inline_answers, 10)
    (en_button,) = fake.inline_answers[english]["results"][0]["reply_markup"]["inline_keyboard"][0]
    assert en_button["text"] == "Answer in the bot"


def test_next_after_a_search_result_is_the_next_result(fake: FakeTelegram, bot: BotProcess, uid: int) -> None:
    user = fake.user(uid)
    user.send("/search чекпоинт")
    (results,) = user.expect()
    picks = [(label, data) for label, data in results.buttons() if data.startswith("qs:")]
    assert len(picks) >= 3
    user.press(results, picks[0][1])
    (first,) = user.expect()
    user.press(first, first.button("Следующий"))
    (second,) = user.expect()
    user.press(second, second.button("Следующий"))
    (third,) = user.expect()
    # each question is the next search result, in order (a label may be cut to fit a button)
    for (label, _), shown in zip(picks[:3], (first, second, third), strict=True):
        assert label.split(". ", 1)[-1].rstrip("…")[:40] in shown.text


def test_q_with_real_words_that_match_nothing_says_so(fake: FakeTelegram, bot: BotProcess, uid: int) -> None:
    user = fake.user(uid)
    user.send("/q квантовая гравитация")
    (miss,) = user.expect()
    assert miss.text.startswith("По запросу «квантовая гравитация» ничего не нашлось"), miss.text
    user.send("/q kv cache")
    (question,) = user.expect()
    assert "Расскажи про KV cache" in question.text and "Задача" not in question.text
    en = fake.user(uid + 1, language_code="en")
    en.send("/search quantum gravity")
    (nothing,) = en.expect()
    assert nothing.text.startswith("Nothing found for “quantum gravity”")


def test_search_forgives_typos_as_glossary_does(fake: FakeTelegram, bot: BotProcess, uid: int) -> None:
    user = fake.user(uid)
    user.send("/search kvcahe")
    (found,) = user.expect()
    lines = found.text.split("\n")
    assert lines[1] == "Показаны результаты для «KV cache»."
    assert "Расскажи про KV cache" in lines[2]
    user.press(found, found.buttons()[0][1])  # the first result opens that question
    (question,) = user.expect()
    assert "Расскажи про KV cache" in question.text

"""A new user in a private chat, end to end: the bot process against the fake Bot API server."""

from __future__ import annotations

import re

import pytest

from tests.conftest import BotProcess, shipped_bank, shipped_counts
from tests.fakebot import FakeTelegram

pytestmark = pytest.mark.e2e


def test_start_shows_welcome_and_menu(fake: FakeTelegram, bot: BotProcess, uid: int) -> None:
    user = fake.user(uid, "Анна")
    user.send("/start")
    (msg,) = user.expect()
    assert "Привет, Анна" in msg.text
    total, questions, tasks = shipped_counts()
    assert str(total) not in msg.text  # counts are questions and tasks separately
    from bot.i18n import counted

    assert f"{counted(questions, 'questions', 'ru')} и {counted(tasks, 'tasks', 'ru')} по " in msg.text, msg.text
    assert re.search(r"\b\d+ вопрос\w* и \d+ практическ\w+ задач\w* по \d+ тем\w+", msg.text), msg.text
    assert msg.reply_markup["keyboard"][0][0]["text"] == "🎲 Вопрос"


def test_commands_registered_per_language(fake: FakeTelegram, bot: BotProcess) -> None:
    private = {c["command"] for c in fake.commands[("all_private_chats", "ru")]}
    assert private >= {"q", "answer", "glossary", "search", "export", "forget", "interview"}
    en, ru = fake.commands[("all_private_chats", "en")], fake.commands[("all_private_chats", "ru")]
    assert en[0]["description"] != ru[0]["description"]  # each menu is localized
    group = {c["command"] for c in fake.commands[("all_group_chats", "ru")]}
    admins = {c["command"] for c in fake.commands[("all_chat_administrators", "en")]}
    assert "q" in group and "forget" not in group and "daily" not in group  # members' menu
    assert {"daily", "lang"} <= admins  # admins also set the group's daily question and language


def test_question_answer_reveal_loop(fake: FakeTelegram, bot: BotProcess, uid: int) -> None:
    user = fake.user(uid)
    user.send("/q 463")
    (question,) = user.expect()
    assert "Что такое activation recomputation (checkpointing) и зачем оно нужно" in question.text
    assert [label for label, _ in question.buttons()] == ["Показать ответ", "Глоссарий", "Следующий"]
    # the bot's Defaults: Telegram gets HTML without link previews, as when every call said so
    sends = [p for m, p, _ in fake.calls if m == "sendMessage" and p.get("chat_id") == uid]
    assert sends[-1]["parse_mode"] == "HTML"
    assert sends[-1]["link_preview_options"] == {"is_disabled": True}
    assert "disable_web_page_preview" not in sends[-1]

    answer = "Не храним активации, а пересчитываем их в backward — экономия памяти ценой вычислений."
    user.send(answer)
    (confirm,) = user.expect()
    assert "Ответ сохранён" in confirm.text
    stored = bot.rows("select question_id, text from answers where user_id = ?", uid)
    assert stored == [("q463", answer)]

    user.press(confirm, confirm.button("Показать ответ"))
    (got,) = user.expect()  # the own answer and the reference in one message
    assert "Ваш ответ" in got.text and answer in got.text
    assert got.text.index(answer) < got.text.index("Эталонный ответ") and "Ключевые пункты" in got.text
    terms = [label for label, data in got.buttons() if data.startswith("t:")]
    assert any("Чекпоинт" in label or "Checkpoint" in label for label in terms)


def test_a_reveal_press_stops_its_spinner_before_the_answer_is_sent(
    fake: FakeTelegram, bot: BotProcess, uid: int
) -> None:
    """A button that only shows something is answered at once: the spinner stops even while
    sending the reference answer takes a second."""
    user = fake.user(uid)
    user.send("/q 463")
    (question,) = user.expect()
    fake.method_delay["sendMessage"] = 1.5
    try:
        query_id = user.press(question, question.button("Показать ответ"))
        fake.wait_for(
            lambda: any(p.get("callback_query_id") == query_id for p in fake.calls_of("answerCallbackQuery")),
            1.2, "the press answered",
        )  # fmt: skip
        assert user.quiet(0) == []  # the answer is still on its way
    finally:
        fake.method_delay.clear()
    (got,) = user.expect()
    assert "Эталонный ответ" in got.text
    answered = [p for p in fake.calls_of("answerCallbackQuery") if p.get("callback_query_id") == query_id]
    assert len(answered) == 1 and "text" not in answered[0]  # once, without a notice


def test_english_user_gets_english_interface(fake: FakeTelegram, bot: BotProcess, uid: int) -> None:
    user = fake.user(uid, "John", language_code="en-GB")
    user.send("/start")
    (msg,) = user.expect()
    assert msg.text.startswith("Hi, John!")
    user.send("/q t13")
    (q,) = user.expect()
    assert "Task t13" in q.text and "Сравнить S3 vs EBS для checkpoint'ов 70B" in q.text
    assert [label for label, _ in q.buttons()] == ["Show answer", "Glossary", "Next"]
    user.send("/lang ru")
    (msg,) = user.expect()
    assert "русский" in msg.text
    user.send("/help")
    (msg,) = user.expect()
    assert "Команды" in msg.text


def test_q_by_topic_words_and_no_repeats(fake: FakeTelegram, bot: BotProcess, uid: int) -> None:
    user = fake.user(uid)
    seen = []
    for _ in range(14):  # the LoRA topic has 14 questions: all different before any repeats
        user.send("/q lora")
        (q,) = user.expect()
        assert "· LoRA ·" in q.text
        seen.append(q.text.split("\n\n")[1])
    assert len(set(seen)) == 14
    user.send("/q lora")
    (q,) = user.expect()
    assert "новый круг" in q.text
    user.send("/q kv cache")
    (q,) = user.expect()
    assert "KV cache" in q.text or "KV-кэш" in q.text
    user.send("/q 99999")
    (msg,) = user.expect()
    assert "Вопроса «99999» нет в банке" in msg.text


def test_topic_filter_applies_to_q_until_cleared(fake: FakeTelegram, bot: BotProcess, uid: int) -> None:
    user = fake.user(uid)
    user.send("/topics")
    (menu,) = user.expect()
    user.press(menu, menu.button("Агенты"))
    set_msg, question = user.expect(2)
    assert "Фильтр установлен: Агенты" in set_msg.text
    assert "· Агенты ·" in question.text
    for _ in range(3):
        user.send("/q")
        (q,) = user.expect()
        assert "· Агенты ·" in q.text
    user.press(question, question.button("Следующий"))
    (q,) = user.expect()
    assert "· Агенты ·" in q.text
    user.send("/topics")
    (menu,) = user.expect()
    assert "Сейчас фильтр: Агенты" in menu.text
    user.press(menu, menu.button("Все темы"))
    (msg,) = user.expect()
    assert "Фильтр сброшен" in msg.text


def test_answer_by_reply_second_answer_and_edit_keep_all(fake: FakeTelegram, bot: BotProcess, uid: int) -> None:
    user = fake.user(uid)
    user.send("/q 472")
    (q472,) = user.expect()
    user.send("/q 469")
    user.expect()
    # a reply to the earlier question answers that one, not the pending one
    first = user.send("Градиенты суммируются по микробатчам, шаг оптимизатора раз в N", reply_to=q472.message_id)
    (ok,) = user.expect()
    assert "Ответ сохранён" in ok.text
    user.send("Ещё: loss делим на число шагов накопления", reply_to=q472.message_id)
    (ok,) = user.expect()
    assert "Ещё один ответ сохранён" in ok.text
    user.edit(first, "Градиенты накапливаются по микробатчам; шаг оптимизатора раз в N микробатчей")
    (ok,) = user.expect()
    assert "Исправленный ответ сохранён" in ok.text
    stored = bot.rows("select question_id, edited from answers where user_id = ? order by id", uid)
    assert stored == [("q472", 0), ("q472", 0), ("q472", 1)]
    user.send("/answer 472")
    (shown,) = user.expect()  # the own answer above the reference, in one message
    assert "шаг оптимизатора раз в N микробатчей" in shown.text  # the newest is shown


def test_plain_text_without_a_question_and_stickers(fake: FakeTelegram, bot: BotProcess, uid: int) -> None:
    user = fake.user(uid)
    user.send("привет")
    (msg,) = user.expect()
    assert "сначала получите вопрос" in msg.text
    user.send_sticker()
    (msg,) = user.expect()
    assert "только текстом" in msg.text
    assert bot.rows("select count(*) from answers where user_id = ?", uid) == [(0,)]


def test_long_answer_is_kept_whole(fake: FakeTelegram, bot: BotProcess, uid: int) -> None:
    user = fake.user(uid)
    user.send("/q 463")
    user.expect()
    text = ("Активации пересчитываются в backward вместо хранения. " * 80)[:4096]
    user.send(text)
    (ok,) = user.expect()
    assert "4096" in ok.text
    assert bot.rows("select length(text) from answers where user_id = ?", uid) == [(4096,)]


def test_glossary_browse_lookup_and_two_taps(fake: FakeTelegram, bot: BotProcess, uid: int) -> None:
    user = fake.user(uid)
    user.send("/glossary")
    (page,) = user.expect()
    assert "Глоссарий" in page.text and "стр. 1/" in page.text
    user.press(page, page.button("Вперёд"))
    fake.wait_for(lambda: "стр. 2/" in page.text, 5, what="the page edited in place")
    assert user.quiet(0.3) == []  # paging edits the message on screen, it sends no new one
    user.send("/glossary чекпоинтинг")
    (card,) = user.expect()
    links = len(shipped_bank().term("checkpoints").questions)
    assert "Checkpoints" in card.text and f"Где встречается ({links})" in card.text
    user.press(card, card.button("426."))  # a term → its question: one tap
    (q,) = user.expect()
    assert "Что такое 3D parallelism" in q.text
    user.press(q, q.button("Глоссарий"))  # a question → its terms → a term: two taps
    (terms,) = user.expect()
    data = next(d for _, d in terms.buttons() if d.startswith("t:"))
    user.press(terms, data)
    (card2,) = user.expect()
    assert "📖" in card2.text
    user.send("/glossary атеншн")
    (msg,) = user.expect()
    assert "Attention" in msg.text or "Возможно, вы имели в виду" in msg.text
    user.send("/glossary zzzzqqq")
    (msg,) = user.expect()
    assert "не найден" in msg.text


def test_search_is_morphology_aware_and_paged(fake: FakeTelegram, bot: BotProcess, uid: int) -> None:
    user = fake.user(uid)
    results = {}
    for query in ("чекпоинт", "чекпоинтов", "checkpointing"):
        user.send(f"/search {query}")
        (msg,) = user.expect()
        results[query] = msg.text.split("\n")[1:4]
        handles = [re.match(r"\d+\. \[([\w-]+)\] ", line) for line in results[query]]
        assert all(handles), msg.text  # each result shows the handle /q takes
        texts = [line[m.end() :] for line, m in zip(results[query], handles, strict=True) if m]
        assert all(re.search("чекпоинт|checkpoint", text, re.I) for text in texts), msg.text
    assert results["чекпоинт"] == results["чекпоинтов"]
    user.send("/search чекпоинтов")
    (msg,) = user.expect()
    user.press(msg, msg.button("Вперёд"))
    fake.wait_for(lambda: "стр. 2/" in msg.text, 5, what="the results page edited in place")
    assert user.quiet(0.3) == []
    user.send("/search " + "x" * 300)
    (msg,) = user.expect()
    assert "Слишком длинный запрос" in msg.text
    user.send("/search")
    (msg,) = user.expect()
    assert "/search" in msg.text


def test_deep_links(fake: FakeTelegram, bot: BotProcess, uid: int) -> None:
    user = fake.user(uid)
    user.send("/start q_463")
    (q,) = user.expect()
    assert "Вопрос 463" in q.text
    user.send("/start q_t56")
    (q,) = user.expect()
    assert "Задача t56" in q.text
    user.send("/start g_lora")
    (card,) = user.expect()
    assert "LoRA" in card.text and "Где встречается" in card.text
    user.send("/start q_nope")
    (msg,) = user.expect()
    assert "Ссылка устарела" in msg.text and "Привет" in msg.text


def test_stale_and_forged_buttons(fake: FakeTelegram, bot: BotProcess, uid: int) -> None:
    user = fake.user(uid)
    user.send("/q 463")
    (q,) = user.expect()
    for data in ("zz:1", "t:lora:notanumber", "a:../../etc", "q:" + "x" * 70):
        before = len(fake.callback_answers)
        user.press(q, data)
        fake.wait_for(lambda: len(fake.callback_answers) > before, 5.0, "the callback to be answered")  # noqa: B023
        assert "устарела" in fake.callback_answers[before].get("text", "")
        assert fake.callback_answers[before].get("show_alert") is True
    user.press(q, "a:no-such-question")  # well-formed, but the bank has no such question
    (gone,) = user.expect()
    assert "больше нет в банке" in gone.text
    assert bot.rows("select count(*) from reveals where chat_id = ?", uid) == [(0,)]


def test_unknown_command(fake: FakeTelegram, bot: BotProcess, uid: int) -> None:
    user = fake.user(uid)
    user.send("/frobnicate now")
    (msg,) = user.expect()
    assert msg.text == "Не знаю команду /frobnicate. Список команд — /help."


def test_menu_keyboard_buttons(fake: FakeTelegram, bot: BotProcess, uid: int) -> None:
    user = fake.user(uid)
    user.send("🎲 Вопрос")
    (q,) = user.expect()
    assert "Показать ответ" in [label for label, _ in q.buttons()]
    user.send("📚 Темы")
    (topics,) = user.expect()
    assert topics.text.startswith("Темы")
    user.send("📖 Глоссарий")
    (glossary,) = user.expect()
    assert glossary.text.startswith("Глоссарий")
    user.send("❓ Помощь")
    (help_msg,) = user.expect()
    assert "/interview" in help_msg.text
    assert bot.rows("select count(*) from answers where user_id = ?", uid) == [(0,)]  # labels are not answers


def test_the_reference_answer_comes_after_a_very_long_answer(fake: FakeTelegram, bot: BotProcess, uid: int) -> None:
    user = fake.user(uid)
    user.send("/q 463")
    user.expect()
    long_answer = ("Активации пересчитываются на backward вместо хранения. " * 80)[:4090]
    user.send(long_answer)
    (feedback,) = user.expect()
    user.press(feedback, feedback.button("Показать ответ"))
    mine, *reference = user.expect(2)
    assert "Ваш ответ" in mine.text and "Показано начало: в ответе 4090 символов" in mine.text
    assert "Эталонный ответ" in reference[0].text
    user.send("/answer")
    again = user.expect(2)
    assert "Эталонный ответ" in again[1].text
    assert bot.rows("select length(text) from answers where user_id = ?", uid) == [(4090,)]  # stored whole

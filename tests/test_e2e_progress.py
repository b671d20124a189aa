"""/stats, /export and /forget end to end: the bot process against the fake Bot API server."""

from __future__ import annotations

import io
import re
import sqlite3
from collections.abc import Callable
from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import pytest
from PIL import Image

from bot.core.stats import bar
from tests.conftest import BotProcess, away_from_midnight, shipped_counts, wait_until
from tests.fakebot import BOT_USERNAME, FakeTelegram, FakeUser, Sent

pytestmark = pytest.mark.e2e

MOSCOW = ZoneInfo("Europe/Moscow")  # DEFAULT_TIMEZONE


def count(bot: BotProcess, sql: str, *args: object) -> int:
    ((n,),) = bot.rows(sql, *args)
    assert isinstance(n, int)
    return n


def since(user: FakeUser) -> list[Sent]:
    return user.fake.messages(user.chat.id)[user._seen :]


def wait_msg(user: FakeUser, match: Callable[[Sent], bool], what: str, timeout: float = 10.0) -> Sent:
    """The first bot message since the user's last action that ``match``es (other messages, such as
    answer feedback, may come in between)."""
    found: list[Sent] = []

    def check() -> bool:
        found[:] = [m for m in since(user) if match(m)]
        return bool(found)

    user.fake.wait_for(check, timeout, what)
    return found[0]


def wait_text(user: FakeUser, needle: str) -> Sent:
    return wait_msg(user, lambda m: needle in m.text and m.method == "sendMessage", repr(needle))


def answer(user: FakeUser, bot: BotProcess, question: str, text: str, *, grade: str | None = None) -> None:
    """Ask for a question, answer it and (optionally) rate oneself with the buttons under the reply."""
    user.send(question)
    wait_msg(user, lambda m: any(d.startswith("a:") for _, d in m.buttons()), "the question")
    user.send(text)
    saved = wait_msg(user, lambda m: m.text.startswith("💾"), "the answer to be saved")
    if grade is not None:
        user.press(saved, saved.button(grade))
        graded = "select count(*) from answers where text = ? and self_grade is not null"
        wait_until(lambda: count(bot, graded, text) == 1)


def test_stats_counts_bars_streak_due_and_chart(fake: FakeTelegram, bot: BotProcess, uid: int) -> None:
    away_from_midnight()  # a streak of today / the file named by today's date
    user = fake.user(uid)
    user.send("/stats")
    empty = wait_text(user, "📊")
    assert "Пока нет ни одного ответа" in empty.text
    assert [m for m in user.quiet(0.3) if m.method == "sendPhoto"] == []

    answer(
        user,
        bot,
        "/q 463",
        "Не храним активации, а пересчитываем их в backward — экономим память.",
        grade="Знал",
    )
    answer(user, bot, "/q lora-01", "Низкоранговые добавки к весам, обучаем только их.", grade="Не знал")
    coverage = dict(bot.rows("select question_id, coverage from answers where user_id = ?", uid))
    assert set(coverage) == {"q463", "lora-01"} and None not in coverage.values()
    # one card due now, one later: the user sees exactly the one that is due
    assert count(bot, "select count(*) from cards where user_id = ?", uid) == 2
    with sqlite3.connect(bot.db_url.removeprefix("sqlite:///")) as conn:
        conn.execute(
            "update cards set due = '2000-01-01 00:00:00.000000' where user_id = ? and question_id = 'q463'",
            (uid,),
        )
        conn.execute(
            "update cards set due = '2999-01-01 00:00:00.000000' where user_id = ? and question_id = 'lora-01'",
            (uid,),
        )

    user.send("/stats")
    msg = wait_text(user, "Ваш прогресс")
    text = msg.text
    assert f"Ответов: 2 · вопросов: 2 из {shipped_counts()[0]}" in text
    assert "Серия: 1 день подряд" in text
    assert "К повторению сейчас: 1 — /review" in text
    assert "Обучение больших моделей · 1/7" in text
    assert "LoRA · 1/14" in text
    assert f"{bar(1 / 7)} отвечено" in text
    assert f"{bar(coverage['q463'])} покрытие ключевых пунктов" in text  # type: ignore[arg-type]
    assert f"{bar(0.5)} знал" in text and f"{bar(0.5)} не знал" in text and f"{bar(0)} частично" in text
    assert "Ещё не начаты: Общее 0/10" in text
    photo = wait_msg(user, lambda m: m.method == "sendPhoto", "the chart")
    image = Image.open(io.BytesIO(photo.params["photo"]["content"]))
    assert image.format == "PNG" and image.width <= 1280
    assert photo.text.startswith("Освоение тем:") and "training —" not in photo.text  # no slug legend
    assert len(photo.text) <= 1024

    en = fake.user(uid + 1, "John", language_code="en")
    answer(en, bot, "/q 463", "Recompute activations in the backward pass.")
    en.send("/stats")
    msg = wait_text(en, "Your progress")
    assert f"Answers: 1 · questions: 1 of {shipped_counts()[0]}" in msg.text and "Streak: 1 day in a row" in msg.text


def test_export_sends_my_answers_as_markdown(fake: FakeTelegram, bot: BotProcess, uid: int) -> None:
    away_from_midnight()  # a streak of today / the file named by today's date
    user = fake.user(uid)
    user.send("/export")
    msg = wait_text(user, "Экспортировать пока нечего")
    assert [m for m in user.quiet(0.3) if m.method == "sendDocument"] == []

    user.send("/q 463")
    wait_text(user, "Ответьте своими словами")
    first = user.send("Пересчитываем активации в backward")
    wait_text(user, "Ответ сохранён")
    user.edit(first, "Пересчитываем активации в backward вместо хранения — память в обмен на FLOPs")
    wait_text(user, "Исправленный ответ сохранён")
    answer(user, bot, "/q lora-01", "LoRA: обучаем низкоранговые матрицы A и B\n\nвторой абзац")

    user.send("/export")
    doc = wait_msg(user, lambda m: m.method == "sendDocument", "the export file")
    today = datetime.now(UTC).astimezone(MOSCOW).date()
    assert doc.params["document"]["filename"] == f"answers-{today:%Y-%m-%d}.md"
    assert "Ваши ответы: 3 (вопросов: 2)" in doc.text
    md = doc.params["document"]["content"].decode("utf-8")
    assert "### Вопрос 463. Что такое activation recomputation (checkpointing) и зачем оно нужно" in md
    assert "> Пересчитываем активации в backward\n" in md
    assert "> Пересчитываем активации в backward вместо хранения — память в обмен на FLOPs" in md
    assert "исправленный" in md
    assert "> LoRA: обучаем низкоранговые матрицы A и B\n>\n> второй абзац" in md
    assert "## Обучение больших моделей" in md and "## LoRA" in md
    assert md.index("## LoRA") < md.index("## Обучение больших моделей")  # bank order of topics
    assert re.search(r"· оценка \d+/100", md) and "покрытие" not in md  # the score, as the chat says it (issue 32)
    assert msg
    # a group title is anyone's text: in the file it is plain text, not Markdown
    group = fake.group(-(uid + 1), title="*Жирный* [ссылка](http://evil.example)\n# Заголовок")
    member = fake.user(uid).in_chat(group)
    member.send(f"/q@{BOT_USERNAME} 463")
    (q,) = member.expect()
    member.send("Пересчитываем активации в backward вместо хранения", reply_to=q.message_id)
    member.expect()
    user.send("/export")
    later = wait_msg(user, lambda m: m.method == "sendDocument" and m is not doc, "the second export")
    md = later.params["document"]["content"].decode("utf-8")
    assert "в группе «\\*Жирный\\* \\[ссылка\\]\\(http://evil\\.example\\) \\# Заголовок»" in md
    assert "\n# Заголовок" not in md


def test_forget_asks_then_deletes_everything_about_me(fake: FakeTelegram, bot: BotProcess, uid: int) -> None:
    me = fake.user(uid, "Анна")
    group = fake.group(-uid, "ML club")
    other = fake.user(uid + 1, "Борис").in_chat(group)
    me_in_group = me.in_chat(group)
    answer(me, bot, "/q 463", "Пересчитываем активации", grade="Частично")
    me.send("/answer")
    wait_text(me, "Эталонный ответ")
    me.send("/daily 09:30")
    wait_text(me, "Ежедневный вопрос")
    me_in_group.send("/q 463")
    q = wait_text(me_in_group, "Отвечайте реплаем")
    other.send("Ответ Бориса в группе", reply_to=q.message_id)
    wait_text(other, "Ответ сохранён")
    me_in_group.send("Мой ответ в группе", reply_to=q.message_id)
    wait_text(me_in_group, "Ответ сохранён")

    me.send("/forget")
    prompt = wait_text(me, "Удалить всё, что я храню о вас?")
    assert "ответы: 2 (из них в группах: 1)" in prompt.text
    assert "карточки повторения: 1" in prompt.text
    assert "просмотры эталонных ответов: 1" in prompt.text
    me.press(prompt, prompt.button("Нет"))
    wait_text(me, "ничего не удаляю")
    assert count(bot, "select count(*) from answers where user_id = ?", uid) == 2
    wait_until(lambda: prompt.reply_markup is None)  # the prompt's buttons are gone

    me.send("/forget")
    prompt = wait_text(me, "Удалить всё, что я храню о вас?")
    me.press(prompt, prompt.button("Да, удалить всё"))
    done = wait_text(me, "Готово. Удалено:")
    assert "ответы: 2 (из них в группах: 1)" in done.text and "карточки повторения: 1" in done.text

    for table, column in [
        ("users", "id"), ("answers", "user_id"), ("cards", "user_id"), ("reveals", "user_id"),
        ("interviews", "user_id"), ("poll_answers", "user_id"), ("asks", "user_id"),
        ("chats", "id"), ("asks", "chat_id"), ("chat_seen", "chat_id"), ("deliveries", "chat_id"),
    ]:  # fmt: skip
        assert count(bot, f"select count(*) from {table} where {column} = ?", uid) == 0, table
    # the group and the other member's answer stay; the group's question stays, without my id
    assert bot.rows("select title from chats where id = ?", -uid) == [("ML club",)]
    assert bot.rows("select text from answers where chat_id = ?", -uid) == [("Ответ Бориса в группе",)]
    assert count(bot, "select count(*) from asks where chat_id = ?", -uid) == 1

    me.send("/stats")
    assert "Пока нет ни одного ответа" in wait_text(me, "📊").text
    # starting again works at once (the bot does not remember it had seen me)
    answer(me, bot, "/q 463", "Снова отвечаю")
    assert count(bot, "select count(*) from answers where user_id = ?", uid) == 1


def test_no_one_reads_another_users_answers(fake: FakeTelegram, bot: BotProcess, uid: int) -> None:
    group = fake.group(-uid, "Shared")
    anna, boris = fake.user(uid, "Анна"), fake.user(uid + 1, "Борис")
    anna_g, boris_g = anna.in_chat(group), boris.in_chat(group)
    answer(anna, bot, "/q 463", "СЕКРЕТ-АННЫ-личный ответ про активации")
    anna_g.send("/q 463")
    q = wait_text(anna_g, "Отвечайте реплаем")
    anna_g.send("СЕКРЕТ-АННЫ-в-группе", reply_to=q.message_id)
    wait_text(anna_g, "Ответ сохранён")
    boris_g.send("Ответ Бориса: пересчёт в backward", reply_to=q.message_id)
    wait_text(boris_g, "Ответ сохранён")

    boris.send("/export")
    doc = wait_msg(boris, lambda m: m.method == "sendDocument", "Boris's export")
    md = doc.params["document"]["content"].decode("utf-8")
    assert "Ответ Бориса: пересчёт в backward" in md
    assert "СЕКРЕТ-АННЫ" not in md

    # in the group: /stats shows Boris's counts only; /export and /forget send nothing there
    group_before = len(fake.messages(-uid))
    boris_g.send("/stats")
    stats = wait_text(boris_g, "Борис")
    assert f"ответов 1 · вопросов 1 из {shipped_counts()[0]}" in stats.text
    boris_g.send("/export")
    wait_text(boris_g, "только в личном чате")
    anna_g.send("/export")
    wait_text(anna_g, "только в личном чате")
    boris_g.send("/forget")
    wait_text(boris_g, "только в личном чате")
    # a forged "yes" pressed in the group deletes nothing
    boris_g.press(q, "fg:yes")

    def refused() -> bool:
        return any("устарела" in a.get("text", "") for a in fake.callback_answers[-3:])

    fake.wait_for(refused, 5.0, "the forged press to be refused")
    in_group = fake.messages(-uid)[group_before:]
    assert {m.method for m in in_group} == {"sendMessage"}
    assert not any("СЕКРЕТ-АННЫ" in m.text or "Бориса" in m.text for m in in_group)
    assert count(bot, "select count(*) from answers where user_id in (?, ?)", uid, uid + 1) == 3

    anna.send("/export")
    doc = wait_msg(anna, lambda m: m.method == "sendDocument", "Anna's export")
    md = doc.params["document"]["content"].decode("utf-8")
    assert "СЕКРЕТ-АННЫ-личный" in md and "СЕКРЕТ-АННЫ-в-группе" in md and "в группе «Shared»" in md
    assert "Бориса" not in md

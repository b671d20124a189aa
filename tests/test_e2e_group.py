"""A group study chat, end to end: commands with @botname, answers by reply, per-member storage."""

from __future__ import annotations

import pytest

from tests.conftest import BotProcess
from tests.fakebot import BOT_USERNAME, FakeTelegram

pytestmark = pytest.mark.e2e


def test_group_answers_by_reply_are_stored_per_member(fake: FakeTelegram, bot: BotProcess) -> None:
    chat = fake.group(-5001, admins={501})
    anna = fake.user(501, "Anna").in_chat(chat)
    boris = fake.user(502, "Boris").in_chat(chat)
    anna.send(f"/q@{BOT_USERNAME} 463")
    (q,) = anna.expect()
    assert "Отвечайте реплаем" in q.text
    boris.send("Пересчитываем активации вместо хранения", reply_to=q.message_id)
    (ok,) = boris.expect()
    assert "Ответ сохранён" in ok.text
    anna.send("Это gradient checkpointing: память в обмен на вычисления", reply_to=q.message_id)
    anna.expect()
    stored = bot.rows("select user_id, question_id from answers where chat_id = ? order by id", -5001)
    assert stored == [(502, "q463"), (501, "q463")]
    # ordinary chatter (not a reply) is not an answer and gets no reply
    boris.send("кто идёт обедать?")
    assert boris.quiet() == []
    # «Показать ответ» works for anyone and shows nobody's personal answer
    boris.press(q, q.button("Показать ответ"))
    (ref,) = boris.expect()
    assert "Эталонный ответ" in ref.text and "Ваш ответ" not in ref.text


def test_group_language_and_filter_are_the_groups_own(fake: FakeTelegram, bot: BotProcess) -> None:
    chat = fake.group(-5002, admins={601})
    admin = fake.user(601, "Admin", language_code="en").in_chat(chat)
    member = fake.user(602, "Member", language_code="en").in_chat(chat)
    member.send(f"/lang@{BOT_USERNAME} en")
    (refused,) = member.expect()
    assert "администраторы" in refused.text
    admin.send(f"/lang@{BOT_USERNAME} en")
    admin.expect()
    member.send("/topics")
    (menu,) = member.expect()
    assert menu.text.startswith("Topics")
    # a member gets a question on the topic; the group's filter (its daily topic) stays
    member.press(menu, menu.button("LoRA"))
    (q,) = member.expect()
    assert "· LoRA ·" in q.text
    assert bot.rows("select topic_filter from chats where id = ?", -5002) == [(None,)]
    admin.press(menu, menu.button("LoRA"))
    _, q = admin.expect(2)
    assert "· LoRA ·" in q.text
    assert bot.rows("select topic_filter from chats where id = ?", -5002) == [("lora",)]
    # the member's private chat is unaffected by the group's filter
    private = fake.user(602, "Member", language_code="en")
    private.send("/topics")
    (mine,) = private.expect()
    assert "No filter" in mine.text


def test_commands_for_other_bots_are_ignored(fake: FakeTelegram, bot: BotProcess) -> None:
    chat = fake.group(-5003)
    user = fake.user(701).in_chat(chat)
    user.send("/q@some_other_bot")
    user.send("/weather")
    assert user.quiet(1.0) == []
    user.send(f"/weather@{BOT_USERNAME}")
    (msg,) = user.expect()
    assert "Не знаю команду /weather" in msg.text


@pytest.mark.parametrize("supergroup_first", [True, False], ids=["supergroup-message-first", "old-group-first"])
def test_a_group_that_becomes_a_supergroup_keeps_its_settings(
    fake: FakeTelegram, bot: BotProcess, supergroup_first: bool
) -> None:
    import time

    old_id = -7100 - int(supergroup_first)
    new_id = -1_000_000_000_000 + old_id
    chat = fake.group(old_id, admins={7101})
    admin = fake.user(7101, "Admin").in_chat(chat)
    admin.send(f"/daily@{BOT_USERNAME} 09:30 Europe/Berlin")
    admin.expect()
    admin.send(f"/lang@{BOT_USERNAME} en")
    admin.expect()
    fake.migrate(old_id, new_id)

    def service(chat_id: int, **field: int) -> dict[str, object]:
        info = fake.chats[chat_id].as_dict()
        return {"message": {"message_id": fake.new_message_id(chat_id), "date": int(time.time()),
                            "chat": info, "from": admin.as_dict(), **field}}  # fmt: skip

    updates = [service(new_id, migrate_from_chat_id=old_id), service(old_id, migrate_to_chat_id=new_id)]
    for update in updates if supergroup_first else updates[::-1]:
        fake.push_update(update)
    moved = fake.user(7101, "Admin").in_chat(fake.chats[new_id])
    time.sleep(0.5)
    moved.send(f"/daily@{BOT_USERNAME}")
    (view,) = moved.expect()
    assert "09:30" in view.text and "Europe/Berlin" in view.text
    assert "Daily question: on" in view.text  # in English: the group's language moved too
    assert bot.rows("select count(*) from chats where id = ?", old_id) == [(0,)]


def test_only_the_answerer_rates_an_answer_in_a_group(fake: FakeTelegram, bot: BotProcess) -> None:
    chat = fake.group(-7301)
    anna = fake.user(7301, "Anna").in_chat(chat)
    boris = fake.user(7302, "Boris").in_chat(chat)
    anna.send(f"/q@{BOT_USERNAME} 463")
    (q,) = anna.expect()
    anna.send("Активации не храним, а пересчитываем на backward: память в обмен на вычисления", reply_to=q.message_id)
    (feedback,) = anna.expect()
    boris_press = boris.press(feedback, feedback.button("Не знал"))
    fake.wait_for(lambda: any(a.get("callback_query_id") == boris_press for a in fake.callback_answers), 5)
    (alert,) = [a for a in fake.callback_answers if a.get("callback_query_id") == boris_press]
    assert alert["text"] == "Оценивает свой ответ только его автор." and alert.get("show_alert")
    assert bot.rows("select count(*) from cards where user_id = ?", 7302) == [(0,)]  # no card for Boris
    assert "Знал" in [label for label, _ in feedback.buttons()]  # Anna's buttons are still there
    fake.inject("editMessageReplyMarkup", 400, "Bad Request: message can't be edited", times=1)
    anna_press = anna.press(feedback, feedback.button("Знал"))
    fake.wait_for(lambda: any(a.get("callback_query_id") == anna_press for a in fake.callback_answers), 5)
    (graded,) = [a for a in fake.callback_answers if a.get("callback_query_id") == anna_press]
    assert "Знал" in graded["text"]  # the grade is saved and said, though the buttons could not change
    assert bot.rows("select self_grade from answers where user_id = ?", 7301) == [(3,)]
    assert anna.quiet(0.5) == []  # no «Что-то пошло не так» after the failed edit

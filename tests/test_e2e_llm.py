"""The LLM examiner as a user meets it, over the fake Bot API and a fake OpenAI-compatible server:
«⏳ Проверяю…» edited into the result, a one-line note when it falls back to the offline grader, and
no user name or id sent to the provider. (Its own module: its own fake Telegram for its own bot.)"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.conftest import BotProcess, InProcessBot
from tests.fake_openai import FakeOpenAI
from tests.fakebot import FakeTelegram

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def llm() -> Iterator[FakeOpenAI]:
    server = FakeOpenAI().start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def llm_bot(fake: FakeTelegram, llm: FakeOpenAI, tmp_path_factory: pytest.TempPathFactory) -> Iterator[BotProcess]:
    env = {
        "GRADER": "llm",
        "LLM_BASE_URL": llm.url,
        "LLM_API_KEY": str(llm.api_key),
        "LLM_MODEL": "test-model",
        "LLM_TIMEOUT": "2",
        "LOG_LEVEL": "DEBUG",
    }
    process = InProcessBot(fake, tmp_path_factory.mktemp("llm-bot"), env).start()
    yield process
    process.stop()
    assert str(llm.api_key) not in process.log(), "the LLM API key leaked into the log"


def test_llm_examiner_edits_the_checking_message_into_its_verdict(
    fake: FakeTelegram, llm_bot: BotProcess, llm: FakeOpenAI, uid: int
) -> None:
    user = fake.user(uid, first_name="Секретное Имя")
    user.send("/q 463")
    user.expect()
    llm.mode = "ok"
    user.send("Активации не храним, а пересчитываем на backward, платим лишним forward.")
    (status,) = user.expect()
    fake.wait_for(lambda: "Оценка: 82/100" in status.text, 10, what="the edited verdict")
    assert "Комментарий экзаменатора:" in status.text and "Хорошо объяснили суть" in status.text
    assert "Интервьюер спросил бы дальше: А сколько памяти" in status.text
    assert [label for label, _ in status.buttons()][:3] == ["Знал", "Частично", "Не знал"]
    assert llm_bot.rows("select coverage from answers where user_id = ?", uid) == [(0.82,)]
    sent = str(llm.requests[-1]["body"])
    assert str(uid) not in sent and "Секретное Имя" not in sent

    llm.mode = "500"
    user.send("Второй ответ: просто пересчитываем активации заново при обратном проходе.")
    (status,) = user.expect()
    fake.wait_for(lambda: "Оценка:" in status.text, 10, what="the fallback verdict")
    assert "LLM-экзаменатор недоступен (ошибка сервиса)" in status.text
    llm.mode = "ok"


def test_mock_interview_asks_one_follow_up_per_question_and_reports_it(
    fake: FakeTelegram, llm_bot: BotProcess, llm: FakeOpenAI, uid: int
) -> None:
    user = fake.user(uid)
    llm.mode = "ok"
    user.send("/interview 2")
    started, first = user.expect(2)
    assert "Мок-интервью" in started.text and "вопрос 1/2" in first.text
    user.send("Мой ответ на первый вопрос: объясняю суть своими словами, с примером и цифрами.")
    status, follow = user.expect(2)
    # the offline check finds nothing of the rubric in this answer: the lower grade counts, both shown
    fake.wait_for(lambda: "экзаменатор поставил 82/100" in status.text, 10, what="the verdict")
    assert "Интервьюер спросил бы дальше" not in status.text  # asked as its own message instead
    assert "Уточняющий вопрос интервьюера:" in follow.text and "А сколько памяти" in follow.text

    user.send("Примерно в корень из числа слоёв раз меньше памяти под активации.")
    noted, second = user.expect(2)
    assert noted.text == "Принято." and "вопрос 2/2" in second.text
    assert llm_bot.rows("select follow_up_answer from interview_items where follow_up is not null order by position")[
        -1
    ] == ("Примерно в корень из числа слоёв раз меньше памяти под активации.",)

    user.send("Ответ на второй вопрос, тоже по существу и с деталями реализации.")
    status, follow = user.expect(2)
    assert "Уточняющий вопрос" in follow.text
    user.send("/skip")
    skipped, report = user.expect(2)
    assert "пропущен" in skipped.text.lower()
    assert "Итоги интервью" in report.text
    assert report.text.count("❓ А сколько памяти") == 2
    assert "→ Примерно в корень" in report.text and "→ пропущен" in report.text
    # the skipped follow-up did not skip the answered question
    assert "    пропущен" not in report.text


def test_forget_leaves_no_row_with_my_id_or_my_words(
    fake: FakeTelegram, llm_bot: BotProcess, llm: FakeOpenAI, uid: int
) -> None:
    """After /forget, walk every table: no row holds the user's id, the answer's words, or the model's
    quote of them. Usage counters (a user id, a day, a count: no content) may stay, as documented."""
    import json

    from tests.fake_openai import default_reply

    marker = "фиолетовыйединорог"
    answer = f"Активации не храним, а пересчитываем на backward; {marker} платим лишним forward."

    def quoting(body: dict) -> dict:  # type: ignore[type-arg]
        sent = json.loads(body["messages"][-1]["content"])["candidate_answer"]
        return {**default_reply(body), "errors": [{"claim": sent[:120], "correction": "Не так."}]}

    llm.mode, llm.reply = "ok", quoting
    try:
        user = fake.user(uid)
        user.send("/q 463")
        user.expect()
        user.send(answer)
        (status,) = user.expect()
        fake.wait_for(lambda: "Оценка:" in status.text, 10, what="the verdict")
        assert llm_bot.rows("select count(*) from llm_grades where result like ?", f"%{marker}%") == [(1,)]
        user.send("/forget")
        (prompt,) = user.expect()
        user.press(prompt, prompt.button("Да, удалить всё"))
        fake.wait_for(lambda: any("Готово. Удалено" in m.text for m in fake.messages(uid)), 5)
    finally:
        llm.reply = default_reply
    kept = {"llm_usage", "stt_usage"}  # a user id, a day and a count
    tables = [name for (name,) in llm_bot.rows("select name from sqlite_master where type = 'table'")]
    assert "llm_grades" in tables and "disputes" in tables
    for table in tables:
        columns = [row[1] for row in llm_bot.rows(f"pragma table_info({table})")]
        for row in llm_bot.rows(f"select * from {table}"):
            text = json.dumps(row, ensure_ascii=False, default=str)
            assert marker not in text, (table, row)
            if table not in kept and table != "inbox":
                assert uid not in row, (table, dict(zip(columns, row, strict=True)))

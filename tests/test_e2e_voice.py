"""Voice answers as a user meets them, over the fake Bot API (getFile and the file download
included) and a fake OpenAI-compatible transcription server, with real OGG/Opus speech made by
espeak-ng + ffmpeg: «🎙 Расшифровываю…» edited into the transcript and its feedback, a text reply
that corrects the transcript, a group reply, a mock interview, every limit and failure with its own
line, and STT=off. (Its own module: its own fake Telegram for its own bots.)"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import BotProcess, InProcessBot
from tests.fake_stt import FakeSTT
from tests.fakebot import FakeTelegram
from tests.speech import speech

pytestmark = pytest.mark.e2e

ANSWER = "Активации не храним, а пересчитываем на обратном проходе, платим лишним прямым проходом."


@pytest.fixture(scope="module")
def stt() -> Iterator[FakeSTT]:
    server = FakeSTT().start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def audio_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("speech")


@pytest.fixture(scope="module")
def voice_bot(fake: FakeTelegram, stt: FakeSTT, tmp_path_factory: pytest.TempPathFactory) -> Iterator[BotProcess]:
    env = {
        "STT": "openai",
        "STT_BASE_URL": stt.url,
        "STT_API_KEY": str(stt.api_key),
        "STT_MODEL": "whisper-large-v3",
        "STT_TIMEOUT": "1.5",
        "STT_MAX_SECONDS": "60",
        "STT_DAILY_LIMIT": "4",
        "LOG_LEVEL": "DEBUG",
    }
    process = InProcessBot(fake, tmp_path_factory.mktemp("voice-bot"), env).start()
    yield process
    assert process.stop() == 0, process.log()
    assert str(stt.api_key) not in process.log(), "the STT API key leaked into the log"


@pytest.fixture(autouse=True)
def _reset(stt: FakeSTT) -> Iterator[None]:
    stt.mode, stt.transcript, stt.reply = "ok", ANSWER, None
    yield
    assert stt.errors == [], stt.errors


def test_a_voice_answer_in_a_private_chat_is_transcribed_graded_and_kept(
    fake: FakeTelegram, voice_bot: BotProcess, stt: FakeSTT, audio_dir: Path, uid: int
) -> None:
    user = fake.user(uid)
    user.send("/q 463")
    user.expect()
    audio, seconds = speech(ANSWER, audio_dir)
    voice_id = user.send_voice(audio, seconds)
    (status,) = user.expect()
    fake.wait_for(lambda: "Оценка:" in status.text, 10, what="the transcript and its feedback")
    assert status.text.startswith("🎙 Расшифровка:\n" + ANSWER)
    assert "<blockquote expandable>" in status.raw
    assert "Ответьте на это сообщение исправленным текстом" in status.text
    assert [label for label, _ in status.buttons()][:3] == ["Знал", "Частично", "Не знал"]
    calls = fake.calls_of("editMessageText")
    assert any(c["message_id"] == status.message_id for c in calls)
    # what the transcription service got: the very OGG/Opus file the user sent, the model, the language
    request = stt.requests[-1]["fields"]
    assert request["file"]["size"] == len(audio) and request["file"]["head"] == b"OggS"
    assert request["model"] == "whisper-large-v3" and request["language"] == "ru"
    assert any(path.startswith("voice/") for path in fake.downloads)
    rows = voice_bot.rows(
        "select text, message_id, voice_file_id, voice_seconds, stt_backend, coverage, transcript_message_id "
        "from answers where user_id = ?", uid,
    )  # fmt: skip
    assert len(rows) == 1
    text, message_id, file_id, stored_seconds, backend, coverage, shown_in = rows[0]
    assert (text, message_id, stored_seconds, backend) == (ANSWER, voice_id, seconds, "openai")
    assert file_id.startswith("AwACAgIAAxkBAAI") and coverage is not None and shown_in == status.message_id
    assert voice_bot.rows("select count from stt_usage where user_id = ?", uid) == [(1,)]

    # a text reply to the transcript corrects it: graded as the answer, the transcript is kept
    fixed = "Активации не храним, а пересчитываем их на backward: экономим память, платим лишним forward."
    user.send(fixed, reply_to=status.message_id)
    (feedback,) = user.expect()
    assert feedback.text.startswith("✏️ Исправленная расшифровка сохранена") and "Оценка:" in feedback.text
    rows = voice_bot.rows("select text, corrects_id, voice_file_id from answers where user_id = ? order by id", uid)
    assert [r[0] for r in rows] == [ANSWER, fixed]
    first_id = voice_bot.rows("select id from answers where user_id = ? order by id", uid)[0][0]
    assert rows[1][1] == first_id and rows[1][2] == file_id
    assert voice_bot.rows("select count from stt_usage where user_id = ?", uid) == [(1,)]  # nothing transcribed


def test_a_voice_without_a_question_asks_for_one(fake: FakeTelegram, voice_bot: BotProcess, uid: int) -> None:
    user = fake.user(uid)
    user.send_voice(b"OggS-not-needed", 3)
    (reply,) = user.expect()
    assert reply.text == "Чтобы ответить, сначала получите вопрос: /q или /topics."
    assert voice_bot.rows("select count(*) from answers where user_id = ?", uid) == [(0,)]


def test_with_stt_off_a_voice_answer_gets_one_line_and_the_question_stays(
    own_fake: FakeTelegram, audio_dir: Path, tmp_path: Path, uid: int
) -> None:
    bot = InProcessBot(own_fake, tmp_path).start()  # STT defaults to off
    try:
        user = own_fake.user(uid)
        user.send("/q 463")
        user.expect()
        audio, seconds = speech(ANSWER, audio_dir)
        user.send_voice(audio, seconds)
        (line,) = user.expect()
        assert line.text == ("🎙 Голосовые ответы на этом боте выключены — напишите ответ текстом, вопрос ждёт.")
        assert own_fake.calls_of("getFile") == [] and bot.rows("select count(*) from answers") == [(0,)]
        user.send(ANSWER)  # the question is still pending: the typed answer is taken
        (feedback,) = user.expect()
        assert "Оценка:" in feedback.text
        en = own_fake.user(uid + 1, language_code="en")
        en.send("/q 463")
        en.expect()
        en.send_voice(audio, seconds)
        (line,) = en.expect()
        assert line.text.startswith("🎙 Voice answers are off on this bot — please type your answer")
    finally:
        assert bot.stop() == 0

"""Voice answers as a user meets them, over the fake Bot API (getFile and the file download
included) and a fake OpenAI-compatible transcription server, with real OGG/Opus speech made by
espeak-ng + ffmpeg: «🎙 Расшифровываю…» edited into the transcript and its feedback, a text reply
that corrects the transcript, a group reply, a mock interview, every limit and failure with its own
line, and STT=off. (Its own module: its own fake Telegram for its own bots.)"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import BotProcess, InProcessBot, away_from_midnight
from tests.fake_stt import FakeSTT
from tests.fakebot import BOT_USERNAME, FakeTelegram
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
    user.send("/help")
    (help_text,) = user.expect()
    assert "🎙 Можно отвечать и голосовым (или кружочком) до 60 с" in help_text.text
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
        user.send("/help")
        (help_text,) = user.expect()
        assert "голосов" not in help_text.text  # voice answers are not offered where they are off
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


def test_a_voice_reply_in_a_group_is_transcribed_for_its_author(
    fake: FakeTelegram, voice_bot: BotProcess, stt: FakeSTT, audio_dir: Path
) -> None:
    chat = fake.group(-7301)
    anna = fake.user(7301, "Anna").in_chat(chat)
    boris = fake.user(7302, "Boris", language_code="en").in_chat(chat)
    anna.send(f"/q@{BOT_USERNAME} 463")
    (q,) = anna.expect()
    audio, seconds = speech(ANSWER, audio_dir)
    boris.send_voice(audio, seconds)  # not a reply: ordinary chatter, not for the bot
    assert boris.quiet() == []
    voice_id = boris.send_voice(audio, seconds, reply_to=q.message_id)
    (status,) = boris.expect()
    assert status.params["reply_parameters"]["message_id"] == voice_id  # quoted: whose answer it is
    fake.wait_for(lambda: "Оценка:" in status.text, 10, what="the transcript and its feedback")
    assert status.text.startswith("🎙 Расшифровка:\n" + ANSWER)
    assert stt.requests[-1]["fields"]["language"] == "ru"  # the group's language, not Boris's Telegram one
    assert voice_bot.rows("select user_id, text, stt_backend from answers where chat_id = ?", -7301) == [
        (7302, ANSWER, "openai")
    ]


def test_a_mock_interview_answered_by_voice_moves_on(
    fake: FakeTelegram, voice_bot: BotProcess, stt: FakeSTT, audio_dir: Path, uid: int
) -> None:
    user = fake.user(uid)
    user.send("/interview 2 lora")
    _intro, q1 = user.expect(2)
    assert "Интервью · вопрос 1/2" in q1.text
    spoken = (
        "LoRA замораживает исходные веса и обучает низкоранговую добавку B·A ранга r, "
        "так что обучаемых параметров r·(d+k) вместо d·k."
    )
    stt.transcript = spoken
    audio, seconds = speech(spoken, audio_dir)
    user.send_voice(audio, seconds, kind="video_note")
    status, q2 = user.expect(2)
    assert status.text.startswith("🎙 Расшифровка:\n" + spoken)
    assert "Интервью · вопрос 1/2" in status.text and "Оценка:" in status.text
    assert "Интервью · вопрос 2/2" in q2.text
    assert stt.requests[-1]["fields"]["file"]["filename"].endswith(".mp4")
    items = voice_bot.rows(
        "select i.coverage from interview_items i join interviews v on v.id = i.interview_id "
        "where v.user_id = ? order by i.position", uid,
    )  # fmt: skip
    assert items[0][0] is not None and items[1][0] is None
    stt.transcript = "Не знаю."
    user.send_voice(audio, seconds, kind="audio")
    _status, report = user.expect(2)
    assert "Итоги интервью · 2 вопроса" in report.text
    assert voice_bot.rows("select count(*) from answers where user_id = ? and voice_file_id is not null", uid) == [(2,)]


@pytest.mark.parametrize(
    ("mode", "line"),
    [
        ("500", "🎙 Не получилось расшифровать голосовое — сервис распознавания недоступен."),
        ("garbage", "🎙 Не получилось расшифровать голосовое — сервис распознавания недоступен."),
        ("slow", "🎙 Не успел расшифровать голосовое — сервис распознавания не ответил вовремя."),
        ("empty", "🎙 В записи не слышно слов — возможно, выключен микрофон."),
    ],
)
def test_a_failed_transcription_says_why_and_the_question_stays_pending(
    fake: FakeTelegram, voice_bot: BotProcess, stt: FakeSTT, audio_dir: Path, uid: int, mode: str, line: str
) -> None:
    user = fake.user(uid)
    user.send("/q 463")
    user.expect()
    stt.mode, stt.delay = mode, 3.0
    audio, seconds = speech(ANSWER, audio_dir)
    user.send_voice(audio, seconds)
    (status,) = user.expect()
    fake.wait_for(lambda: status.text != "🎙 Расшифровываю…", 10, what="the failure line")
    assert status.text.startswith(line) and status.text.endswith("вопрос ждёт.")
    assert voice_bot.rows("select count(*) from answers where user_id = ?", uid) == [(0,)]
    used = voice_bot.rows("select count from stt_usage where user_id = ?", uid)
    assert used == ([(1,)] if mode == "empty" else [(0,)])  # the service's failure is not counted
    stt.mode = "ok"
    user.send(ANSWER)  # the question is still pending
    (feedback,) = user.expect()
    assert "Оценка:" in feedback.text


def test_too_long_and_too_big_are_refused_before_downloading(
    fake: FakeTelegram, voice_bot: BotProcess, stt: FakeSTT, uid: int
) -> None:
    user = fake.user(uid, language_code="en")
    user.send("/q 463")
    user.expect()
    requests = len(stt.requests)
    user.send_voice(b"OggS long", 61)  # STT_MAX_SECONDS=60 for this bot
    (line,) = user.expect()
    assert line.text.startswith("🎙 The voice message is longer than 60 s (61 s), too long to transcribe.")
    user.send_voice(b"OggS big", 50, kind="audio", file_size=21 * 1024 * 1024)
    (line,) = user.expect()
    assert line.text.startswith("🎙 The file is over 20 MB, which Telegram does not let bots download.")
    # Telegram may not tell the size in the message; then getFile refuses and the user hears the same
    big = b"OggS" + bytes(20 * 1024 * 1024)
    user.send_voice(big, 50, file_size=0)
    (status,) = user.expect()
    fake.wait_for(lambda: status.text.startswith("🎙 The file is over 20 MB"), 10, what="the size line")
    assert len(stt.requests) == requests and voice_bot.rows("select count(*) from answers where user_id = ?", uid) == [
        (0,)
    ]


def test_the_daily_limit_is_kept_per_user_and_forget_does_not_reset_it(
    fake: FakeTelegram, voice_bot: BotProcess, stt: FakeSTT, audio_dir: Path, uid: int
) -> None:
    away_from_midnight()  # the limit is a UTC day's
    user = fake.user(uid)
    audio, seconds = speech(ANSWER, audio_dir)
    for _ in range(4):  # STT_DAILY_LIMIT=4 for this bot
        user.send("/q 463")
        user.expect()
        user.send_voice(audio, seconds)
        (status,) = user.expect()
        fake.wait_for(lambda status=status: "Оценка:" in status.text, 10, what="a transcript")  # type: ignore[misc]
    user.send("/q 463")
    user.expect()
    user.send_voice(audio, seconds)
    (line,) = user.expect()  # «🎙 Расшифровываю…», edited into the refusal
    limit = "🎙 На сегодня лимит расшифровок исчерпан (4 в день). Напишите ответ текстом"
    fake.wait_for(lambda: line.text.startswith(limit), 10, what="the daily limit line")
    # /export has the transcripts; /forget deletes them, but not the day's count
    user.send("/export")
    (doc,) = user.expect()
    md = doc.params["document"]["content"].decode("utf-8")
    assert md.count(f"> {ANSWER}") == 4 and md.count(f"🎙 голосом, {seconds} с (текст — расшифровка)") == 4
    user.send("/forget")
    (confirm,) = user.expect()
    user.press(confirm, confirm.buttons()[0][1])
    user.expect()
    assert voice_bot.rows("select count(*) from answers where user_id = ?", uid) == [(0,)]
    assert voice_bot.rows("select count from stt_usage where user_id = ?", uid) == [(4,)]
    user.send("/q 463")
    user.expect()
    user.send_voice(audio, seconds)
    (line,) = user.expect()
    fake.wait_for(lambda: line.text.startswith(limit), 10, what="the daily limit line after /forget")


class _Segment:
    def __init__(self, text: str) -> None:
        self.text = text


class SlowWhisper:
    """Stands in for faster-whisper's model: blocks its thread for ``seconds`` (as a real model
    computing for minutes would), then returns what it "heard"."""

    loads = 0

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.calls: list[dict[str, object]] = []

    def transcribe(self, audio: object, **options: object) -> tuple[list[_Segment], object]:
        self.calls.append({"audio": audio, **options})
        time.sleep(self.seconds)
        return [_Segment(" Активации не храним,"), _Segment(" а пересчитываем на обратном проходе. ")], None


def test_a_slow_local_transcription_does_not_hold_up_other_chats(
    own_fake: FakeTelegram, audio_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """STT=local runs faster-whisper in a worker thread: while one user's voice is transcribed
    (3 s of blocking work), another chat's /q is answered in under a second."""
    from bot.services import voice

    model = SlowWhisper(3.0)
    loads: list[tuple[str, str, str]] = []

    def load(name: str, device: str, compute_type: str) -> SlowWhisper:
        loads.append((name, device, compute_type))
        return model

    monkeypatch.setattr(voice, "load_whisper_model", load)
    env = {"STT": "local", "WHISPER_MODEL": str(tmp_path / "model"), "STT_TIMEOUT": "30"}
    bot = InProcessBot(own_fake, tmp_path, env).start()
    try:
        assert loads == []  # the model loads on the first voice answer, not at start
        anna, boris = own_fake.user(8101), own_fake.user(8102)
        anna.send("/q 463")
        anna.expect()
        audio, seconds = speech(ANSWER, audio_dir)
        anna.send_voice(audio, seconds)
        (status,) = anna.expect()
        own_fake.wait_for(lambda: len(model.calls) == 1, 5, what="the transcription to start")
        started = time.monotonic()
        boris.send("/q")
        boris.expect(timeout=5)
        assert time.monotonic() - started < 1.0, "another chat waited for the transcription"
        assert "Расшифровываю" in status.text  # still transcribing when Boris got his question
        own_fake.wait_for(lambda: "Оценка:" in status.text, 10, what="the transcript")
        assert status.text.startswith("🎙 Расшифровка:\nАктивации не храним, а пересчитываем на обратном проходе.")
        assert model.calls[0]["language"] == "ru" and model.calls[0]["vad_filter"] is True
        assert bot.rows("select stt_backend from answers where user_id = 8101") == [("local",)]
        anna.send("/q 463")
        anna.expect()
        model.seconds = 0.0
        anna.send_voice(audio, seconds)
        (second,) = anna.expect()
        own_fake.wait_for(lambda: "Оценка:" in second.text, 10, what="the second transcript")
        assert loads == [(str(tmp_path / "model"), "cpu", "int8")]  # loaded once
    finally:
        assert bot.stop() == 0


def test_real_faster_whisper_transcribes_real_speech(audio_dir: Path) -> None:
    """Runs where WHISPER_MODEL names a local faster-whisper model folder (no download in tests)."""
    import asyncio
    import importlib.util
    import os

    folder = os.environ.get("WHISPER_MODEL", "")
    if not folder or not Path(folder).is_dir() or importlib.util.find_spec("faster_whisper") is None:
        pytest.skip(
            "needs a local faster-whisper model: pip install -e '.[voice]' and set WHISPER_MODEL to a model "
            "folder (e.g. a download of Systran/faster-whisper-tiny), then run pytest tests/test_e2e_voice.py -k real"
        )
    from bot.services.voice import LocalWhisper

    audio, _seconds = speech("Градиентный спуск обновляет веса модели.", audio_dir)
    whisper = LocalWhisper(folder)
    try:
        text = asyncio.run(whisper.transcribe(audio, filename="voice.ogg", mime="audio/ogg", language="ru"))
    finally:
        whisper.close()
    assert any(word in text.lower() for word in ("градиент", "спуск", "веса", "модел")), text


def test_with_the_llm_examiner_the_transcript_stays_while_it_checks(
    own_fake: FakeTelegram, stt: FakeSTT, audio_dir: Path, tmp_path: Path, uid: int
) -> None:
    from tests.fake_openai import FakeOpenAI

    llm = FakeOpenAI().start()
    env = {
        "STT": "openai", "STT_BASE_URL": stt.url, "STT_API_KEY": str(stt.api_key),
        "GRADER": "llm", "LLM_BASE_URL": llm.url, "LLM_API_KEY": str(llm.api_key), "LLM_MODEL": "m",
    }  # fmt: skip
    bot = InProcessBot(own_fake, tmp_path, env).start()
    try:
        llm.mode, llm.delay = "slow", 1.0
        user = own_fake.user(uid)
        user.send("/q 463")
        user.expect()
        audio, seconds = speech(ANSWER, audio_dir)
        user.send_voice(audio, seconds)
        (status,) = user.expect()
        own_fake.wait_for(lambda: "⏳ Проверяю…" in status.text, 10, what="the transcript while checking")
        assert status.text.startswith("🎙 Расшифровка:\n" + ANSWER)
        own_fake.wait_for(lambda: "Оценка: 82/100" in status.text, 10, what="the examiner's verdict")
        assert status.text.startswith("🎙 Расшифровка:\n" + ANSWER) and "Комментарий экзаменатора:" in status.text
        assert ANSWER in str(llm.requests[-1]["body"])  # the transcript is what the examiner grades
        assert bot.rows("select coverage, stt_backend from answers where user_id = ?", uid) == [(0.82, "openai")]
    finally:
        assert bot.stop() == 0
        llm.stop()

"""The voice answer use case without Telegram: the OpenAI-compatible backend against the fake
transcription server, the daily count, the limits, silence."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from bot.db.engine import Database
from bot.services.voice import (
    TELEGRAM_DOWNLOAD_LIMIT,
    Audio,
    OpenAITranscriber,
    Refusal,
    SttError,
    VoiceAnswers,
    is_silence,
)
from tests.fake_stt import FakeSTT
from tests.speech import speech

NOW = datetime(2026, 12, 2, 10, 0, tzinfo=UTC)


@pytest.fixture(scope="module")
def stt() -> Iterator[FakeSTT]:
    server = FakeSTT().start()
    yield server
    server.stop()


@pytest.fixture(autouse=True)
def _reset(stt: FakeSTT) -> Iterator[None]:
    stt.mode, stt.transcript = "ok", "Пересчитываем активации."
    yield
    assert stt.errors == [], stt.errors


def test_the_openai_backend_posts_multipart_audio_model_and_language(stt: FakeSTT, tmp_path: Path) -> None:
    audio, _ = speech("Пересчитываем активации.", tmp_path)
    backend = OpenAITranscriber(stt.url, "whisper-1", str(stt.api_key), timeout=5)
    text = asyncio.run(backend.transcribe(audio, filename="voice.ogg", mime="audio/ogg", language="en"))
    assert text == "Пересчитываем активации."
    fields = stt.requests[-1]["fields"]
    assert fields["file"] == {"filename": "voice.ogg", "size": len(audio), "head": b"OggS"}
    assert (fields["model"], fields["language"], fields["response_format"]) == ("whisper-1", "en", "json")


@pytest.mark.parametrize(("mode", "reason"), [("500", Refusal.FAILED), ("garbage", Refusal.FAILED),
                                              ("slow", Refusal.TIMEOUT)])  # fmt: skip
def test_the_openai_backend_failures(stt: FakeSTT, mode: str, reason: Refusal) -> None:
    stt.mode, stt.delay = mode, 1.5
    backend = OpenAITranscriber(stt.url, "whisper-1", str(stt.api_key), timeout=0.5)
    with pytest.raises(SttError) as info:
        asyncio.run(backend.transcribe(b"RIFF....", filename="a.wav", mime="audio/wav", language="ru"))
    assert info.value.reason == reason


def test_a_wrong_key_is_a_failure_not_a_crash(stt: FakeSTT) -> None:
    backend = OpenAITranscriber(stt.url, "whisper-1", "sk-wrong", timeout=5)
    with pytest.raises(SttError) as info:
        asyncio.run(backend.transcribe(b"RIFF....", filename="a.wav", mime="audio/wav", language="ru"))
    assert info.value.reason == Refusal.FAILED
    stt.errors.clear()


@pytest.mark.parametrize(
    ("text", "silent"),
    [("", True), ("  ...  ", True), ("Продолжение следует...", True), ("Thank you.", True),
     ("Да.", False), ("LoRA: низкоранговая добавка", False)],
)  # fmt: skip
def test_silence(text: str, silent: bool) -> None:
    assert is_silence(text) is silent


class Scripted:
    name = "scripted"

    def __init__(self, text: str = "Ответ голосом.", delay: float = 0.0, error: SttError | None = None) -> None:
        self.text, self.delay, self.error = text, delay, error
        self.calls = 0

    async def transcribe(self, audio: bytes, *, filename: str, mime: str, language: str) -> str:
        self.calls += 1
        await asyncio.sleep(self.delay)
        if self.error is not None:
            raise self.error
        return self.text

    def close(self) -> None:
        pass


def _run(voice: VoiceAnswers, audio: Audio, data: bytes = b"OggS", user_id: int = 1) -> str:
    async def download() -> bytes:
        return data

    async def go() -> str:
        try:
            heard = await voice.transcribe(audio, download, user_id=user_id, language="ru", now=NOW)
            return heard.text
        except SttError as exc:
            return f"refused: {exc.reason}"

    return asyncio.run(go())


def _used(db: Database, user_id: int = 1) -> int:
    from bot.db import voice as store

    async def go() -> int:
        async with db.read() as session:
            return await store.used(session, user_id, NOW.date().isoformat())

    return asyncio.run(go())


@pytest.fixture
def db(tmp_path: Path) -> Iterator[Database]:
    database = Database(f"sqlite:///{tmp_path / 'v.db'}")
    asyncio.run(database.migrate())
    yield database
    asyncio.run(database.close())


def test_limits_and_the_daily_count(db: Database) -> None:
    backend = Scripted()
    voice = VoiceAnswers(db, backend, max_seconds=60, daily_limit=3, timeout=0.3)
    short = Audio("f1", 10, 1000)
    assert voice.refusal(Audio("f", 61, 10)) == Refusal.TOO_LONG
    assert voice.refusal(Audio("f", 5, TELEGRAM_DOWNLOAD_LIMIT + 1)) == Refusal.TOO_BIG
    assert VoiceAnswers(db, None).refusal(short) == Refusal.OFF
    assert _run(voice, short) == "Ответ голосом."
    backend.delay = 1.0  # over STT_TIMEOUT: not counted
    assert _run(voice, short) == "refused: timeout" and _used(db) == 1
    backend.delay, backend.error = 0.0, SttError(Refusal.FAILED)
    assert _run(voice, short) == "refused: failed" and _used(db) == 1
    backend.error = None
    # the user's own file: bigger than it said, counted (a failure on the service's side is not)
    assert _run(voice, short, data=b"OggS" + bytes(TELEGRAM_DOWNLOAD_LIMIT)) == "refused: too_big" and _used(db) == 2
    backend.text = " … "
    assert _run(voice, short) == "refused: empty" and _used(db) == 3  # silence was transcribed: counted
    calls = backend.calls
    assert _run(voice, short) == "refused: daily_limit" and backend.calls == calls
    assert _run(voice, short, user_id=2) == "refused: empty"  # per user


def _ogg(seconds: float, pre_skip: int = 312) -> bytes:
    """The bytes of an Ogg Opus file that the duration check reads: its head and a last page whose
    granule position says ``seconds`` (48 kHz)."""
    head = b"OggS\x00\x02" + bytes(8) + bytes(12) + b"OpusHead\x01\x01" + pre_skip.to_bytes(2, "little") + bytes(20)
    last = b"OggS\x00\x04" + (int(seconds * 48_000) + pre_skip).to_bytes(8, "little") + bytes(20)
    return head + bytes(1000) + last


def test_the_file_itself_is_measured_and_garbage_is_counted(db: Database) -> None:
    """A voice that says it lasts 1 s (or −5 s) but holds 200 s is refused as too long; a file that is
    not audio is refused without being uploaded; both count toward the daily limit."""
    from bot.services.voice import looks_like_audio, ogg_seconds

    assert ogg_seconds(_ogg(200.0)) == pytest.approx(200.0) and ogg_seconds(b"OggS") is None
    assert looks_like_audio(_ogg(1)) and not looks_like_audio(bytes(1000)) and not looks_like_audio(b"%PDF-1.7")
    backend = Scripted()
    voice = VoiceAnswers(db, backend, max_seconds=60, daily_limit=5, timeout=1)
    assert _run(voice, Audio("f", 1, 10_000), data=_ogg(200.0)) == "refused: too_long"
    assert _run(voice, Audio("f", -5, 10_000), data=_ogg(200.0)) == "refused: too_long"
    assert _run(voice, Audio("f", 3, 10_000), data=b"\x00garbage" * 1000) == "refused: unreadable"
    assert backend.calls == 0 and _used(db) == 3  # nothing was sent to the service; all three counted
    assert _run(voice, Audio("f", 3, 10_000), data=_ogg(3.0)) == "Ответ голосом." and backend.calls == 1
    backend.error = SttError(Refusal.UNREADABLE, "HTTP 400")  # the service cannot decode it: the user's file
    assert _run(voice, Audio("f", 3, 10_000), data=_ogg(3.0)) == "refused: unreadable" and _used(db) == 5


def test_a_transcription_cut_off_at_shutdown_is_not_counted(db: Database) -> None:
    voice = VoiceAnswers(db, Scripted(delay=5.0), daily_limit=5, timeout=10)

    async def download() -> bytes:
        return b"OggS"

    async def go() -> None:
        task = asyncio.create_task(voice.transcribe(Audio("f", 3, 10), download, user_id=1, language="ru", now=NOW))
        await asyncio.sleep(0.2)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(go())
    assert _used(db) == 0  # the update is handled again after the restart and counted then

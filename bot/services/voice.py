"""Voice answers: a voice message, video note or audio file transcribed into the text of an answer.

``VoiceAnswers`` is the use case: ``refusal`` says, before anything is downloaded, why a voice
cannot be taken (voice answers off, longer than STT_MAX_SECONDS, over Telegram's 20 MB download
limit); ``transcribe`` counts the user's daily transcription (STT_DAILY_LIMIT), downloads the audio
through the caller's function, transcribes it within STT_TIMEOUT and returns the text, or raises
:class:`SttError` with the reason the user is told. The transcript is then answered like a typed
answer (``services/answers.submit``).

Backends (``Transcriber``): :class:`OpenAITranscriber` posts the audio to an OpenAI-compatible
``POST {STT_BASE_URL}/audio/transcriptions`` (OpenAI, Groq, faster-whisper-server, the whisper.cpp
server); :class:`LocalWhisper` runs faster-whisper (the optional extra ``voice``) in one worker
thread of its own: the model is loaded there on first use, once, and the event loop never waits for
it (CTranslate2 releases the GIL while it computes).
"""

from __future__ import annotations

import asyncio
import io
import logging
import re
import shutil
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any, Final, Protocol

import httpx

from bot.config import Settings
from bot.db import voice as voice_store
from bot.db.engine import Database

log = logging.getLogger(__name__)

TELEGRAM_DOWNLOAD_LIMIT = 20 * 1024 * 1024  # bytes: getFile refuses bigger files


class Refusal(StrEnum):
    """Why a voice answer was not transcribed (each has a line in locales: voice.<reason>)."""

    OFF = "off"
    TOO_LONG = "too_long"
    TOO_BIG = "too_big"
    DAILY_LIMIT = "daily_limit"
    TIMEOUT = "timeout"
    FAILED = "failed"
    EMPTY = "empty"
    UNREADABLE = "unreadable"  # the file is not audio the service can read


# Failures caused by the user's own file: they count toward STT_DAILY_LIMIT (a failure on the service's
# side does not), so a flood of garbage files is limited like real answers.
USERS_FAULT: Final = frozenset({Refusal.TOO_BIG, Refusal.TOO_LONG, Refusal.EMPTY, Refusal.UNREADABLE})


class SttError(Exception):
    def __init__(self, reason: Refusal, detail: str = "", *, seconds: float | None = None) -> None:
        super().__init__(f"{reason}: {detail}" if detail else str(reason))
        self.reason = reason
        self.seconds = seconds  # the duration measured in the audio (TOO_LONG)


@dataclass(frozen=True, slots=True)
class Audio:
    """What the message says about its audio (before it is downloaded)."""

    file_id: str
    seconds: int  # the duration Telegram gives
    size: int | None  # bytes, when Telegram tells
    filename: str = "voice.ogg"
    mime: str = "audio/ogg"


@dataclass(frozen=True, slots=True)
class Heard:
    text: str
    backend: str  # the Transcriber's name: openai, local


class Transcriber(Protocol):
    name: str

    async def transcribe(self, audio: bytes, *, filename: str, mime: str, language: str) -> str:
        """The text spoken in ``audio``; ``language`` is a hint (ISO 639-1, e.g. ru)."""
        ...

    def close(self) -> None: ...


class OpenAITranscriber:
    """``POST {base}/audio/transcriptions``, multipart: file, model, language, response_format=json."""

    name = "openai"

    def __init__(self, base_url: str, model: str, api_key: str | None, timeout: float) -> None:
        self.url = f"{base_url.rstrip('/')}/audio/transcriptions"
        self.model = model
        self.api_key = api_key
        self.timeout = timeout

    async def transcribe(self, audio: bytes, *, filename: str, mime: str, language: str) -> str:
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        data = {"model": self.model, "language": language, "response_format": "json"}
        try:
            async with httpx.AsyncClient(timeout=self.timeout) as client:
                response = await client.post(
                    self.url, data=data, files={"file": (filename, audio, mime)}, headers=headers
                )
        except httpx.TimeoutException:
            raise SttError(Refusal.TIMEOUT) from None
        except httpx.HTTPError as exc:
            raise SttError(Refusal.FAILED, type(exc).__name__) from None
        if response.status_code in (400, 413, 415, 422):  # the service says the file is not audio it reads
            raise SttError(Refusal.UNREADABLE, f"HTTP {response.status_code}")
        if response.status_code >= 400:
            raise SttError(Refusal.FAILED, f"HTTP {response.status_code}")
        try:
            text = response.json()["text"]
        except (ValueError, KeyError, TypeError):
            raise SttError(Refusal.FAILED, "not a transcription") from None
        if not isinstance(text, str):
            raise SttError(Refusal.FAILED, "no text")
        return text

    def close(self) -> None:
        return None


def load_whisper_model(name: str, device: str, compute_type: str) -> Any:
    """faster-whisper's model (a name is fetched once into the Hugging Face cache; a folder is used
    as it is). Called in the worker thread, on the first voice answer."""
    import importlib

    faster_whisper = importlib.import_module("faster_whisper")  # the extra: pip install 'interview-bot[voice]'
    return faster_whisper.WhisperModel(name, device=device, compute_type=compute_type)


class LocalWhisper:
    """faster-whisper in this process, in one worker thread: one transcription at a time, the others
    wait their turn; the event loop keeps serving every chat meanwhile."""

    name = "local"

    def __init__(self, model: str, *, device: str = "cpu", compute_type: str = "int8") -> None:
        self.model_name, self.device, self.compute_type = model, device, compute_type
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="whisper")
        self._model: Any = None

    def _run(self, audio: bytes, language: str) -> str:
        if self._model is None:  # only this one worker thread touches the model
            log.info("loading the faster-whisper model %s (%s, %s)", self.model_name, self.device, self.compute_type)
            self._model = load_whisper_model(self.model_name, self.device, self.compute_type)
        segments, _info = self._model.transcribe(io.BytesIO(audio), language=language, vad_filter=True)
        return " ".join(segment.text.strip() for segment in segments)

    async def transcribe(self, audio: bytes, *, filename: str, mime: str, language: str) -> str:
        loop = asyncio.get_running_loop()
        try:
            return await loop.run_in_executor(self._executor, self._run, audio, language)
        except SttError:
            raise
        except Exception as exc:  # a broken file, a model that does not load: the user is told
            log.warning("faster-whisper failed: %s", exc)
            raise SttError(Refusal.FAILED, type(exc).__name__) from None

    def close(self) -> None:
        self._executor.shutdown(wait=False, cancel_futures=True)


# What Whisper tends to "hear" in silence (its training subtitles), not an answer.
_SILENCE = re.compile(
    r"^(продолжение следует|субтитры (сделал|создавал|делал).*|редактор субтитров.*|спасибо за просмотр|"
    r"thank you( for watching)?|thanks for watching|you|bye)$"
)


def is_silence(text: str) -> bool:
    """An empty transcript, punctuation only, or what Whisper makes up for silence."""
    words = re.sub(r"[^\w\s]", " ", text.casefold()).split()
    if sum(len(w) for w in words) < 2:
        return True
    return bool(_SILENCE.match(" ".join(words)))


class VoiceAnswers:
    """The limits and the daily count around a :class:`Transcriber` (None: voice answers are off)."""

    def __init__(
        self,
        db: Database,
        transcriber: Transcriber | None,
        *,
        max_seconds: int = 180,
        daily_limit: int = 30,
        timeout: float = 120.0,
    ) -> None:
        self.db = db
        self.transcriber = transcriber
        self.max_seconds = max_seconds
        self.daily_limit = daily_limit
        self.timeout = timeout

    @property
    def enabled(self) -> bool:
        return self.transcriber is not None

    def refusal(self, audio: Audio) -> Refusal | None:
        """Why this voice cannot be transcribed, known before it is downloaded (None: go on)."""
        if self.transcriber is None:
            return Refusal.OFF
        if audio.seconds > self.max_seconds:
            return Refusal.TOO_LONG
        if audio.size is not None and audio.size > TELEGRAM_DOWNLOAD_LIMIT:
            return Refusal.TOO_BIG
        return None

    async def transcribe(
        self,
        audio: Audio,
        download: Callable[[], Awaitable[bytes]],
        *,
        user_id: int,
        language: str,
        now: datetime,
    ) -> Heard:
        """Count it, download, transcribe. Raises :class:`SttError`; a failure on the service's side
        (download, timeout, error) is not counted against the user's daily limit."""
        refusal = self.refusal(audio)
        if refusal is not None:
            raise SttError(refusal)
        assert self.transcriber is not None
        day = now.date().isoformat()
        async with self.db.write() as session:
            if not await voice_store.take_quota(session, user_id, day, self.daily_limit):
                raise SttError(Refusal.DAILY_LIMIT)
        try:
            data = await download()
            await self._check_file(data)
            text = await asyncio.wait_for(
                self.transcriber.transcribe(data, filename=audio.filename, mime=audio.mime, language=language),
                self.timeout,
            )
        except (SttError, TimeoutError) as exc:
            reason = exc.reason if isinstance(exc, SttError) else Refusal.TIMEOUT
            log.info("voice answer of %.0f s not transcribed: %s", audio.seconds, reason)
            if reason not in USERS_FAULT:
                await self._give_back(user_id, day)
            raise SttError(reason, seconds=exc.seconds if isinstance(exc, SttError) else None) from None
        except asyncio.CancelledError:  # cut off at shutdown: handled again from the inbox after the restart
            await self._give_back(user_id, day)
            raise
        text = " ".join(text.split())
        if is_silence(text):
            raise SttError(Refusal.EMPTY)
        return Heard(text, self.transcriber.name)

    async def _check_file(self, data: bytes) -> None:
        """The file itself, not what the client said of it: its size, that it is audio, and its
        duration read from the audio (the Ogg container's last granule, else ffprobe where present)."""
        if len(data) > TELEGRAM_DOWNLOAD_LIMIT:
            raise SttError(Refusal.TOO_BIG)
        if not looks_like_audio(data):
            raise SttError(Refusal.UNREADABLE, "not an audio file")
        seconds = await measured_seconds(data)
        if seconds is not None and seconds > self.max_seconds:
            raise SttError(Refusal.TOO_LONG, seconds=seconds)

    async def _give_back(self, user_id: int, day: str) -> None:
        async with self.db.write() as session:
            await voice_store.give_back(session, user_id, day)

    def close(self) -> None:
        if self.transcriber is not None:
            self.transcriber.close()


# What audio a file starts with: Ogg, MP3 with ID3, WAV, FLAC, WebM/Matroska; MP4 (video notes, m4a)
# has "ftyp" at byte 4; a bare MP3 or AAC stream starts with a frame sync.
_AUDIO_MAGIC: Final = (b"OggS", b"ID3", b"RIFF", b"fLaC", b"\x1aE\xdf\xa3")


def looks_like_audio(data: bytes) -> bool:
    if data.startswith(_AUDIO_MAGIC) or data[4:8] == b"ftyp":
        return True
    return len(data) > 1 and data[0] == 0xFF and data[1] & 0xE0 == 0xE0


def ogg_seconds(data: bytes) -> float | None:
    """The duration of an Ogg Opus or Vorbis file from its last page's granule position."""
    if not data.startswith(b"OggS"):
        return None
    last = data.rfind(b"OggS")
    if last < 0 or len(data) < last + 14:
        return None
    granule = int.from_bytes(data[last + 6 : last + 14], "little", signed=True)
    head = data[:512]
    if (at := head.find(b"OpusHead")) >= 0 and len(head) >= at + 12:
        pre_skip = int.from_bytes(head[at + 10 : at + 12], "little")
        return max(0.0, (granule - pre_skip) / 48_000) if granule >= 0 else None
    if (at := head.find(b"\x01vorbis")) >= 0 and len(head) >= at + 16:
        rate = int.from_bytes(head[at + 12 : at + 16], "little")
        return granule / rate if rate > 0 and granule >= 0 else None
    return None


async def measured_seconds(data: bytes) -> float | None:
    """The audio's own duration: Ogg read directly, other containers by ffprobe where it is installed
    (None when it cannot be told: the client's claim stands, the service's limits apply)."""
    seconds = ogg_seconds(data)
    if seconds is not None or data.startswith(b"OggS"):
        return seconds
    ffprobe = shutil.which("ffprobe")
    if ffprobe is None:
        return None
    try:
        process = await asyncio.create_subprocess_exec(
            ffprobe, "-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0", "-i", "pipe:0",
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL,
        )  # fmt: skip
        out, _ = await asyncio.wait_for(process.communicate(data), 20)
        return float(out.decode().strip())
    except (OSError, ValueError, TimeoutError):
        return None


def build_transcriber(settings: Settings) -> Transcriber | None:
    settings.require_stt(installed=False)  # `run` checked that faster-whisper is there
    if settings.stt == "openai":
        key = settings.stt_api_key.get_secret_value() if settings.stt_api_key else None
        return OpenAITranscriber(str(settings.stt_base_url), settings.stt_model, key or None, settings.stt_timeout)
    if settings.stt == "local":
        return LocalWhisper(
            str(settings.whisper_model), device=settings.whisper_device, compute_type=settings.whisper_compute_type
        )
    return None


def build(settings: Settings, db: Database) -> VoiceAnswers:
    return VoiceAnswers(
        db,
        build_transcriber(settings),
        max_seconds=settings.stt_max_seconds,
        daily_limit=settings.stt_daily_limit,
        timeout=settings.stt_timeout,
    )

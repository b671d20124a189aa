"""Real speech for the voice tests: espeak-ng says a text, ffmpeg encodes it as OGG/Opus (what
Telegram voice messages are). Where either is missing the tests are skipped, unless REQUIRE_SPEECH
is set (CI sets it, and .ci/run installs both)."""

from __future__ import annotations

import os
import shutil
import subprocess
from functools import cache
from pathlib import Path

import pytest


def speech_tools_missing() -> str | None:
    missing = [tool for tool in ("espeak-ng", "ffmpeg") if shutil.which(tool) is None]
    return ", ".join(missing) or None


@cache
def _speech(text: str, voice: str, folder: str) -> tuple[bytes, float]:
    out = Path(folder)
    wav, ogg = out / f"s{abs(hash((text, voice)))}.wav", out / f"s{abs(hash((text, voice)))}.ogg"
    subprocess.run(["espeak-ng", "-v", voice, "-s", "150", "-w", str(wav), text], check=True, capture_output=True)
    subprocess.run(
        ["ffmpeg", "-y", "-loglevel", "error", "-i", str(wav), "-ac", "1", "-ar", "48000", "-c:a", "libopus",
         "-b:a", "24k", "-application", "voip", str(ogg)],
        check=True, capture_output=True,
    )  # fmt: skip
    probe = subprocess.run(
        ["ffprobe", "-v", "error", "-show_entries", "format=duration", "-of", "default=nw=1:nk=1", str(ogg)],
        check=True, capture_output=True, text=True,
    )  # fmt: skip
    return ogg.read_bytes(), float(probe.stdout.strip())


def speech(text: str, folder: Path, voice: str = "ru") -> tuple[bytes, int]:
    """OGG/Opus bytes of ``text`` spoken, and their duration in whole seconds (at least 1)."""
    missing = speech_tools_missing()
    if missing:
        if os.environ.get("REQUIRE_SPEECH"):
            raise AssertionError(f"REQUIRE_SPEECH is set but {missing} is not installed")
        pytest.skip(f"{missing} not installed (apt-get install espeak-ng ffmpeg) to make speech")
    data, seconds = _speech(text, voice, str(folder))
    return data, max(1, round(seconds))

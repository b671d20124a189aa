"""Drive the real bot against the fake Bot API server and print what a user sees.

    python scripts/try_bot.py "/start" "/q 463" "my answer" "@press:Показать ответ" ...

Each argument is a message to send; "@press:<label>" presses a button on the last bot message,
"@reply:<text>" replies to the last question, "@voice:<text>" says the text (espeak-ng + ffmpeg,
OGG/Opus) and sends it as a voice message, "@fix:<text>" replies to the last transcript with a
correction. Used to try features as a new user would.

Voice answers use the STT settings of the environment (e.g. STT=openai STT_BASE_URL=... or
STT=local WHISPER_MODEL=...); ``--stt=fake`` starts the tests' fake transcription server instead,
which "hears" exactly the text of the @voice step (the audio it gets is still real speech).
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.conftest import BotProcess  # noqa: E402
from tests.fake_stt import FakeSTT  # noqa: E402
from tests.fakebot import FakeTelegram  # noqa: E402
from tests.speech import speech  # noqa: E402

BUSY = ("Расшифровываю", "Проверяю", "Transcribing", "Checking")


def main() -> None:
    lang = "ru"
    args = sys.argv[1:]
    stt: FakeSTT | None = None
    env: dict[str, str] = {}
    while args and args[0].startswith("--"):
        option, _, value = args.pop(0).partition("=")
        if option == "--lang":
            lang = value
        elif option == "--stt" and value == "fake":
            stt = FakeSTT().start()
            env = {"STT": "openai", "STT_BASE_URL": stt.url, "STT_API_KEY": str(stt.api_key), "STT_MODEL": "whisper-1"}
    fake = FakeTelegram().start()
    workdir = Path(tempfile.mkdtemp())
    bot = BotProcess(fake, workdir, env).start()
    user = fake.user(4242, "Анна" if lang == "ru" else "Anna", language_code=lang)
    last_question = None
    last_transcript = None
    try:
        for step in args:
            before = len(fake.messages(user.chat.id))
            if step.startswith("@press:"):
                label = step.split(":", 1)[1]
                target = next(
                    m for m in reversed(fake.messages(user.chat.id)) if any(label in b for b, _ in m.buttons())
                )
                print(f"\n>>> [press «{label}»]")
                user.press(target, target.button(label))
            elif step.startswith("@reply:"):
                print(f"\n>>> [reply] {step[7:]}")
                user.send(step[7:], reply_to=last_question)
            elif step.startswith("@voice:"):
                said = step[7:]
                audio, seconds = speech(said, workdir, voice=lang)
                if stt is not None:
                    stt.transcript = said
                print(f"\n>>> [voice, {seconds} s, {len(audio)} bytes of OGG/Opus] «{said}»")
                user.send_voice(audio, seconds)
            elif step.startswith("@fix:"):
                print(f"\n>>> [reply to the transcript] {step[5:]}")
                user.send(step[5:], reply_to=last_transcript)
            else:
                print(f"\n>>> {step}")
                user.send(step)
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and len(fake.messages(user.chat.id)) == before:
                time.sleep(0.1)  # the first reply (a loaded machine may take a while)
            time.sleep(1.2)
            while time.monotonic() < deadline and any(
                any(word in m.text for word in BUSY) for m in fake.messages(user.chat.id)[before:]
            ):
                time.sleep(0.2)
            for m in fake.messages(user.chat.id)[before:]:
                print("-" * 60)
                print(m.text)
                if m.buttons():
                    print("  buttons:", " | ".join(label for label, _ in m.buttons()))
                if m.reply_markup and "keyboard" in m.reply_markup:
                    print("  menu:", [[b["text"] for b in row] for row in m.reply_markup["keyboard"]])
                if any("Показать ответ" in b or "Show answer" in b for b, _ in m.buttons()):
                    last_question = m.message_id
                if m.text.startswith(("🎙 Расшифровка", "🎙 Transcript")):
                    last_transcript = m.message_id
    finally:
        bot.stop()
        fake.stop()
        if stt is not None:
            stt.stop()
        log = bot.log()
        if "Traceback" in log or "ERROR" in log:
            print("\n=== bot log ===\n" + log[-3000:])


if __name__ == "__main__":
    main()

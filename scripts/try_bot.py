"""Drive the real bot against the fake Bot API server and print what a user sees.

    python scripts/try_bot.py "/start" "/q 463" "my answer" "@press:Показать ответ" ...

Each argument is a message to send; "@press:<label>" presses a button on the last bot message,
"@reply:<text>" replies to the last question. Used to try features as a new user would.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.conftest import BotProcess  # noqa: E402
from tests.fakebot import FakeTelegram  # noqa: E402


def main() -> None:
    lang = "ru"
    args = sys.argv[1:]
    if args and args[0].startswith("--lang="):
        lang = args.pop(0).split("=", 1)[1]
    fake = FakeTelegram().start()
    workdir = Path(tempfile.mkdtemp())
    bot = BotProcess(fake, workdir).start()
    user = fake.user(4242, "Анна" if lang == "ru" else "Anna", language_code=lang)
    last_question = None
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
            else:
                print(f"\n>>> {step}")
                user.send(step)
            time.sleep(1.2)
            for m in fake.messages(user.chat.id)[before:]:
                print("-" * 60)
                print(m.text)
                if m.buttons():
                    print("  buttons:", " | ".join(label for label, _ in m.buttons()))
                if m.reply_markup and "keyboard" in m.reply_markup:
                    print("  menu:", [[b["text"] for b in row] for row in m.reply_markup["keyboard"]])
                if any("Показать ответ" in b or "Show answer" in b for b, _ in m.buttons()):
                    last_question = m.message_id
    finally:
        bot.stop()
        fake.stop()
        log = bot.log()
        if "Traceback" in log or "ERROR" in log:
            print("\n=== bot log ===\n" + log[-3000:])


if __name__ == "__main__":
    main()

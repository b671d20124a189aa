#!/usr/bin/env python3
"""Play the bot from a terminal through the demo's JSON API and print what a person sees.

    scripts/try_bot.py "/start" "/q 463" "my answer" "@press:Показать ответ"
    scripts/try_bot.py --lang en "/quiz" "@vote:1"
    scripts/try_bot.py --url http://127.0.0.1:8080 "/stats"     # a demo that is already running

Each step is a message to send, or: "@press:<label>" presses the button whose text contains <label>
on the latest message that has one (its notice is printed); "@vote:<n>" votes for option n (from 0)
in the latest poll. Without --url it starts `python -m bot demo` on a free port and stops it at the
end. Only the standard library is used.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

BUSY = ("Расшифровываю", "Проверяю", "Transcribing", "Checking")


class Demo:
    def __init__(self, url: str) -> None:
        if not url.startswith(("http://", "https://")):
            raise SystemExit(f"try_bot: --url: expected http://host:port, not {url!r}")
        self.url = url.rstrip("/")
        self.cursor = 0
        self.seen: dict[int, dict[str, Any]] = {}

    def call(self, path: str, body: dict[str, Any] | None = None, timeout: float = 70) -> dict[str, Any]:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(  # noqa: S310 - the scheme is checked in __init__
            f"{self.url}/demo/api/{path}", data=data, headers={"Content-Type": "application/json"}
        )
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310
                result: dict[str, Any] = json.load(response)
        except urllib.error.HTTPError as exc:
            raise SystemExit(f"try_bot: {path}: {json.load(exc).get('error', exc)}") from None
        return result

    def news(self, wait: float) -> list[dict[str, Any]]:
        answer = self.call(f"messages?chat=private&after={self.cursor}&wait={wait}")
        self.cursor = answer["next"]
        for message in answer["messages"]:
            self.seen[message["id"]] = message
        return [m for m in answer["messages"] if m["from"] == "bot"]

    def settle(self) -> list[dict[str, Any]]:
        """The bot's messages after a step: the first within a minute, then until it is quiet."""
        got = self.news(60)
        while True:
            more = self.news(1.5)
            got += more
            if not more and not any(word in m["text"] for m in got for word in BUSY):
                break
        latest: dict[int, dict[str, Any]] = {m["id"]: m for m in got}  # an edit replaces the message
        return list(latest.values())

    def latest(self, has: str) -> dict[str, Any]:
        for message in sorted(self.seen.values(), key=lambda m: -m["id"]):
            if message.get(has):
                return message
        raise SystemExit(f"try_bot: no message with {has} yet")


def show(message: dict[str, Any]) -> None:
    print("-" * 60 + (" (edited)" if message.get("edited") else ""))
    if message.get("poll"):
        poll = message["poll"]
        print(f"[{poll['type']}] {poll['question']}")
        for i, option in enumerate(poll["options"]):
            votes = f"  ({poll['counts'][i]} vote(s))" if poll["votes"] else ""
            mark = " ✓" if poll["votes"] and poll.get("correct") == i else ""
            print(f"  {i}. {option}{mark}{votes}")
        if poll["votes"] and poll.get("explanation"):
            print(f"  💡 {poll['explanation']}")
    else:
        print(message["text"])
    for kind in ("photo", "document"):
        if message.get(kind):
            print(f"  [{kind}: {message[kind]['name']}]")
    if message.get("buttons"):
        print("  buttons:", " | ".join(b["text"] for row in message["buttons"] for b in row))
    if message.get("keyboard"):
        print("  keyboard:", " | ".join(text for row in message["keyboard"] for text in row))


def play(demo: Demo, steps: list[str]) -> None:
    demo.news(0)
    for step in steps:
        if step.startswith("@press:"):
            label = step.removeprefix("@press:")
            for message in sorted(demo.seen.values(), key=lambda m: -m["id"]):
                button = next((b for row in message.get("buttons", []) for b in row if label in b["text"]), None)
                if button is not None and "data" in button:
                    break
            else:
                raise SystemExit(f"try_bot: no button «{label}»")
            print(f"\n>>> [press «{button['text']}»]")
            answer = demo.call("press", {"message_id": message["id"], "data": button["data"]})
            if answer.get("notice"):
                print(f"  (notice: {answer['notice']})")
        elif step.startswith("@vote:"):
            poll = demo.latest("poll")["poll"]
            print(f"\n>>> [vote {step.removeprefix('@vote:')}]")
            demo.call("vote", {"poll_id": poll["id"], "option": int(step.removeprefix("@vote:"))})
        else:
            print(f"\n>>> {step}")
            demo.call("send", {"text": step})
        for message in demo.settle():
            show(message)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--url", help="a running demo (default: start one for this run)")
    parser.add_argument("--lang", choices=("ru", "en"), help="send /lang <lang> first")
    parser.add_argument("steps", nargs="*", help="messages to send, @press:<label>, @vote:<n>")
    args = parser.parse_args(argv)
    steps = ([f"/lang {args.lang}"] if args.lang else []) + args.steps
    if args.url:
        play(Demo(args.url), steps)
        return 0
    # the checkout's .venv when there is one (the README's install), else this Python
    venv = Path(__file__).resolve().parents[1] / ".venv" / "bin" / "python"
    python = str(venv) if venv.exists() else sys.executable
    with tempfile.TemporaryFile("w+") as errors:
        process = subprocess.Popen([python, "-m", "bot", "demo", "--port", "0"], stdout=subprocess.PIPE,
                                   stderr=errors, text=True)  # fmt: skip
        try:
            assert process.stdout is not None
            url = process.stdout.readline().strip()
            if not url:
                process.wait()
                errors.seek(0)
                last = (errors.read().strip().splitlines() or ["no output"])[-1]
                print(f"try_bot: the demo did not start with {python}: {last}", file=sys.stderr)
                return 1
            play(Demo(url), steps)
        finally:
            process.terminate()
            try:
                process.wait(20)
            except subprocess.TimeoutExpired:
                process.kill()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

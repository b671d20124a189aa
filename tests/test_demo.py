"""``interview-bot demo`` through its JSON API (/demo/api/*), as a script or the web chat drives it:
the real bot against the stand-in, in this process (``serve_demo`` on a thread of its own)."""

from __future__ import annotations

import asyncio
import json
import re
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pytest

from bot.demo.server import demo_settings, listen, make_token, serve_demo
from tests.conftest import ROOT, shipped_bank

pytestmark = pytest.mark.e2e


class Client:
    """The API as a script uses it; keeps each chat as the web chat shows it (edits replace)."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.chats: dict[str, dict[int, dict[str, Any]]] = {"private": {}, "group": {}}
        self.cursors = {"private": 0, "group": 0}

    def call(self, path: str, body: Any = None, *, raw: bytes | None = None) -> tuple[int, dict[str, Any]]:
        data = raw if raw is not None else None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(f"{self.url}/demo/api/{path}", data=data,
                                         headers={"Content-Type": "application/json"})  # fmt: skip
        try:
            with urllib.request.urlopen(request, timeout=70) as response:
                return response.status, json.load(response)
        except urllib.error.HTTPError as exc:
            return exc.code, json.loads(exc.read())

    def post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        status, answer = self.call(path, body)
        assert status == 200 and answer["ok"] is True, answer
        return answer

    def send(self, text: str, *, chat: str = "private", user: int = 1, reply_to: int | None = None) -> int:
        body: dict[str, Any] = {"text": text, "chat": chat, "user": user}
        if reply_to is not None:
            body["reply_to"] = reply_to
        return int(self.post("send", body)["id"])

    def poll(self, chat: str = "private", wait: float = 5) -> list[dict[str, Any]]:
        status, answer = self.call(f"messages?chat={chat}&after={self.cursors[chat]}&wait={wait}")
        assert status == 200, answer
        assert answer["next"] >= self.cursors[chat]
        self.cursors[chat] = answer["next"]
        for message in answer["messages"]:
            self.chats[chat][message["id"]] = message
        return list(answer["messages"])

    def wait_for(
        self, found: Callable[[dict[str, Any]], bool], chat: str = "private", timeout: float = 30
    ) -> dict[str, Any]:
        """The newest message of the bot that ``found`` accepts, long-polling until there is one."""
        deadline = time.monotonic() + timeout
        while True:
            for message in sorted(self.chats[chat].values(), key=lambda m: -m["id"]):
                if message["from"] == "bot" and found(message):
                    return message
            if time.monotonic() > deadline:
                texts = [m["text"][:80] for m in self.chats[chat].values()]
                raise AssertionError(f"timed out; the chat shows: {texts}")
            self.poll(chat, wait=min(5, max(0.1, deadline - time.monotonic())))

    def text(self, chat: str = "private") -> str:
        return "\n".join(m["text"] for m in sorted(self.chats[chat].values(), key=lambda m: m["id"]))


def button(message: dict[str, Any], label: str) -> dict[str, Any]:
    for row in message.get("buttons", []):
        for b in row:
            if label in b["text"]:
                return dict(b)
    raise AssertionError(f"no button {label!r} in {message.get('buttons')}")


def labels(message: dict[str, Any]) -> list[str]:
    return [b["text"] for row in message.get("buttons", []) for b in row]


def question_in(text: str) -> Any:
    """The bank's question whose text the message shows."""
    found = [q for q in shipped_bank().questions.values() if q.text.strip() in text]
    assert found, text
    return max(found, key=lambda q: len(q.text))


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Client]:
    workdir = tmp_path_factory.mktemp("demo")
    sock = listen(0)
    port = int(sock.getsockname()[1])
    settings = demo_settings(port=port, token=make_token(), workdir=workdir, _env_file=None)
    assert settings.database_url.endswith(f"{workdir}/demo.db")  # a throwaway database of its own
    bank = shipped_bank()
    ready = threading.Event()
    loop: list[asyncio.AbstractEventLoop] = []
    stop: list[asyncio.Event] = []
    printed: list[str] = []
    failure: list[BaseException] = []

    async def main() -> None:
        loop.append(asyncio.get_running_loop())
        stop.append(asyncio.Event())
        await serve_demo(settings, bank, sock, stop=stop[0],
                         on_ready=lambda url: (printed.append(url), ready.set()))  # fmt: skip

    def run() -> None:
        try:
            asyncio.run(main())
        except BaseException as exc:
            failure.append(exc)
        finally:
            ready.set()

    thread = threading.Thread(target=run, name="demo", daemon=True)
    thread.start()
    assert ready.wait(60) and not failure, failure
    assert printed == [f"http://127.0.0.1:{port}/"]
    yield Client(printed[0].rstrip("/"))
    loop[0].call_soon_threadsafe(stop[0].set)
    thread.join(30)
    sock.close()
    assert not thread.is_alive() and not failure, failure


def test_a_mock_interview_played_through_the_api(demo: Client) -> None:
    demo.poll(wait=0)
    demo.send("/interview 3")
    answered = []
    for n in (1, 2, 3):
        asked = demo.wait_for(lambda m, n=n: f"вопрос {n}/3" in m["text"] and "Оценка: " not in m["text"])
        assert "<b>" not in asked["text"] and asked.get("entities"), asked  # formatting is entities, not tags
        question = question_in(asked["text"])
        answered.append(question)
        demo.send(question.answer)  # the reference answer itself: a strong answer
        feedback = demo.wait_for(lambda m, n=n: f"вопрос {n}/3" in m["text"] and "Оценка: " in m["text"])
        score = int(re.search(r"Оценка: (\d+)/100", feedback["text"]).group(1))  # type: ignore[union-attr]
        assert score >= 70, feedback["text"]
        if n == 1:  # the self-assessment: the notice, and the message edited in place
            knew = button(feedback, "Знал")
            answer = demo.post(
                "press", {"chat": "private", "user": 1, "message_id": feedback["id"], "data": knew["data"]}
            )
            assert "Знал" in answer["notice"], answer
            demo.wait_for(lambda m, i=feedback["id"]: m["id"] == i and labels(m) == ["✓ Знал"])  # in place
    report = demo.wait_for(lambda m: "Итоги интервью" in m["text"])
    for i, question in enumerate(answered, 1):
        assert f"{i}. " in report["text"] and question.text.strip()[:40] in report["text"]
    total = int(re.search(r"Общий балл: (\d+)/100", report["text"]).group(1))  # type: ignore[union-attr]
    assert total >= 70, report["text"]
    # the user's own messages are in the chat too, as a person sees them
    mine = [m["text"] for m in demo.chats["private"].values() if m["from"] == "user"]
    assert mine[-4:] == ["/interview 3", *(q.answer for q in answered)]
    # «Ответ 2» under the report: the second question's reference answer
    second = button(report, "Ответ 2")
    demo.post("press", {"chat": "private", "user": 1, "message_id": report["id"], "data": second["data"]})
    card = demo.wait_for(lambda m: "Эталонный ответ" in m["text"] and answered[1].text.strip() in m["text"])
    assert card["id"] > report["id"]


def test_a_quiz_poll_is_voted_in(demo: Client) -> None:
    demo.send("/quiz")
    quiz = demo.wait_for(lambda m: "poll" in m)
    poll = quiz["poll"]
    assert poll["type"] == "quiz" and len(poll["options"]) >= 2 and poll["votes"] == {}
    wrong = next(i for i in range(len(poll["options"])) if i != poll["correct"])
    demo.post("vote", {"chat": "private", "user": 1, "poll_id": poll["id"], "option": wrong})
    voted = demo.wait_for(lambda m: m["id"] == quiz["id"] and m["poll"]["votes"] == {"1": wrong})
    assert voted["poll"]["counts"][wrong] == 1
    status, again = demo.call("vote", {"chat": "private", "user": 1, "poll_id": poll["id"], "option": 0})
    assert status == 400 and "already voted" in again["error"]


def test_the_group_is_played_by_two_members(demo: Client) -> None:
    demo.send("/q@interview_demo_bot 463", chat="group", user=1)
    asked = demo.wait_for(lambda m: "463" in m["text"], chat="group")
    demo.send("Активации не храним, а пересчитываем на backward: память в обмен на вычисления",
              chat="group", user=2, reply_to=asked["id"])  # fmt: skip
    feedback = demo.wait_for(lambda m: "Оценка: " in m["text"], chat="group")
    assert feedback["id"] > asked["id"]
    (boris,) = [m for m in demo.chats["group"].values() if m["from"] == "user" and m["user"] == 2]
    assert boris["name"] == "Борис" and boris["reply_to"] == asked["id"]
    assert "463" not in demo.text("private").split("/quiz")[-1]  # the group's play stays in the group


def test_the_mini_app_opens_signed_with_the_demo_token(demo: Client) -> None:
    status, info = demo.call("info")
    assert status == 200 and info["menu"]["text"] and info["voice"] is False
    launch = demo.post("webapp", {"user": 1, "url": info["menu"]["url"]})["url"]
    page, _, fragment = launch.partition("#")
    assert page == "/app/" and "tgWebAppPlatform" not in fragment  # no Telegram script: nothing from the network
    init = unquote(dict(p.split("=", 1) for p in fragment.split("&"))["tgWebAppData"])
    me = urllib.request.Request(f"{demo.url}/app/api/me", headers={"Authorization": f"tma {init}"})
    with urllib.request.urlopen(me, timeout=10) as response:
        assert response.status == 200
    forged = urllib.request.Request(f"{demo.url}/app/api/me", headers={"Authorization": f"tma {init}x"})
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(forged, timeout=10)
    assert refused.value.code == 401
    # the page and its script are served, with nothing from elsewhere
    with urllib.request.urlopen(f"{demo.url}/", timeout=10) as response:
        html = response.read().decode()
    assert '<script src="/demo/chat.js">' in html and "https://" not in html


@pytest.mark.parametrize(
    ("path", "body", "error"),
    [
        ("send", {"text": ""}, "text"),
        ("send", {"text": "hi", "chat": "channel"}, "chat"),
        ("send", {"text": "hi", "user": 3}, "user"),
        ("send", [1, 2], "JSON object"),
        ("press", {"message_id": 1, "data": "nope"}, "message_id"),
        ("press", {"message_id": "x", "data": "n"}, "whole number"),
        ("vote", {"poll_id": "nope", "option": 0}, "poll_id"),
        ("webapp", {"url": "https://example.org/"}, "url"),
        ("voice", {}, "STT"),
        ("messages?chat=private&after=abc", None, "after"),
    ],
)
def test_a_bad_request_is_one_line_of_json(demo: Client, path: str, body: Any, error: str) -> None:
    status, answer = demo.call(path, body)
    assert status == 400 and answer["ok"] is False
    assert error in answer["error"] and "\n" not in answer["error"] and "Traceback" not in answer["error"]


def test_not_json_is_refused(demo: Client) -> None:
    status, answer = demo.call("send", raw=b"{not json")
    assert status == 400 and "JSON" in answer["error"]


def test_the_demo_stays_off_the_bots_run_path() -> None:
    from tests.test_architecture import all_imports

    importers = {
        i.module for i in all_imports() if i.target.startswith("bot.demo") and not i.module.startswith("bot.demo")
    }
    assert importers == {"bot.cli.operations"}  # inside cmd_demo only: the parser does not load it
    code = "import sys, bot.cli; bot.cli.build_parser(); print(sorted(m for m in sys.modules if 'demo' in m))"
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert result.stdout.strip() == "[]", result.stderr


def test_try_bot_needs_no_test_extras() -> None:
    script = Path(ROOT / "scripts" / "try_bot.py")
    assert script.stat().st_mode & 0o111, "scripts/try_bot.py is not executable"
    imported = set(re.findall(r"^(?:from|import) (\w+)", script.read_text(), re.M))
    assert imported <= {
        "__future__",
        "argparse",
        "json",
        "pathlib",
        "subprocess",
        "sys",
        "tempfile",
        "urllib",
        "typing",
    }, imported
    result = subprocess.run([sys.executable, str(script), "--help"], capture_output=True, text=True, timeout=30)
    assert result.returncode == 0 and "@press:" in result.stdout


def test_a_busy_port_is_one_line() -> None:
    from bot.config import SettingsError

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(
            SettingsError, match=rf"^--port {port}: cannot listen on 127.0.0.1:{port} \(already in use\)"
        ):
            listen(port)


def test_the_demo_keeps_a_database_url_that_is_set(tmp_path: Path) -> None:
    given = f"sqlite:///{tmp_path}/mine.db"
    settings = demo_settings(port=1234, token=make_token(), workdir=tmp_path, _env_file=None, database_url=given)
    assert settings.database_url == given
    assert settings.telegram_api_url == "http://127.0.0.1:1234" and settings.webhook_url is None
    assert settings.webapp_url == "https://127.0.0.1:1234/app/" and not settings.webapp_dev
    assert settings.heartbeat_file == tmp_path / "alive"  # not the heartbeat of a real bot on this machine
    assert re.fullmatch(r"\d{10}:[A-Za-z0-9_-]{36}", make_token()) and make_token() != make_token()

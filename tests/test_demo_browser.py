"""The demo's web chat in a real browser: ``python -m bot demo`` as a new user starts it (a real
process; its one start-up line is the address), headless Chromium loads the page, sends /q,
answers, presses «Показать ответ» and reads the reference answer; then opens the Mini App from the
menu button. Screenshots are saved in the test's temporary folder."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cdp import Browser, chromium_path
from tests.conftest import ROOT, shipped_bank

pytestmark = [pytest.mark.e2e, pytest.mark.slow]  # a real process and a real browser: seconds of start-up

ENV_KEYS = ("BOT_TOKEN", "DATABASE_URL", "WEBAPP_URL", "WEBAPP_DEV", "LOG_LEVEL", "STT", "GRADER", "METRICS_PORT")


def _demo_folders() -> set[str]:
    return {p.name for p in Path(tempfile.gettempdir()).glob("interview-bot-demo-*")}


@pytest.fixture(scope="module")
def demo() -> Iterator[str]:
    if chromium_path() is None:
        if os.environ.get("REQUIRE_CHROMIUM"):
            raise AssertionError("chromium is required (REQUIRE_CHROMIUM is set)")
        pytest.skip("chromium is not installed (apt-get install chromium)")
    before = _demo_folders()
    env = {k: v for k, v in os.environ.items() if k not in ENV_KEYS}
    process = subprocess.Popen([sys.executable, "-m", "bot", "demo", "--port", "0"], cwd=ROOT, env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    assert process.stdout is not None and process.stderr is not None
    url = process.stdout.readline().strip()
    assert re.fullmatch(r"http://127\.0\.0\.1:\d+/", url), (url, process.stderr.read() if not url else "")
    yield url
    process.send_signal(signal.SIGINT)  # Ctrl-C
    out, err = process.communicate(timeout=30)
    assert process.returncode == 0, err
    assert out == "" and "Traceback" not in err, (out, err)  # the address was the one line it printed
    assert _demo_folders() <= before  # the throwaway database went with it


def _plain_run(answer: str, words: int = 5) -> str:
    """A few words of the reference answer that read the same in the chat (no Markdown around them)."""
    for line in answer.splitlines():
        tokens = line.split()
        for i in range(len(tokens) - words + 1):
            run = tokens[i : i + words]
            # no Markdown around them, and no list marker (the chat draws «- x» and «1. x» as bullets)
            if not any(re.search(r"[*`_\[\]()#<>|\\$]", t) or re.fullmatch(r"[-–•]|\d+[.)]", t) for t in run):
                return " ".join(run)
    raise AssertionError(f"no plain run of {words} words in {answer!r}")


def test_q_answer_and_the_reference_answer_in_the_web_chat(demo: str, tmp_path: Path) -> None:
    bank = shipped_bank()

    async def run() -> None:
        async with Browser(width=1000, height=900) as b:
            await b.goto(demo)
            await b.wait("!!(document.getElementById('input') && document.getElementById('input').placeholder)")

            async def send(text: str) -> None:
                await b.js(f"document.getElementById('input').value = {text!r};"
                           "document.getElementById('composer').requestSubmit()")  # fmt: skip

            await send("/q")
            question_text = await b.wait(
                "(() => { const m = Array.from(document.querySelectorAll('.msg.bot')).find(m =>"
                " Array.from(m.querySelectorAll('.inline-kb button')).some(x => x.textContent === 'Показать ответ'));"
                " return m && m.querySelector('.bubble').innerText; })()",
                30,
            )
            found = [q for q in bank.questions.values() if q.text.strip() in question_text]
            assert found, question_text
            question = max(found, key=lambda q: len(q.text))
            assert await b.js("document.querySelector('.msg.bot .bubble b') !== null")  # formatting rendered
            await send("Не уверен, но думаю, что это связано с памятью и скоростью обучения модели.")
            await b.wait(
                "Array.from(document.querySelectorAll('.msg.bot')).some(m => m.innerText.includes('Оценка: '))", 30
            )
            assert "Не уверен, но думаю" in await b.js(
                "Array.from(document.querySelectorAll('.msg.user')).pop().innerText"
            )
            await b.screenshot(tmp_path / "1-answered.png")
            await b.js(
                "Array.from(document.querySelectorAll('.inline-kb button'))"
                ".filter(x => x.textContent === 'Показать ответ').pop().click()"
            )
            fragment = _plain_run(question.answer)
            await b.wait(f"document.getElementById('log').innerText.includes({fragment!r})", 30)
            await b.screenshot(tmp_path / "2-reference.png")

            # the menu button opens the Mini App beside the chat, signed for this user
            await b.js("document.getElementById('menu').click()")
            await b.wait(
                "(() => { const d = document.getElementById('frame').contentDocument;"
                " return d && d.querySelectorAll('#heatmap .cell.on').length === 1; })()",  # today's answer
                30,
            )
            await b.screenshot(tmp_path / "3-mini-app.png")
            assert b.errors == [], b.errors

    asyncio.run(run())
    print("screenshots:", tmp_path)

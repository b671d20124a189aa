"""The Mini App in a real browser: headless Debian Chromium (over the DevTools protocol) loads /app/
from the bot running in-process over the fake Bot API, signed as a Telegram client signs it (the
launch parameters in the URL's fragment, as Telegram opens a Mini App). A screenshot of every
screen is saved in the test's temporary folder."""

from __future__ import annotations

import asyncio
import json
import os
import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import quote

import pytest

from bot.core import initdata
from tests.cdp import Browser, chromium_path
from tests.conftest import BotProcess, InProcessBot, away_from_midnight, free_port, wait_until
from tests.fakebot import BOT_USERNAME, TOKEN, FakeTelegram

# a real browser: seconds of start-up; .ci/run runs it with the slow tests
pytestmark = [pytest.mark.e2e, pytest.mark.slow]

UID = 77_001
GROUP = -7701
ANSWERS = {  # days ago -> (question, the user's answer)
    0: ("463", "Не храним все активации, а пересчитываем их на backward: память в обмен на вычисления."),
    1: ("lora-01", "LoRA обучает низкоранговые матрицы A и B поверх замороженных весов."),
    5: ("463", "Чекпоинтинг активаций: сохраняем только часть, остальное пересчитываем."),
}
THEME = {"bg_color": "#17212b", "text_color": "#f5f5f5", "hint_color": "#aab4be", "link_color": "#6ab3f3",
         "button_color": "#5288c1", "button_text_color": "#ffffff", "secondary_bg_color": "#232e3c"}  # fmt: skip


class Clock:
    """The bot's clock, moved back to give answers on earlier days."""

    def __init__(self) -> None:
        self.offset = timedelta(0)

    def __call__(self) -> datetime:
        return datetime.now(UTC) + self.offset


@pytest.fixture(scope="module")
def served(fake: FakeTelegram, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[BotProcess, int]]:
    if chromium_path() is None:
        if os.environ.get("REQUIRE_CHROMIUM"):
            raise AssertionError("chromium is required (REQUIRE_CHROMIUM is set)")
        pytest.skip("chromium is not installed (apt-get install chromium)")
    away_from_midnight(60)  # the answers are given "days ago" and the page counts the streak to today
    port = free_port()
    clock = Clock()
    process = InProcessBot(fake, tmp_path_factory.mktemp("browser"), {"METRICS_PORT": str(port)}, clock=clock).start()
    user = fake.user(UID, "Anna")
    for days, (ref, text) in sorted(ANSWERS.items(), reverse=True):
        clock.offset = -timedelta(days=days)
        user.send(f"/q {ref}")
        user.expect()
        user.send(text)
        user.expect()
    clock.offset = timedelta(0)
    wait_until(lambda: process.rows("select count(*) from answers where user_id = ?", UID) == [(3,)])
    chat = fake.group(GROUP, "ML club")
    member = fake.user(UID, "Anna").in_chat(chat)
    member.send(f"/q@{BOT_USERNAME} 463")
    (q,) = member.expect()
    member.send("В группе: пересчитываем активации на обратном проходе", reply_to=q.message_id)
    member.expect()
    yield process, port
    assert process.stop() == 0, process.log()


def launch_url(port: int, **extra: str) -> str:
    init = initdata.sign_user(
        {"id": UID, "first_name": "Anna", "language_code": "ru"}, TOKEN, auth_date=int(datetime.now(UTC).timestamp()),
        **extra,
    )  # fmt: skip
    page = f"http://127.0.0.1:{port}/app/" + ("?s=board" if extra else "")  # another URL: a new page load
    return f"{page}#tgWebAppData={quote(init)}&tgWebAppThemeParams={quote(json.dumps(THEME))}"


def test_the_mini_app_in_chromium(served: tuple[BotProcess, int], tmp_path: Path) -> None:
    _, port = served
    shots: list[Path] = []

    async def run() -> None:
        async with Browser(width=360, height=780) as b:

            async def one_row_of_tabs(count: int) -> None:
                """Issue 32: the tabs stay in one row at 360 px (they wrapped at 400), every one visible."""
                tops = await b.js("Array.from(document.querySelectorAll('#tabs .tab')).map(e => e.offsetTop)")
                assert len(tops) == count and len(set(tops)) == 1, tops
                widths = await b.js(
                    "(n => [n.scrollWidth, n.clientWidth, Array.from(n.children).map(e => e.offsetWidth)])(document.getElementById('tabs'))"
                )
                assert widths[0] <= widths[1], widths

            async def shot(name: str) -> Path:
                # readable at 360 px: nothing is wider than the screen (no sideways scrolling)
                assert await b.js("document.documentElement.scrollWidth") <= 360, name
                return await b.screenshot(tmp_path / name)

            await b.goto(launch_url(port))
            # Progress: the heatmap has one lit cell per day with answers (3 days; the group answer is today)
            active = await b.wait("document.querySelectorAll('#heatmap .cell.on').length")
            assert active == len(ANSWERS)
            assert await b.js("document.getElementById('active-days').textContent") == "Активных дней: 3"
            assert await b.js("document.getElementById('streak').textContent") == "2 дн."
            await one_row_of_tabs(4)
            # due days in Russian («8 дек.»), not «12-08»; /review's «now» is the headline
            week = await b.js("Array.from(document.querySelectorAll('.week span')).map(e => e.textContent)")
            assert len(week) == 7 and all(re.fullmatch(r"\d{1,2} [а-я]{3,4}\.?", d) for d in week), week
            assert await b.js("document.getElementById('due-now').previousSibling.textContent") == "Сейчас"
            # the Telegram theme is followed (a dark background from the theme parameters)
            assert await b.js("getComputedStyle(document.body).backgroundColor") == "rgb(23, 33, 43)"
            shots.append(await shot("1-progress.png"))
            # keyboard: Tab reaches the first section button with a visible focus ring, Enter opens it
            await b.key("Tab", 9)
            assert await b.js("document.activeElement.id") == "tab-progress"
            assert await b.js("getComputedStyle(document.activeElement).outlineStyle") == "solid"
            await b.key("Tab", 9)
            await b.key("Enter", 13, "\r")
            await b.wait("document.getElementById('tab-bank').getAttribute('aria-selected') === 'true'")

            # Bank: the same search as /search, Russian endings included
            await b.js("document.getElementById('tab-bank').click()")
            await b.wait("!!document.getElementById('search')")
            shots.append(await shot("2-bank.png"))
            await b.js(
                "document.getElementById('search').value = 'чекпоинтов';"
                "document.querySelector('form.search').requestSubmit()"
            )
            found = await b.wait("document.querySelectorAll('.qitem').length")
            assert found > 0
            first = await b.js("document.querySelector('.qitem').textContent")
            assert "чекпоинт" in first.lower() or "checkpoint" in first.lower(), first
            assert await b.js("!!document.querySelector('.qitem[data-id=\"q463\"]')")
            shots.append(await shot("3-search.png"))
            await b.js("document.querySelector('.qitem[data-id=\"q463\"]').click()")
            await b.wait("!!document.getElementById('question-text')")
            assert await b.js("document.getElementById('ask').textContent") == "Спросить меня в чате"
            headings = await b.js("Array.from(document.querySelectorAll('main h2')).map(e => e.textContent)")
            assert {"Ответ", "Дополнительные вопросы", "Термины"} <= set(headings)
            assert "Подробнее" in await b.js("document.getElementById('details').textContent")
            shots.append(await shot("4-question.png"))

            # Glossary A–Z, then a term with its questions
            await b.js("document.getElementById('tab-glossary').click()")
            await b.wait("document.querySelectorAll('main .list button').length > 5")
            shots.append(await shot("5-glossary.png"))

            # My answers: the user's own answer beside the reference answer, newest first
            await b.js("document.getElementById('tab-answers').click()")
            await b.wait("document.querySelectorAll('.answer-item').length")
            items = await b.js(
                "Array.from(document.querySelectorAll('.answer-item')).map(li => ({"
                "yours: li.querySelector('.yours p').textContent,"
                "reference: li.querySelector('.reference').textContent}))"
            )
            assert [i["yours"] for i in items] == [
                "В группе: пересчитываем активации на обратном проходе",
                *(text for _, (_, text) in sorted(ANSWERS.items())),
            ]
            assert all(len(i["reference"]) > 100 for i in items)
            metas = await b.js("Array.from(document.querySelectorAll('.answer-item p.muted')).map(e => e.textContent)")
            assert metas and not [m for m in metas if re.search(r"\d{4}-\d\d-\d\d", m)], (
                metas
            )  # «7 дек. 2026 г., 14:05»
            shots.append(await shot("6-answers.png"))
            # the filter by topic narrows them
            await b.js(
                "const s = document.querySelector('select[name=topic]');"
                "s.value = Array.from(s.options).find(o => o.textContent.includes('LoRA') || o.value.includes('lora')).value;"
                "s.dispatchEvent(new Event('change'))"
            )
            await b.wait("document.querySelectorAll('.answer-item').length === 1")

            # Opened from the group: its board
            await b.goto(launch_url(port, start_param=f"g{GROUP}"))
            await b.wait("!!document.querySelector('.board li')")
            assert "Anna" in await b.js("document.querySelector('.board li').textContent")
            await one_row_of_tabs(5)
            shots.append(await shot("7-board.png"))
            assert b.errors == [], b.errors

            # Without Telegram's signature (and no WEBAPP_DEV): nothing is shown
            await b.goto(f"http://127.0.0.1:{port}/app/")
            await b.wait("!!document.getElementById('unauthorized')")

    asyncio.run(run())
    assert len(shots) == 7 and all(p.stat().st_size > 1000 for p in shots)
    print("screenshots:", tmp_path)

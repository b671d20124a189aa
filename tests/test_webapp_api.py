"""The Mini App's HTTP side end to end: the bot runs in-process over the fake Bot API and serves /app/
on METRICS_PORT; requests carry initData signed as Telegram signs it (bot/core/initdata.py)."""

from __future__ import annotations

import asyncio
import gzip
import json
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qsl, urlencode

import pytest

from bot.core import initdata
from tests.conftest import BotProcess, InProcessBot, free_port, wait_until
from tests.fakebot import BOT_USERNAME, TOKEN, FakeTelegram, FakeUser

pytestmark = pytest.mark.e2e

GROUP = -8801


@pytest.fixture(scope="module")
def port() -> int:
    return free_port()


@pytest.fixture(scope="module")
def app_bot(fake: FakeTelegram, tmp_path_factory: pytest.TempPathFactory, port: int) -> Iterator[BotProcess]:
    env = {"METRICS_PORT": str(port), "WEBAPP_URL": "https://bot.example.org/app/", "WEBAPP_SHORT_NAME": "practice"}
    process = InProcessBot(fake, tmp_path_factory.mktemp("webapp"), env).start()
    yield process
    assert process.stop() == 0, f"the bot failed:\n{process.log()}"
    log = process.log()
    assert TOKEN.split(":")[1] not in log


def signed(user_id: int, *, age: float = 0, lang: str = "ru", **extra: str) -> str:
    user = {"id": user_id, "first_name": f"User{user_id}", "language_code": lang}
    return initdata.sign_user(user, TOKEN, auth_date=int(time.time() - age), **extra)


def call(port: int, path: str, init: str | None = None, *, body: Any = None, scheme: str = "tma") -> tuple[int, Any]:
    headers = {"Accept-Encoding": "gzip"}
    if init is not None:
        headers["Authorization"] = f"{scheme} {init}"
    data = None
    if body is not None:
        data = json.dumps(body).encode()
        headers["Content-Type"] = "application/json"
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=data, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            status, raw, encoding = response.status, response.read(), response.headers.get("Content-Encoding")
    except urllib.error.HTTPError as err:
        status, raw, encoding = err.code, err.read(), err.headers.get("Content-Encoding")
    if encoding == "gzip":
        raw = gzip.decompress(raw)
    try:
        return status, json.loads(raw)
    except ValueError:
        return status, raw


def answer_private(user: FakeUser, ref: str, text: str) -> None:
    user.send(f"/q {ref}")
    user.expect()
    user.send(text)
    user.expect()


def test_the_page_is_served_small_and_compressed(app_bot: BotProcess, port: int) -> None:
    total = 0
    for name in ("", "app.js", "app.css"):
        request = urllib.request.Request(f"http://127.0.0.1:{port}/app/{name}", headers={"Accept-Encoding": "gzip"})
        with urllib.request.urlopen(request, timeout=10) as response:
            assert response.status == 200
            assert response.headers["Content-Encoding"] == "gzip"
            raw = response.read()
        total += len(raw)
        assert "script-src 'self' https://telegram.org;" in response.headers["Content-Security-Policy"]
        body = gzip.decompress(raw).decode()
        if name == "":
            assert "app.js" in body and "<main" in body
    assert total < 200 * 1024  # the page weight, everything included (no third-party script is fetched)
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/app", timeout=10) as response:  # redirected
        assert response.url.endswith("/app/")


def test_signature_valid_tampered_expired_missing(app_bot: BotProcess, port: int, fake: FakeTelegram) -> None:
    uid = 88_001
    answer_private(fake.user(uid), "463", "Не храним активации, а пересчитываем их на backward: память за вычисления.")
    wait_until(lambda: app_bot.rows("select count(*) from answers where user_id = ?", uid) == [(1,)])
    good = signed(uid)
    status, data = call(port, "/app/api/progress", good)
    assert status == 200 and data["totals"]["answers"] == 1 and data["heatmap"]["active_days"] == 1

    # tampered: another user id inside the signed user JSON, the hash kept
    fields = dict(parse_qsl(good))
    fields["user"] = fields["user"].replace(str(uid), "88002")
    assert call(port, "/app/api/progress", urlencode(fields))[0] == 401
    # tampered: the hash itself
    assert call(port, "/app/api/progress", good[:-2] + ("00" if not good.endswith("00") else "11"))[0] == 401
    # expired: older than WEBAPP_AUTH_MAX_AGE (24 h by default)
    assert call(port, "/app/api/progress", signed(uid, age=86_400 + 120))[0] == 401
    assert call(port, "/app/api/progress", signed(uid, age=86_400 - 600))[0] == 200
    # missing, or another scheme, or signed with another bot's token
    assert call(port, "/app/api/progress")[0] == 401
    assert call(port, "/app/api/progress", good, scheme="Bearer")[0] == 401
    other = initdata.sign_user({"id": uid, "first_name": "x"}, "999:" + "B" * 35, auth_date=int(time.time()))
    status, data = call(port, "/app/api/answers", other)
    assert status == 401 and data == {"error": "unauthorized"}
    # no dev mode unless WEBAPP_DEV=1
    assert call(port, "/app/api/dev-init")[0] == 404


def test_progress_follows_new_answers_and_self_assessments(app_bot: BotProcess, port: int, fake: FakeTelegram) -> None:
    uid = 88_071
    user = fake.user(uid)
    answer_private(user, "lora-01", "Низкоранговые матрицы A и B обучаются поверх замороженных весов модели.")
    wait_until(lambda: app_bot.rows("select count(*) from answers where user_id = ?", uid) == [(1,)])
    lora = next(t for t in call(port, "/app/api/progress", signed(uid))[1]["topics"] if t["id"] == "lora")
    assert lora["answered"] == 1
    # a second answer, then «Знал»: the next opening shows both (no stale figures from the first)
    user.send("/q lora-02")
    user.expect()
    user.send("Ранг r задаёт размер добавки: чем больше r, тем больше обучаемых параметров у адаптера.")
    (saved,) = user.expect()
    user.press(saved, saved.button("Знал"))
    wait_until(lambda: app_bot.rows("select count(*) from answers where user_id = ? and self_grade = 3", uid) == [(1,)])
    data = call(port, "/app/api/progress", signed(uid))[1]
    lora = next(t for t in data["topics"] if t["id"] == "lora")
    assert data["totals"]["answers"] == 2 and lora["answered"] == 2


def test_signature_field_of_newer_clients_in_or_out_of_the_check_string(port: int, app_bot: BotProcess) -> None:
    user = json.dumps({"id": 88_003, "first_name": "N"})
    fields = {"user": user, "auth_date": str(int(time.time())), "signature": "c2lnbmF0dXJl"}
    with_signature = initdata.sign(fields, TOKEN)
    assert call(port, "/app/api/me", with_signature)[0] == 200
    digest = dict(parse_qsl(initdata.sign({k: v for k, v in fields.items() if k != "signature"}, TOKEN)))["hash"]
    without = urlencode({**fields, "hash": digest})
    assert call(port, "/app/api/me", without)[0] == 200


def test_another_users_id_in_the_query_string_is_ignored(app_bot: BotProcess, port: int, fake: FakeTelegram) -> None:
    anna, boris = 88_011, 88_012
    answer_private(fake.user(anna), "463", "Анна: пересчитываем активации в backward вместо хранения.")
    answer_private(fake.user(boris), "lora-01", "Борис: обучаем низкоранговые добавки к весам.")
    wait_until(lambda: app_bot.rows("select count(*) from answers where user_id in (?, ?)", anna, boris) == [(2,)])
    for path in (f"/app/api/answers?user_id={boris}", f"/app/api/answers?user={boris}&id={boris}"):
        status, data = call(port, path, signed(anna))
        assert status == 200
        assert [a["text"][:5] for a in data["items"]] == ["Анна:"]
    status, data = call(port, f"/app/api/progress?user_id={boris}", signed(anna))
    assert data["totals"]["answers"] == 1


def test_privacy_between_two_users_in_a_shared_group(app_bot: BotProcess, port: int, fake: FakeTelegram) -> None:
    chat = fake.group(GROUP, "ML club")
    anna = fake.user(88_021, "Anna").in_chat(chat)
    boris = fake.user(88_022, "Boris").in_chat(chat)
    anna.send(f"/q@{BOT_USERNAME} 463")
    (q,) = anna.expect()
    anna.send("Анна в группе: храним меньше активаций и пересчитываем их", reply_to=q.message_id)
    anna.expect()
    boris.send("Борис в группе: чекпоинтинг экономит память за счёт вычислений", reply_to=q.message_id)
    boris.expect()
    wait_until(lambda: app_bot.rows("select count(*) from answers where chat_id = ?", GROUP) == [(2,)])

    status, data = call(port, "/app/api/answers", signed(88_021))
    assert status == 200
    texts = [a["text"] for a in data["items"]]
    assert texts == ["Анна в группе: храним меньше активаций и пересчитываем их"]
    assert data["items"][0]["group"] == "ML club"
    assert "Борис" not in json.dumps(data, ensure_ascii=False)
    status, data = call(port, "/app/api/answers", signed(88_022))
    assert [a["text"][:5] for a in data["items"]] == ["Борис"]

    # the board: only when opened from the group (signed start_param), names and points, no ids
    assert call(port, "/app/api/board", signed(88_021))[0] == 404
    status, board = call(port, "/app/api/board", signed(88_021, start_param=f"g{GROUP}"))
    assert status == 200 and board["title"] == "ML club"
    assert sorted(r["name"] for r in board["all"]) == ["Anna", "Boris"]
    assert [r["me"] for r in board["all"] if r["name"] == "Anna"] == [True]
    assert "88021" not in json.dumps(board) and "88022" not in json.dumps(board)
    # /top off hides a member, as in the chat
    boris.send(f"/top@{BOT_USERNAME} off")
    boris.expect()
    status, board = call(port, "/app/api/board", signed(88_021, start_param=f"g{GROUP}"))
    assert [r["name"] for r in board["all"]] == ["Anna"] and [r["name"] for r in board["week"]] == ["Anna"]
    # someone who is not in the group sees nothing of it, even with a link naming it
    chat.left.add(88_023)
    assert call(port, "/app/api/board", signed(88_023, start_param=f"g{GROUP}"))[0] == 404


def test_bank_search_question_page_and_glossary(app_bot: BotProcess, port: int) -> None:
    init = signed(88_031)
    status, found = call(port, "/app/api/search?q=" + urllib.request.quote("чекпоинтов"), init)
    assert status == 200 and found["questions"], "Russian word endings are understood, as in /search"
    status, topics = call(port, "/app/api/topics", init)
    assert status == 200 and topics["topics"][0]["count"] > 0
    first = topics["topics"][0]["id"]
    status, topic = call(port, f"/app/api/topics/{first}", init)
    qid = topic["questions"][0]["id"]
    status, page = call(port, f"/app/api/questions/{qid}", init)
    assert status == 200 and page["answer_html"] and page["key_points"]
    assert call(port, "/app/api/questions/nope", init)[0] == 404
    # the answer card, the details, the follow-ups and the glossary links of a question
    status, page = call(port, "/app/api/questions/q463", init)
    assert page["details_html"] and len(page["follow_ups"]) == 3 and page["terms"]
    assert all(f["question"] and f["answer_html"] for f in page["follow_ups"])
    status, page = call(port, "/app/api/questions/lora-02", init)
    assert page["context"]  # the line that makes a seed question understandable alone
    assert page["label"] == "lora-2"  # the handle /q takes, shown for an unnumbered seed item too
    # the topics come in syllabus order with their area; a linked item is listed on the page
    areas = [t["area"]["id"] for t in topics["topics"]]
    assert areas[:3] == ["foundations"] * 3 and areas[3:5] == ["classical-ml", "transformers"]
    status, page = call(port, "/app/api/questions/lora-04", init)
    assert [(s["id"], s["label"]) for s in page["similar"]] == [("lora-06", "lora-6")]
    status, glossary = call(port, "/app/api/glossary", init)
    names = [t["en"].casefold() for t in glossary["terms"]]
    assert names == sorted(names) and glossary["topics"]
    term_id = glossary["terms"][0]["id"]
    status, term = call(port, f"/app/api/glossary/{term_id}", init)
    assert status == 200 and term["definition_html"]
    # English for an English-speaking Telegram user
    status, me = call(port, "/app/api/me", signed(88_032, lang="en"))
    assert me["lang"] == "en" and me["strings"]["tab.bank"] == "Bank"


def test_ask_me_in_the_chat(app_bot: BotProcess, port: int, fake: FakeTelegram) -> None:
    uid = 88_041
    user = fake.user(uid)
    # never talked to the bot: Telegram would refuse, the app says to start the chat first
    status, data = call(port, "/app/api/ask", signed(uid), body={"question": "q463"})
    assert status == 409 and data["error"] == "start_bot"
    user.send("/start")
    user.expect()
    user.mark()
    status, data = call(port, "/app/api/ask", signed(uid), body={"question": "q463"})
    assert status == 200, data
    (question,) = user.expect()
    assert "463" in question.text
    user.send("Активации пересчитываются на обратном проходе, чтобы сэкономить память")
    user.expect()
    assert app_bot.rows("select question_id from answers where user_id = ?", uid) == [("q463",)]
    assert call(port, "/app/api/ask", signed(uid), body={"question": "nope"})[0] == 404
    assert call(port, "/app/api/ask", None, body={"question": "q463"})[0] == 401


def test_bad_filters_are_refused_and_paging_goes_back_in_time(
    app_bot: BotProcess, port: int, fake: FakeTelegram
) -> None:
    init = signed(88_051)
    assert call(port, "/app/api/answers?topic=nope", init)[0] == 400
    assert call(port, "/app/api/answers?grade=7", init)[0] == 400
    assert call(port, "/app/api/answers?before=-1", init)[0] == 400
    status, data = call(port, "/app/api/answers?grade=good", init)
    assert status == 200 and data == {"items": [], "references": {}, "next": None}
    # a user without answers: an empty progress, not an error
    status, data = call(port, "/app/api/progress", init)
    assert status == 200 and data["totals"]["answers"] == 0 and data["heatmap"]["active_days"] == 0
    assert data["weakest"] == [] and data["streak"] == {"current": 0, "longest": 0, "today": False}


def test_menu_button_and_open_buttons(app_bot: BotProcess, port: int, fake: FakeTelegram) -> None:
    assert fake.menu_buttons[0]["type"] == "web_app"
    assert fake.menu_buttons[0]["web_app"]["url"] == "https://bot.example.org/app/"
    user = fake.user(88_061)
    user.send("/glossary")
    (reply,) = user.expect()
    buttons = [b for row in reply.reply_markup["inline_keyboard"] for b in row]
    assert any(b.get("web_app", {}).get("url", "").startswith("https://bot.example.org/app/") for b in buttons)
    chat = fake.group(-8861, "Study")
    member = fake.user(88_062).in_chat(chat)
    member.send(f"/search@{BOT_USERNAME} чекпоинт")
    (found,) = member.expect()
    links = [b.get("url", "") for row in found.reply_markup["inline_keyboard"] for b in row]
    assert f"https://t.me/{BOT_USERNAME}/practice?startapp=g-8861" in links


def test_a_page_path_outside_the_app_is_not_served(app_bot: BotProcess, port: int) -> None:
    for path in ("/app/../pyproject.toml", "/app/index.html/..", "/app/api/", "/app/x.js"):
        status, body = call(port, path)
        assert status in (200, 401, 404, 405) and b"[build-system]" not in (body if isinstance(body, bytes) else b"")


def test_dev_mode_signs_a_test_user_only_when_asked(
    own_fake: FakeTelegram, tmp_path_factory: pytest.TempPathFactory
) -> None:
    port = free_port()
    env = {"METRICS_PORT": str(port), "WEBAPP_DEV": "1", "ADMIN_IDS": "4242,777", "WEBHOOK_LISTEN": "0.0.0.0"}
    process = InProcessBot(own_fake, tmp_path_factory.mktemp("webapp-dev"), env).start()
    try:
        status, data = call(port, "/app/api/dev-init")
        assert status == 200
        user = initdata.verify(data["init_data"], TOKEN, now=time.time(), max_age=60)
        assert user is not None and user.id == 777  # the first of ADMIN_IDS
        status, me = call(port, "/app/api/me", data["init_data"])
        assert status == 200 and me["first_name"] == "Dev"
        # another machine cannot even connect: the server listens on loopback only
        assert f"HTTP server on 127.0.0.1:{port}" in process.log() and "listens on 127.0.0.1 only" in process.log()
    finally:
        assert process.stop() == 0
    assert "WEBAPP_DEV=1" in process.log()  # a warning at start: never on a public server


@pytest.mark.parametrize(
    ("peer", "served"), [("127.0.0.1", True), ("::1", True), ("10.1.2.3", False), ("8.8.8.8", False)]
)
def test_dev_init_answers_only_this_machine(peer: str, served: bool) -> None:
    """The peer address decides; a forwarded header naming loopback does not."""
    from unittest import mock

    from aiohttp import web
    from aiohttp.test_utils import make_mocked_request

    from bot.tg.miniapp_routes import MiniApp, is_loopback

    assert is_loopback(peer) is served
    transport = mock.Mock()
    transport.get_extra_info.side_effect = lambda name, default=None: (peer, 4242) if name == "peername" else default
    request = make_mocked_request(
        "GET",
        "/app/api/dev-init",
        headers={"X-Forwarded-For": "127.0.0.1", "X-Real-IP": "127.0.0.1"},
        transport=transport,
    )
    app = mock.Mock()
    app.bot.token = TOKEN
    services = mock.Mock()
    services.settings.webapp_dev = True
    services.settings.admin_ids = [777]
    services.settings.default_language = "ru"
    services.clock.return_value.timestamp.return_value = time.time()
    mini = object.__new__(MiniApp)
    mini.app, mini.services = app, services
    if served:
        assert asyncio.run(mini.dev_init(request)).status == 200
    else:
        with pytest.raises(web.HTTPNotFound):
            asyncio.run(mini.dev_init(request))


def test_a_member_who_left_loses_the_board_within_a_minute(monkeypatch: pytest.MonkeyPatch) -> None:
    from unittest import mock

    from bot.tg import miniapp_routes as webapp_module
    from bot.tg.miniapp_routes import MiniApp

    status = {"now": "member"}
    app = mock.Mock()

    async def get_chat_member(chat_id: int, user_id: int) -> object:
        return mock.Mock(status=status["now"])

    app.bot.get_chat_member = get_chat_member
    mini = object.__new__(MiniApp)
    mini.app, mini._members = app, {}
    clock = {"t": 1000.0}
    monkeypatch.setattr(webapp_module.time, "monotonic", lambda: clock["t"])
    assert asyncio.run(mini._is_member(-100, 5)) is True
    status["now"] = "left"
    clock["t"] += 30
    assert asyncio.run(mini._is_member(-100, 5)) is True  # trusted for a short while
    clock["t"] += 31
    assert asyncio.run(mini._is_member(-100, 5)) is False  # 61 s after: asked again, gone


def test_one_users_ask_flood_does_not_slow_anyone_else(app_bot: BotProcess, port: int, fake: FakeTelegram) -> None:
    """One user presses «Спросить меня в чате» in a loop while Telegram answers their chat with 429s:
    the app refuses the flood past a few a minute, the 429s hold only that chat, and another user's
    /help is answered at once."""
    flooder, bystander = 88_071, 88_072
    fake.user(flooder).send("/start")
    fake.user(flooder).expect()
    other = fake.user(bystander)
    fake.retry_after(2, chat_id=flooder, times=50)  # every message to the flooder: retry after 2 s
    import concurrent.futures

    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        flood = [pool.submit(call, port, "/app/api/ask", signed(flooder), body={"question": "q463"}) for _ in range(20)]
        time.sleep(0.3)  # the first asks are in flight and held
        started = time.monotonic()
        other.send("/help")
        (reply,) = other.expect()
        waited = time.monotonic() - started
        results = [f.result(timeout=30) for f in flood]
    print(f"\nbystander /help during the flood: {waited:.3f} s")
    assert waited < 1.0, f"/help took {waited:.2f} s during another user's flood"
    assert "/q" in reply.text
    refused = [data for status, data in results if status == 429]
    assert len(refused) >= 20 - 6 and all(d["error"] == "too_many" for d in refused)
    fake.faults.clear()

"""Markdown in the bank's text (issue 32): `code` reaches a person as code, or without its marks,
wherever it is shown — the reference answer's key points and follow-ups, the interview's follow-up,
feedback and report, a glossary card, the Mini App's fields, an Anki card, the terminal."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from bot.interop.anki import card_back_html, key_points_html
from bot.services import webapp_bank
from tests.conftest import BotProcess, InProcessBot, shipped_catalog
from tests.fakebot import FakeTelegram

BANK = """\
topics:
  - id: tr
    title: {ru: "Обучение", en: "Training"}
glossary:
  - id: gc
    term: {en: "Gradient checkpointing", ru: "Пересчёт активаций"}
    definition: "Хранит часть активаций и пересчитывает остальные в backward: `torch.utils.checkpoint`."
questions:
  - id: tr-01
    number: 7
    topic: tr
    source: {file: seed.txt, section: "Обучение"}
    text: "Что такое gradient checkpointing?"
    terms: [gc]
    answer: "Активации не хранятся, а пересчитываются в backward; в HF — `gradient_checkpointing_enable()`."
    follow_ups:
      - question: "Почему при этом ставят `use_cache=False`?"
        answer: "KV-кэш при обучении не нужен, а с `use_cache=True` HF выдаёт предупреждение."
      - question: "Сколько памяти экономит пересчёт?"
        answer: "Активации падают примерно до корня из числа слоёв ценой ~30% времени."
    key_points:
      - {text: "Активации пересчитываются в backward", match: ["пересчит", "recompute"]}
      - {text: "Память на активации падает ценой времени", match: ["экономит память", "ценой времени"]}
      - {text: "В HF: `gradient_checkpointing_enable()` и `use_cache=False`", match: ["use_cache", "gradient_checkpointing_enable"]}
"""


@pytest.fixture(scope="module")
def md_bot(fake: FakeTelegram, tmp_path_factory: pytest.TempPathFactory) -> Iterator[BotProcess]:
    bank = tmp_path_factory.mktemp("bank")
    (bank / "bank.yaml").write_text(BANK, encoding="utf-8")
    process = InProcessBot(fake, tmp_path_factory.mktemp("bot"), env={"BANK_PATH": str(bank)}).start()
    yield process
    assert process.stop() == 0, f"the bot failed:\n{process.log()}"


@pytest.mark.e2e
def test_code_in_the_bank_is_code_in_every_chat_message(fake: FakeTelegram, md_bot: BotProcess, uid: int) -> None:
    user = fake.user(uid)
    user.send("/interview 1 deep")
    user.expect(2)
    user.send("Активации пересчитываются в backward.")  # misses the HF key point: its hint is shown
    feedback, follow_up = user.expect(2)
    assert "use_cache=False" in feedback.text and "<code>use_cache=False</code>" in feedback.raw
    assert "Почему при этом ставят use_cache=False?" in follow_up.text
    user.send("Кэш при обучении не нужен.")
    saved, report = user.expect(2)
    assert "<code>use_cache=True</code>" in saved.raw  # the bank's short answer to the follow-up
    assert "use_cache=False" in report.text and "<code>use_cache=False</code>" in report.raw
    user.send("/q 7")
    user.expect()
    user.send("Пересчёт активаций в backward, в HF gradient_checkpointing_enable и use_cache=False.")
    (fb,) = user.expect()
    user.press(fb, fb.button("Показать ответ"))
    (answer,) = user.expect()
    assert "<code>gradient_checkpointing_enable()</code>" in answer.raw
    assert "<code>use_cache=False</code>" in answer.raw and "<code>use_cache=True</code>" in answer.raw
    user.press(answer, answer.button("Пересчёт активаций"))
    (card,) = user.expect()
    assert "<code>torch.utils.checkpoint</code>" in card.raw
    sent = [m for m in fake.messages(uid) if m.method != "answerCallbackQuery"]
    assert sent and not [m.text for m in sent if "`" in m.text]  # not one literal backtick anywhere


def test_the_mini_app_and_an_anki_card_show_no_backticks() -> None:
    catalog = shipped_catalog()
    page = webapp_bank.question(catalog, "q463", "ru", set())
    assert page is not None
    texts = [kp["text"] for kp in page["key_points"]] + [f["question"] for f in page["follow_ups"]]
    assert any("use_cache=False" in text for text in texts) and not [x for x in texts if "`" in x]
    q = catalog.bank.questions["q463"]
    assert "`" not in key_points_html(q) + card_back_html(q)
    assert "<code>use_cache=False</code>" in card_back_html(q)

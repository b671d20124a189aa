"""Chat-sized answers with depth on demand, end to end: the context line above a seed question,
«Подробнее» with the rest of the answer, «Что спросят дальше» under the reference answer, and a deep
mock interview that asks the bank's follow-up and shows its short answer."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.conftest import BotProcess, InProcessBot
from tests.fakebot import FakeTelegram

pytestmark = pytest.mark.e2e

BANK = """\
topics:
  - id: par
    title: {ru: "Параллелизм", en: "Parallelism"}
glossary:
  - id: dp
    term: {en: "Data parallelism", ru: "Параллелизм по данным"}
    definition: "Копия модели на каждом устройстве, батч делится между ними."
questions:
  - id: par-01
    number: 7
    topic: par
    source: {file: seed.txt, section: "Параллелизм"}
    context: "Речь о видах параллелизма при обучении больших моделей."
    text: "Какие виды знаешь?"
    terms: [dp]
    answer: "Data, tensor, pipeline и параллелизм по последовательности; их комбинируют (3D)."
    details: |
      **Подводные камни:** pipeline оставляет «пузырь» простоя; его уменьшают микробатчами.
    follow_ups:
      - question: "Что такое пузырь в pipeline-параллелизме?"
        answer: "Время простоя стадий в начале и конце шага; доля ≈ (p−1)/(m+p−1)."
      - question: "Когда хватает одного data parallel?"
        answer: "Когда модель с оптимизатором помещается на одну GPU."
    key_points:
      - {text: "Data parallel", match: ["data parallel", "по данным"]}
      - {text: "Tensor parallel", match: ["tensor parallel", "тензорный"]}
      - {text: "Pipeline parallel", match: ["pipeline", "конвейер"]}
"""


@pytest.fixture(scope="module")
def deep_bot(fake: FakeTelegram, tmp_path_factory: pytest.TempPathFactory) -> Iterator[BotProcess]:
    bank = tmp_path_factory.mktemp("bank")
    (bank / "bank.yaml").write_text(BANK, encoding="utf-8")
    process = InProcessBot(fake, tmp_path_factory.mktemp("bot"), env={"BANK_PATH": str(bank)}).start()
    yield process
    assert process.stop() == 0, f"the bot failed:\n{process.log()}"


def labels(message: object) -> list[str]:
    return [label for label, _ in message.buttons()]  # type: ignore[attr-defined]


def test_context_details_and_follow_ups(fake: FakeTelegram, deep_bot: BotProcess, uid: int) -> None:
    user = fake.user(uid)
    user.send("/q 7")
    (question,) = user.expect()
    context_at = question.text.index("Речь о видах параллелизма")
    assert context_at < question.text.index("Какие виды знаешь?")  # the context line comes first

    user.send("Бывает data parallel, tensor parallel и pipeline.")
    (fb,) = user.expect()
    user.press(fb, fb.button("Знал"))
    fake.wait_for(lambda: "✓ Знал" in labels(fb), 5)
    assert labels(fb) == ["✓ Знал", "Показать ответ", "Подробнее", "Следующий"]

    user.press(fb, fb.button("Показать ответ"))
    (card,) = user.expect()
    assert card.text.index("Бывает data parallel") < card.text.index("Data, tensor, pipeline")  # own answer first
    assert "Что спросят дальше" in card.text
    assert "Что такое пузырь в pipeline-параллелизме?" in card.text
    assert "Подводные камни" not in card.text  # the details wait for «Подробнее»
    assert "Подробнее" in labels(card)

    user.press(card, card.button("Подробнее"))
    (details,) = user.expect()
    assert details.text.startswith("Подробнее · Вопрос 7")
    assert "Подводные камни: pipeline оставляет «пузырь» простоя" in details.text
    assert labels(details) == ["Следующий"]


def test_english_labels(fake: FakeTelegram, deep_bot: BotProcess, uid: int) -> None:
    user = fake.user(uid, language_code="en")
    user.send("/answer 7")
    (card,) = user.expect()
    assert "What they ask next" in card.text and "More details" in labels(card)


def test_deep_interview_asks_the_bank_follow_up(fake: FakeTelegram, deep_bot: BotProcess, uid: int) -> None:
    user = fake.user(uid)
    user.send("/interview 1 deep")
    intro, q1 = user.expect(2)
    assert "с уточняющими вопросами" in intro.text
    assert "Речь о видах параллелизма" in q1.text
    user.send("Data parallel, tensor parallel и pipeline parallel.")
    fb, follow_up = user.expect(2)
    assert "Ключевые пункты: покрыто 3 из 3" in fb.text
    assert "Уточняющий вопрос интервьюера" in follow_up.text
    assert "Что такое пузырь в pipeline-параллелизме?" in follow_up.text  # the first question's turn
    user.send("Стадии простаивают в начале и в конце шага.")
    saved, report = user.expect(2)
    assert saved.text.startswith("Принято.")
    assert "Время простоя стадий в начале и конце шага" in saved.text  # the bank's short answer
    assert "Итоги интервью" in report.text and "Стадии простаивают" in report.text
    assert deep_bot.rows("select deep from interviews where user_id = ?", uid) == [(1,)]


def test_plain_interview_moves_on_without_a_follow_up(fake: FakeTelegram, deep_bot: BotProcess, uid: int) -> None:
    user = fake.user(uid)
    user.send("/interview 1")
    intro, _ = user.expect(2)
    assert "уточняющ" not in intro.text
    user.send("Data parallel, tensor parallel и pipeline parallel.")
    _, report = user.expect(2)
    assert "Итоги интервью" in report.text

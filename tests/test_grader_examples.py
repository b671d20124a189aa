"""The examples of issue 28, each graded sensibly: feedback that never accuses a right answer, and
still does not credit a wrong one. Answers as a candidate (or the bank's own card) would say them."""

from __future__ import annotations

import pytest

from bot.bank import Bank
from bot.core.grading import Grade, formulas, grade
from tests.conftest import dev_answer, shipped_bank


@pytest.fixture(scope="module")
def bank() -> Bank:
    return shipped_bank()


def _grade(bank: Bank, qid: str, text: str) -> Grade:
    return grade(bank.questions[qid], text, bank.lexicon)


def test_q958_describing_the_baseline_being_compared_is_no_charge(bank: Bank) -> None:
    answer = (
        "В отличие от классического speculative decoding, где черновик генерирует маленькая отдельная модель, "
        "у Medusa отдельной draft-модели нет: поверх последнего скрытого состояния самой модели стоят несколько "
        "голов, каждая предсказывает токен на 1, 2, 3 позиции вперёд независимо. EAGLE добавляет один слой "
        "трансформера, который авторегрессионно предсказывает признаки предпоследнего слоя с учётом уже выбранных "
        "токенов, поэтому черновик точнее. Кандидатов проверяют деревом за один forward с tree attention. Плюс — "
        "нет второй модели и общего токенизатора, минус — головы учат под конкретную модель."
    )
    g = _grade(bank, "serving-08", answer)
    assert not g.misconceptions and not g.contradicted and not g.asks
    assert g.verdict == "good"
    plain = "Обычный speculative decoding использует отдельную маленькую draft-модель. " + answer.split(", у ", 1)[1]
    g = _grade(bank, "serving-08", plain)
    assert not g.misconceptions and g.verdict == "good"


def test_q958_the_wrong_claim_itself_is_charged_with_its_sentence(bank: Bank) -> None:
    wrong = "Medusa и EAGLE — это просто маленькие отдельные модели-черновики, их обучают с нуля на том же корпусе."
    g = _grade(bank, "serving-08", f"Идея та же, что у спекулятивного декодинга. {wrong}")
    assert 0 in g.misconceptions and g.verdict == "weak"
    assert g.evidence[g.misconceptions.index(0)] == wrong


def test_lora_10_the_cards_own_256_times_fewer_is_not_reversed(bank: Bank) -> None:
    g = _grade(
        bank,
        "lora-10",
        "Полное дообучение матрицы d×k обучает d·k параметров, а LoRA — r·(d+k): B размера d×r и A размера r×k. "
        "Для d = k = 4096 и r = 8 это 65 536 против 16 777 216, то есть ≈0,39%, в 256 раз меньше.",
    )
    assert not g.contradicted and not g.misconceptions
    assert g.verdict == "good"


def test_1005_spoken_english_without_bias_is_not_reversed(bank: Bank) -> None:
    g = _grade(
        bank,
        "eval-05",
        "so pass at k is like the probability that at least one of k samples passes the unit tests and uh you "
        "estimate it without bias by generating n samples counting c correct ones and taking one minus n minus c "
        "choose k over n choose k averaged over the problems",
    )
    assert not g.contradicted and not g.misconceptions
    assert g.verdict != "weak"


def test_q463_a_key_point_pasted_word_for_word_is_covered(bank: Bank) -> None:
    q = bank.questions["q463"]
    for i, point in enumerate(q.key_points):
        assert i in _grade(bank, "q463", point.text).covered, point.text


def test_902_the_wrong_6n_is_not_credited_as_three_times_cheaper(bank: Bank) -> None:
    g = _grade(
        bank,
        "scaling-02",
        "Генерация одного токена стоит столько же, сколько обучение на нём: около 6N FLOPs, forward и backward.",
    )
    assert 1 not in g.covered  # «втрое дешевле обучения»
    assert g.verdict == "weak"


def test_practical_03_zero_bias_is_not_zero_weights(bank: Bank) -> None:
    g = _grade(
        bank,
        "practical-03",
        "Веса инициализируют случайно с правильным масштабом, Xavier или He. Нулями можно инициализировать bias, "
        "но не веса, иначе симметрия не разрушится.",
    )
    assert not g.misconceptions


def test_general_01_regularisation_raises_train_error_is_no_charge(bank: Bank) -> None:
    g = _grade(
        bank,
        "general-01",
        "L2 и weight decay, в Adam — AdamW; dropout; аугментации; early stopping. Регуляризация обычно "
        "увеличивает ошибку на train — она уменьшает разрыв между train и val.",
    )
    assert not g.misconceptions


def test_eval_14_order_of_votes_does_not_matter_for_bradley_terry(bank: Bank) -> None:
    g = _grade(
        bank,
        "eval-14",
        "Пользователь сравнивает ответы двух анонимных моделей и голосует, а рейтинг подбирают моделью "
        "Брэдли–Терри по всем попарным голосам. В отличие от онлайн-Elo, порядок голосов не влияет.",
    )
    assert not g.misconceptions and g.verdict != "weak"


def test_serving_08_only_prompt_lookup_works_without_training(bank: Bank) -> None:
    g = _grade(
        bank,
        "serving-08",
        "Medusa и EAGLE не требуют отдельной draft-модели, но их головы надо обучить под конкретную модель; "
        "без обучения работает только prompt lookup.",
    )
    assert not g.misconceptions and not g.asks


def test_code_26_greedy_accepts_on_argmax_is_no_charge(bank: Bank) -> None:
    g = _grade(
        bank,
        "code-26",
        "Черновой токен x принимаем с вероятностью min(1, p(x)/q(x)); при отказе берём замену из нормированного "
        "max(0, p − q) и останавливаемся; если приняты все k — добавляем бонусный токен из p на позиции k + 1. "
        "Для greedy принимаем, если совпадает с argmax.",
    )
    assert not g.misconceptions and g.verdict == "good"


def test_a_refutation_names_the_wrong_belief_without_being_charged_with_it(bank: Bank) -> None:
    frames = [
        "Часто думают, что gradient checkpointing сохраняет веса модели на диск, но на самом деле он пересчитывает "
        "активации в backward.",
        "Gradient checkpointing сохраняет веса модели на диск? Нет: активации не хранят, а пересчитывают в backward.",
        "Это не значит, что checkpointing сохраняет веса модели на диск: активации пересчитывают в backward.",
        "Распространённый миф — что checkpointing сохраняет веса модели на диск. Активации пересчитывают в backward.",
        "Checkpointing сохраняет веса модели на диск — это миф; активации пересчитывают в backward.",
        "If checkpointing offloaded the weights to disk, it would be a different technique: activations are "
        "recomputed in backward.",
        "Многие объясняют это тем, что checkpointing сохраняет веса модели на диск, но на самом деле активации "
        "пересчитывают в backward.",
        "Часто checkpointing называют способом, который сохраняет веса модели на диск, но на самом деле активации "
        "пересчитывают в backward.",
    ]
    for text in frames:
        assert 0 not in _grade(bank, "q463", text).misconceptions, text


def test_a_comparison_listing_two_things_charges_neither_with_the_others_property(bank: Bank) -> None:
    """«XGBoost — … рост по уровням, LightGBM растёт по листьям» is right; the claim «LightGBM растит деревья
    по уровням» must not be read into it because LightGBM is named later in the sentence (grader_dev4's
    ml-10 short answer was charged). Said of LightGBM itself, it is charged."""
    right = (
        "Оба строят деревья на гистограммах: XGBoost — регуляризованная цель второго порядка и по умолчанию рост "
        "по уровням, LightGBM растёт по листьям, поэтому на малых данных легче переобучается."
    )
    g = _grade(bank, "ml-10", right)
    assert not g.misconceptions and not g.asks, (g.evidence, g.asks)  # XGBoost stands before «по уровням»
    spoken = (
        "ну разница в основном как дерево растёт иксджибуст растит по уровням у него регуляризованная цель "
        "второго порядка градиент и гессиан лайтджибиэм растит по листьям и на малых данных переобучается"
    )  # a transcript: no commas, LightGBM named far after «по уровням»
    assert not _grade(bank, "ml-10", spoken).misconceptions
    wrong = "LightGBM растит деревья по уровням, а XGBoost — по листьям, поэтому LightGBM медленнее."
    assert 0 in _grade(bank, "ml-10", wrong).misconceptions
    assert 0 in _grade(bank, "ml-10", "Деревья по уровням растит LightGBM, это его главное отличие.").misconceptions


def test_a_thorough_answer_is_asked_not_charged_on_its_words_lean_alone(bank: Bank) -> None:
    """grader_dev6's full answer to practical-04 states every key point and says focal loss «гасит вклад
    лёгких уже выученных примеров» — right; its words lean towards the listed «усиливает вклад лёгких».
    An answer that complete is asked about such a lean, not charged; a listed phrase still charges."""
    answer = dev_answer("grader_dev6", "practical-04", "full")
    g = _grade(bank, "practical-04", answer)
    assert len(g.covered) == len(bank.questions["practical-04"].key_points)
    assert not g.misconceptions and 6 in [i for i, _ in g.asks]


def test_a_formula_the_key_point_writes_covers_it(bank: Bank) -> None:
    """grader_dev7's short general-09 («Блок считает y = x + F(x), поэтому … ∂y/∂x = I + ∂F/∂x …»,
    expert 80) covered nothing and scored 0: the card's own formulas, in other words around them, now
    state the first two key points. Another formula states nothing."""
    right = (
        "Блок считает y = x + F(x), поэтому в градиенте есть слагаемое-единица: ∂y/∂x = I + ∂F/∂x, и сигнал "
        "доходит до ранних слоёв без перемножения десятков якобианов."
    )
    g = _grade(bank, "general-09", right)
    assert {0, 1} <= set(g.covered) and g.verdict != "weak"
    assert not _grade(bank, "general-09", "Блок считает y = F(x) · x, сигнал проходит дальше.").covered
    # a number or a bare equation of names tells nothing: «batch=1» stands in two opposite points of practical-06
    assert formulas("при K = 4096 и batch=1; H_kv = H — это MHA") == ()
    assert formulas("labels = -100 и strict=False, C ≈ 6·N·D") == ("labels=-100", "strict=false", "c≈6*n*d")

"""«считают» is a belief only when what follows is somebody's view («считают, что …»), not when it
means «compute» («loss считают по ответу»): an answer that computes the wrong thing is charged."""

from __future__ import annotations

import pytest

from bot.bank import Bank
from bot.core.frames import Frame
from bot.core.grading import grade
from bot.core.reading import read_sentences
from tests.conftest import shipped_bank


@pytest.fixture(scope="module")
def bank() -> Bank:
    return shipped_bank()


def _frames(text: str) -> set[Frame]:
    return {f for s in read_sentences(text) for _, _, _, f in s.words}


def test_counting_is_the_answers_own_claim() -> None:
    assert _frames("Loss считают по всей последовательности, включая промпт.") == {Frame.ASSERTED}


def test_a_belief_introduced_by_schitayut_is_distanced() -> None:
    assert Frame.DISTANCED in _frames("Считают, что loss берут по всей последовательности, но это не так.")
    assert Frame.DISTANCED in _frames("Многие считают, что loss берут по всей последовательности.")


def test_a_trap_the_answer_names_is_not_its_own_claim() -> None:
    """«ловушка», «грабли», "trap" introduce a pitfall as «подводные камни» do (design-11: «Ещё ловушка —
    даунсэмплинг негативов: без поправки … модель завышает CTR» was charged with «предсказания можно
    использовать как есть»)."""
    for text in (
        "Ещё ловушка — даунсэмплинг негативов: без поправки модель систематически завышает CTR.",
        "Классические грабли: warmup задают в эпохах.",
        "A classic trap: the scheduler is stepped once per epoch.",
    ):
        assert Frame.DISTANCED in _frames(text), text
    assert _frames("Ловить рыбу удочкой проще.") == {Frame.ASSERTED}


def test_what_people_often_do_to_a_term_is_their_practice() -> None:
    """«Часто warmup и total задают в эпохах и вызывают step() раз в эпоху — …» tells what people do
    (grader_dev4's refuting code-13 was charged on it); «часто модели ошибаются» is the answer's claim."""
    assert Frame.DISTANCED in _frames("Часто warmup и total задают в эпохах, но считать надо в шагах.")
    assert _frames("Часто модели ошибаются на длинных контекстах.") == {Frame.ASSERTED}


def test_then_after_a_refuted_belief_or_a_condition_is_what_would_follow() -> None:
    """«Часто думают, что X. Но тогда Y»: Y is what X would lead to (grader_dev4's refuting code-24 was
    charged on it); «Тогда» after the answer's own claim goes on with its own voice."""
    sentences = read_sentences(
        "Часто думают, что для packing хватает causal-маски. Но тогда второй документ видит первый, "
        "а позиции продолжаются с середины."
    )
    assert {f for _, _, _, f in sentences[1].words} == {Frame.CONDITION}
    sentences = read_sentences("Если не вычитать максимум, exp переполнится. Тогда softmax вернёт NaN.")
    assert {f for _, _, _, f in sentences[1].words} == {Frame.CONDITION}
    sentences = read_sentences("Маска отсекает чужие документы. Тогда позиции считаются заново.")
    assert {f for _, _, _, f in sentences[1].words} == {Frame.ASSERTED}


def test_only_a_header_of_pitfalls_reaches_to_the_paragraphs_end() -> None:
    """«**Частые ошибки**» over a list, «Подводные камни: …»: the list after it is of mistakes. «Не стоит путать
    X и Y: …» warns in its own sentence only; the answer goes on in its own voice (a wrong claim there counts)."""
    after = read_sentences("**Частые ошибки**\n- Шагать scheduler на каждом микробатче.")[-1]
    assert {f for _, _, _, f in after.words} == {Frame.DISTANCED}
    after = read_sentences("Подводные камни: пузырь простоя. Его уменьшают микробатчами.")[-1]
    assert {f for _, _, _, f in after.words} == {Frame.DISTANCED}
    after = read_sentences("Не стоит путать метрику и вероятности: это разное. Поэтому меняю порог.")[-1]
    assert {f for _, _, _, f in after.words} == {Frame.ASSERTED}


def test_a_temptation_set_against_is_not_the_answers_claim() -> None:
    """«Соблазнительно прогнать каждый пост через LLM, но …» (grader_dev5's refuting design-04 was charged
    with «проще прогонять через LLM каждый пост»)."""
    assert Frame.DISTANCED in _frames("Соблазнительно прогнать каждый пост через LLM, но это дорого и медленно.")
    assert Frame.DISTANCED in _frames("It is tempting to run every post through the LLM, but it is too slow.")
    assert Frame.DISTANCED in _frames(
        "Инстинкт инженера — сначала найти причину, а уже потом откатывать, но это ошибка."
    )


def test_otherwise_says_what_would_happen() -> None:
    """«…, иначе каждый ранк клипает по своей локальной норме» (grader_dev7's refuting code-14 was charged on it):
    what happens if not; «иначе говоря» ("in other words") goes on in the answer's voice."""
    words = read_sentences("Сумму квадратов собирают all-reduce, иначе каждый ранк клипает по своей норме.")[0].words
    assert {f for w, _, _, f in words if w in {"ранк", "клипает"}} == {Frame.CONDITION}
    assert {f for _, _, _, f in read_sentences("Иначе говоря, ранк клипает по своей норме.")[0].words} == {
        Frame.ASSERTED
    }


def test_what_people_often_do_after_a_phrase_of_place_is_their_practice() -> None:
    """grader_dev5's refuting design-08 was charged with «главная метрика — CER» on «Часто в таких
    системах главной метрикой берут CER распознавания, но низкий CER не гарантирует правильных полей»:
    no word before «берут» can be its subject. «Часто результат зависит от seed» is a claim («результат»
    is a subject, not a plural verb)."""
    practice = "Часто в таких системах главной метрикой берут CER распознавания, но низкий CER не гарантирует полей."
    assert Frame.DISTANCED in _frames(practice)
    assert _frames("Часто результат зависит от seed и порядка батчей.") == {Frame.ASSERTED}
    assert _frames("Часто в больших моделях градиенты взрываются.") == {Frame.ASSERTED}


def test_a_claim_restricted_by_only_if_is_not_the_absolute_claim(bank: Bank) -> None:
    """grader_dev7's refuting scratch-05: «…оптимум гарантирован только если луч шире числа всех
    вариантов» was charged with «beam search всегда находит самую вероятную» (its phrase «гарантирует
    оптимум»). A misconception that is itself the restriction still stands: «FSDP работает, только если
    вся модель помещается на одну GPU»."""
    restricted = "Оптимум гарантирован только если луч шире числа всех вариантов, так я его и проверяю."
    assert not grade(bank.questions["scratch-05"], restricted, bank.lexicon).misconceptions
    assert grade(bank.questions["scratch-05"], "Beam search гарантирует оптимум.", bank.lexicon).misconceptions
    fsdp = "FSDP работает, только если вся модель помещается на одну GPU, поэтому 70B так не обучить."
    assert 6 in grade(bank.questions["distributed-03"], fsdp, bank.lexicon).misconceptions


def test_nikakoy_negates_what_it_qualifies(bank: Bank) -> None:
    """«никакого приближения» says there is none (grader_dev4's spoken code-30 was charged with
    «FlashAttention — приближённое внимание» on «…то же самое что обычный аттеншн никакого приближения…»)."""
    spoken = "и это ровно то же самое что обычный аттеншн никакого приближения проверяем через аллклоуз"
    assert 2 not in grade(bank.questions["code-30"], spoken, bank.lexicon).misconceptions
    assert read_sentences("Никакого приближения в нём нет.")[0].words[0][:2] == ("приближения", True)

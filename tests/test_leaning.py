"""The grader's word model (bot/core/leaning.py): a listed error said in words none of its phrases
has is charged with the sentence that says it; the same error refuted, or said in English, is not; the
counts file is current for the bundled bank and only ever counts dev answers."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from bot.bank import Bank, Misconception
from bot.cli import main
from bot.core import leaning
from bot.core.grading import find_charges, grade, matcher_for
from tests.conftest import shipped_bank

# rag-11's misconception 1 («Дату или клиента можно просто дописать в текст запроса, и эмбеддинг сам
# найдёт нужное») said with none of its predicate phrases
IN_OTHER_WORDS = (
    "Фильтр по клиенту проще всего зашить в эмбеддинг: дописываем id клиента в текст чанка перед "
    "векторизацией, и поиск сам вернёт нужные документы."
)


@pytest.fixture(scope="module")
def bank() -> Bank:
    return shipped_bank()


def test_a_listed_error_in_other_words_is_charged_with_its_sentence(bank: Bank) -> None:
    q = bank.questions["rag-11"]
    answer = f"Гибридный поиск с BM25 и dense-векторами мне нравится. {IN_OTHER_WORDS}"
    matcher = matcher_for(bank.lexicon)
    charged, unsure, _, _ = find_charges(q, matcher.tokens(answer), matcher)
    assert not charged and not unsure  # the phrases alone do not see it
    g = grade(q, answer, bank.lexicon)
    assert g.misconceptions == (1,)
    assert g.evidence == (IN_OTHER_WORDS,)
    assert g.verdict == "weak"


def test_the_same_error_refuted_or_disputed_is_not_charged(bank: Bank) -> None:
    q = bank.questions["rag-11"]
    refuted = (
        "Часто думают, что фильтр по клиенту можно зашить в эмбеддинг, дописав id клиента в текст чанка, "
        "но это не так: права проверяют фильтром по метаданным."
    )
    g = grade(q, refuted, bank.lexicon)
    assert not g.misconceptions and not g.asks
    g = grade(q, IN_OTHER_WORDS, bank.lexicon, waived=frozenset({"m1"}))
    assert not g.misconceptions


def test_an_english_sentence_is_left_to_the_phrases(bank: Bank) -> None:
    # the correct texts the weights are counted on are Russian: English words would lean for their language
    english = (
        "The client filter is easiest to bake into the embedding: append the client id to the chunk text "
        "before vectorizing, and search returns the right documents by itself."
    )
    g = grade(bank.questions["rag-11"], english, bank.lexicon)
    assert not g.misconceptions and not g.asks


def test_the_counts_file_is_current_for_the_bundled_bank(bank: Bank) -> None:
    stale = [
        q.id
        for q in bank.questions.values()
        if (line := leaning.EVIDENCE_FILE.line(q.id)) is None
        or line["bank_stamp"] != leaning.bank_stamp(q)
        or line["text"] != leaning.text_stamp(q.text)
    ]
    assert not stale, (
        f"data/evidence/answers.jsonl is stale for {stale[:5]} ({len(stale)} questions): remake it with the "
        "command in tests/fixtures/README.md (interview-bot grade-evidence …)"
    )


def test_an_edited_question_is_counted_from_its_texts_and_answers_to_another_text_are_ignored(bank: Bank) -> None:
    q = bank.questions["rag-11"]
    matcher = matcher_for(bank.lexicon)
    line = leaning.EVIDENCE_FILE.line(q.id)
    assert line is not None and line["answers"]["n_wrong"] > 0
    new = Misconception(claim="Метаданные хранят в отдельной базе Redis.", correction="Нет.", match=("хранят в redis",))
    edited = dataclasses.replace(q, misconceptions=(*q.misconceptions, new))
    model = leaning.build_model(edited, matcher, bank.lexicon, line)
    assert len(model.vocab) == len(q.misconceptions) + 1
    assert {"redi", "hran"} <= model.vocab[-1]  # the keys of «Redis», «хранят»
    other = dataclasses.replace(q, text="Как устроен BM25?")
    assert leaning.build_model(other, matcher, bank.lexicon, line) == leaning.build_model(
        other, matcher, bank.lexicon, None
    )


ROWS = [
    {"question": "rag-11", "kind": "fluent_wrong", "score": 10, "text": IN_OTHER_WORDS},
    {"question": "rag-11", "kind": "short", "score": 80, "text": "Фильтруют по метаданным до поиска. Или после."},
]


@pytest.mark.slow  # counts every question's own texts: ~20 s
def test_grade_evidence_counts_dev_answers_per_question(tmp_path: Path) -> None:
    dev = tmp_path / "dev"
    dev.mkdir()
    (dev / "a.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in ROWS), encoding="utf-8")
    out = tmp_path / "counts.jsonl"
    assert main(["grade-evidence", str(dev), "--out", str(out)]) == 0
    lines = {json.loads(x)["question"]: json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()}
    assert len(lines) == len(shipped_bank().questions)
    answers = lines["rag-11"]["answers"]
    assert (answers["n_wrong"], answers["n_right"]) == (1, 2)
    assert lines["rag-12"]["answers"]["n_wrong"] == 0


def test_grade_evidence_refuses_a_test_set(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "counts.jsonl"
    test = tmp_path / "test"
    test.mkdir()
    (test / "README.md").write_text("**The whole set is a test set:** never read.", encoding="utf-8")
    (test / "a.jsonl").write_text(json.dumps(ROWS[0], ensure_ascii=False) + "\n", encoding="utf-8")
    assert main(["grade-evidence", str(test), "--out", str(out)]) == 2
    assert "is a test set" in capsys.readouterr().err
    blind3 = Path(__file__).parent / "fixtures" / "grader_blind3"
    assert main(["grade-evidence", str(blind3), "--out", str(out)]) == 2
    assert not out.exists()


# q770's misconception 2 («Любое действие субагента можно откатить компенсацией, даже отправленное
# письмо или платёж»), said with none of its predicate phrases, as its paraphrases say it
SAID_AS_WRITTEN = "Даже уже отправленное письмо или проведённый платёж субагента можно откатить компенсацией."


def test_a_misconception_said_as_candidates_say_it_is_charged_and_a_weaker_lean_only_asked(bank: Bank) -> None:
    q = bank.questions["q770"]
    matcher = matcher_for(bank.lexicon)
    charged, unsure, _, _ = find_charges(q, matcher.tokens(SAID_AS_WRITTEN), matcher)
    assert not charged and not unsure
    g = grade(q, f"Откат делегирования — возврат к снимку перед делегированием. {SAID_AS_WRITTEN}", bank.lexicon)
    assert g.misconceptions == (2,) and g.evidence == (SAID_AS_WRITTEN,)
    vaguer = "Письмо или платёж, уже отправленные субагентом, тоже откатываются компенсацией."
    g = grade(q, vaguer, bank.lexicon)
    assert not g.misconceptions and [i for i, _ in g.asks] == [2]


def test_paraphrases_count_only_for_the_claim_they_were_written_for(bank: Bank) -> None:
    q = bank.questions["q770"]
    matcher = matcher_for(bank.lexicon)
    line = leaning.EVIDENCE_FILE.line(q.id)
    assert line is not None
    as_shipped = leaning.build_model(q, matcher, bank.lexicon, line)
    m = q.misconceptions[2]
    edited = dataclasses.replace(
        q,
        misconceptions=(
            *q.misconceptions[:2],
            dataclasses.replace(m, claim="Компенсацией откатывают только внутренние действия."),
            *q.misconceptions[3:],
        ),
    )
    rebuilt = leaning.build_model(edited, matcher, bank.lexicon, line)
    assert rebuilt.said[2].n < as_shipped.said[2].n  # its six paraphrases no longer count
    assert rebuilt.said[1] == as_shipped.said[1]


def test_pasting_the_cards_own_sentence_is_never_charged(bank: Bank) -> None:
    # «справа для обучения, слева для генерации» shares its words with the wrong «для обучения паддят слева»
    for qid in ("code-17", "code-24", "scratch-07"):
        q = bank.questions[qid]
        g = grade(q, q.answer, bank.lexicon)
        assert not g.misconceptions and not g.asks, qid


def test_another_cards_sentence_of_the_topic_is_neither_charged_nor_asked(bank: Bank) -> None:
    # agent-03's card on ReAct («большая модель вызывается на каждом шаге…») shares words with agent-06's
    # wrong beliefs; the bank's own correct texts are right by the bank's word
    charged = [
        (q.id, other.id)
        for q in (bank.questions["agent-03"], bank.questions["scratch-05"])
        for other in bank.questions.values()
        if other.topic == q.topic and grade(other, q.answer, bank.lexicon).misconceptions
    ]
    assert not charged


def test_the_ask_reads_as_one_sentence_in_both_languages(bank: Bank) -> None:
    from bot.services.feedback import feedback_lines

    q = bank.questions["q770"]
    g = grade(q, "Письмо или платёж, уже отправленные субагентом, тоже откатываются компенсацией.", bank.lexicon)
    ru = " ".join(line.text for line in feedback_lines(q, g, "ru"))
    assert "вы имели в виду, что любое действие субагента можно откатить компенсацией" in ru
    assert "Если так, то это неверно. Необратимые действия не откатываются" in ru
    en = " ".join(line.text for line in feedback_lines(q, g, "en"))
    assert "To be sure" in en and "Любое действие субагента" in en  # the claim on a line of its own there

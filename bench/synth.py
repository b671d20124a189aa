"""Synthetic banks and users for the benchmarks.

- :func:`memory_bank` builds a large :class:`bot.bank.model.Bank` in memory (no YAML): question
  texts, key points and answers are sampled from the shipped bank's own words with their real
  frequencies, glossary terms are made of bank words, topic sizes are skewed.
- :func:`write_yaml_bank` writes a valid bank of N questions as YAML (one file per topic, like
  ``data/``): the shipped topics and glossary plus the shipped questions and variants of them
  (new ids and numbers, real answers and key points), so ``interview-bot validate`` accepts it.
"""

from __future__ import annotations

import random
import re
import shutil
import time
from collections import Counter
from collections.abc import Sequence
from itertools import accumulate
from pathlib import Path
from typing import Any

import yaml

from bot.bank import Bank, default_bank_path, load_bank
from bot.bank.model import KeyPoint, Question, QuestionExtras, Term, Topic

_WORD = re.compile(r"[A-Za-zА-Яа-яЁё][A-Za-zА-Яа-яЁё\-]{2,}")


class Vocabulary:
    """Words of the shipped bank with their frequencies (weighted sampling)."""

    def __init__(self, bank: Bank) -> None:
        counts: Counter[str] = Counter()
        for q in bank.questions.values():
            for text in (q.text, q.answer, *(kp.text for kp in q.key_points)):
                counts.update(w.lower() for w in _WORD.findall(text))
        for term in bank.terms.values():
            counts.update(w.lower() for w in _WORD.findall(term.definition))
        self.words = list(counts)
        self.cum = list(accumulate(counts[w] for w in self.words))
        self.latin = [w for w in self.words if w.isascii()]
        self.cyrillic = [w for w in self.words if not w.isascii()]

    def sample(self, rng: random.Random, k: int) -> list[str]:
        return rng.choices(self.words, cum_weights=self.cum, k=k)

    def sentence(self, rng: random.Random, lo: int, hi: int) -> str:
        words = self.sample(rng, rng.randint(lo, hi))
        return " ".join(words).capitalize()


def shipped_bank() -> Bank:
    return load_bank(default_bank_path())


def _unique_name(rng: random.Random, pool: Sequence[str], n_words: int, taken: set[str]) -> str:
    for _ in range(50):
        name = " ".join(rng.choice(pool) for _ in range(n_words))
        if name.casefold() not in taken:
            taken.add(name.casefold())
            return name
    n_words += 1
    return _unique_name(rng, pool, n_words, taken)


def memory_bank(
    n_questions: int = 100_000,
    n_terms: int = 5_000,
    n_topics: int = 24,
    seed: int = 1,
    answer_words: tuple[int, int] = (80, 160),
    timings: dict[str, float] | None = None,
) -> Bank:
    """A large synthetic bank built directly as model objects (``timings["bank_init"]``: the time of
    ``Bank(...)`` itself, i.e. building its indexes by id/number/topic)."""
    rng = random.Random(seed)
    vocab = Vocabulary(shipped_bank())
    topics = [
        Topic(
            f"topic-{i}",
            f"Тема {i} {vocab.cyrillic[i * 7 % len(vocab.cyrillic)]}",
            f"Topic {i} {vocab.latin[i * 5 % len(vocab.latin)]}",
            i,
        )
        for i in range(n_topics)
    ]
    topic_weights = list(accumulate(1.0 / (i + 1) ** 0.8 for i in range(n_topics)))  # skewed sizes
    taken: set[str] = set()
    term_ids = [f"term-{i}" for i in range(n_terms)]
    raw_terms = []
    for tid in term_ids:
        en = _unique_name(rng, vocab.latin, rng.choice((1, 2, 2, 3)), taken)
        ru = _unique_name(rng, vocab.cyrillic, rng.choice((1, 2, 2)), taken)
        aliases = tuple(
            _unique_name(rng, vocab.latin if rng.random() < 0.5 else vocab.cyrillic, rng.choice((1, 2, 3)), taken)
            for _ in range(rng.choice((0, 1, 2, 3, 4)))
        )
        raw_terms.append((tid, en, ru, aliases, vocab.sentence(rng, 25, 60)))
    term_weights = list(accumulate(1.0 / (i + 1) ** 0.6 for i in range(n_terms)))
    # one long stream of words sampled with the bank's frequencies, read in slices (fast)
    stream = vocab.sample(rng, 1_000_003)
    pos = 0

    def take(k: int) -> list[str]:
        nonlocal pos
        if pos + k > len(stream):
            pos = rng.randrange(1000)
        pos += k
        return stream[pos - k : pos]

    questions: list[Question] = []
    linked: dict[str, list[str]] = {}
    topic_picks = rng.choices(range(n_topics), cum_weights=topic_weights, k=n_questions)
    term_picks = rng.choices(term_ids, cum_weights=term_weights, k=n_questions * 3)
    for i in range(n_questions):
        qid = f"s{i}"
        kind = "task" if rng.random() < 0.1 else "question"
        topic = topics[topic_picks[i]].id
        terms = tuple(dict.fromkeys(term_picks[3 * i : 3 * i + rng.randint(1, 3)]))
        text_words = take(rng.randint(8, 16))
        points = []
        for _ in range(rng.randint(3, 6)):
            point_words = take(rng.randint(5, 9))
            match = tuple(" ".join(take(1 + (rng.random() < 0.4))) for _ in range(rng.randint(2, 5)))
            points.append(KeyPoint(" ".join(point_words).capitalize(), match))
        start = rng.randrange(len(stream) - answer_words[1])
        answer = " ".join(stream[start : start + rng.randint(*answer_words)])
        questions.append(
            Question.create(
                qid,
                kind,
                topic,
                " ".join(text_words).capitalize() + "?",
                answer,
                tuple(points),
                QuestionExtras(terms=terms, difficulty=rng.randint(1, 3), number=i + 1),
            )
        )
        for tid in terms:
            linked.setdefault(tid, []).append(qid)
    terms_out = [
        Term(tid, en, ru, aliases, definition, tuple(linked.get(tid, ())))
        for tid, en, ru, aliases, definition in raw_terms
    ]
    started = time.perf_counter()
    bank = Bank(topics, questions, terms_out, source="synthetic")
    if timings is not None:
        timings["bank_init"] = time.perf_counter() - started
    return bank


# -- a valid YAML bank ---------------------------------------------------------------------------
class _Dumper(yaml.CSafeDumper if hasattr(yaml, "CSafeDumper") else yaml.SafeDumper):  # type: ignore[misc]
    pass


def _str(dumper: yaml.SafeDumper, value: str) -> Any:
    if "\n" in value:
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="|")
    return dumper.represent_scalar("tag:yaml.org,2002:str", value)


_Dumper.add_representer(str, _str)


def _question_dict(q: Question, qid: str, number: int | None, suffix: str) -> dict[str, Any]:
    data: dict[str, Any] = {"id": qid}
    if number is not None:
        data["number"] = number
    data["kind"] = q.kind
    data["topic"] = q.topic
    data["difficulty"] = q.difficulty
    if q.source_file or q.source_section:
        data["source"] = {k: v for k, v in (("file", q.source_file), ("section", q.source_section)) if v}
    data["text"] = q.text + suffix
    data["terms"] = list(q.terms)
    data["key_points"] = [{"text": kp.text, "match": list(kp.match)} for kp in q.key_points]
    data["answer"] = q.answer.rstrip("\n") + "\n"
    return data


def write_yaml_bank(target: Path, n_questions: int = 10_000, files: int = 0, seed: int = 1) -> dict[str, Any]:
    """Write a valid bank of ``n_questions`` questions under ``target``; returns a description.

    ``files=0``: one questions file per topic (the shipped layout); otherwise that many files."""
    rng = random.Random(seed)
    src = default_bank_path()
    bank = load_bank(src)
    target.mkdir(parents=True, exist_ok=True)
    shutil.copy(src / "topics.yaml", target / "topics.yaml")
    shutil.copy(src / "glossary.yaml", target / "glossary.yaml")
    for folder in ("glossary", "synonyms"):  # the rest of the glossary, and the grader's synonyms
        if (src / folder).is_dir():
            shutil.copytree(src / folder, target / folder, dirs_exist_ok=True)
    originals = list(bank.questions.values())
    out: list[dict[str, Any]] = [_question_dict(q, q.id, q.number, "") for q in originals]
    next_number = {"question": 100_000, "task": 100_000}
    i = 0
    while len(out) < n_questions:
        q = originals[rng.randrange(len(originals))]
        i += 1
        next_number[q.kind] += 1
        out.append(_question_dict(q, f"x{i}", next_number[q.kind], f" (вариант {i})"))
    groups: dict[str, list[dict[str, Any]]] = {}
    if files <= 0:
        for item in out:
            groups.setdefault(item["topic"], []).append(item)
    else:
        for n, item in enumerate(out):
            groups.setdefault(f"part-{n % files:03d}", []).append(item)
    (target / "questions").mkdir(exist_ok=True)
    for name, items in groups.items():
        text = yaml.dump(
            {"questions": items},
            Dumper=_Dumper,
            allow_unicode=True,
            sort_keys=False,
            width=100,
            default_flow_style=None,
        )
        (target / "questions" / f"{name}.yaml").write_text(text, encoding="utf-8")
    paths = sorted(target.rglob("*.yaml"))
    return {"files": len(paths), "bytes": sum(p.stat().st_size for p in paths), "questions": len(out)}

"""The loaded question bank: immutable values with indexes by id, number, topic and term."""

from __future__ import annotations

import re
import zlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Final, Literal

Kind = Literal["question", "task"]
Weight = Literal["core", "bonus"]


def is_number(text: str) -> bool:
    """ASCII digits only ('¹'.isdigit() is True, but int('¹') fails)."""
    return text.isascii() and text.isdigit()


LANGUAGES = ("ru", "en")


@dataclass(frozen=True, slots=True)
class Location:
    file: str
    line: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"


@dataclass(frozen=True, slots=True)
class Topic:
    id: str
    title_ru: str
    title_en: str
    order: int
    area: str | None = None  # the syllabus area (``areas:``) the topic belongs to

    def title(self, lang: str) -> str:
        return self.title_en if lang == "en" else self.title_ru


@dataclass(frozen=True, slots=True)
class Area:
    """A syllabus area of an interview (``areas:``): topics belong to it through ``area:``, and
    ``target`` is how many items the bank aims to hold in it."""

    id: str
    title_ru: str
    title_en: str
    order: int
    target: int = 0

    def title(self, lang: str) -> str:
        return self.title_en if lang == "en" else self.title_ru


_PADDED_TAIL = re.compile(r"-0+(?=\d+$)")


def short_handle(question_id: str) -> str:
    """The handle of an unnumbered item: its id without the zero padding of its trailing number
    ('lora-04' → 'lora-4'); other ids are their own handle."""
    return _PADDED_TAIL.sub("-", question_id)


@dataclass(frozen=True, slots=True)
class KeyPoint:
    text: str
    match: tuple[str, ...]
    weight: Weight = "core"  # core: a correct answer must say it; bonus: extra depth, adds credit

    @property
    def core(self) -> bool:
        return self.weight == "core"


@dataclass(frozen=True, slots=True)
class Misconception:
    """A wrong claim candidates make, held against the answer as a claim (see docs/bank-format.md):
    ``match`` are its predicate phrases (what is wrongly said, YAML ``predicate:``), ``subject`` what
    it is said of (empty: the question's own subject), ``object`` what must stand in the same clause.
    ``weight`` is ``core`` (wrong about the heart of the question: the answer is weak) or ``side``
    (a slip on a detail: at most partial). ``correction`` is shown."""

    claim: str
    correction: str
    match: tuple[str, ...]
    weight: str = "core"
    subject: tuple[str, ...] = ()
    object: tuple[str, ...] = ()

    @property
    def core(self) -> bool:
        return self.weight == "core"


@dataclass(frozen=True, slots=True)
class FollowUp:
    """A question an interviewer asks next, with a short answer (``follow_ups:``)."""

    question: str
    answer: str


@dataclass(frozen=True, slots=True)
class QuestionExtras:
    """What a :class:`Question` holds besides its id, kind, topic, text, answer and key points, as
    :meth:`Question.create` takes it: glossary links, difficulty (the bank format's default, 2), its
    number, source, where it was read, the rubric's misconceptions, details, follow-ups, context, and
    the links to items asking the same (``same_as``) or an overlapping question (``overlaps``)."""

    terms: tuple[str, ...] = ()
    difficulty: int = 2
    number: int | None = None
    source_file: str | None = None
    source_section: str | None = None
    where: Location | None = None
    misconceptions: tuple[Misconception, ...] = ()
    details: str | None = None
    follow_ups: tuple[FollowUp, ...] = ()
    context: str | None = None
    original: bool = False
    same_as: tuple[str, ...] = ()
    overlaps: tuple[str, ...] = ()


NO_EXTRAS: Final = QuestionExtras()


@dataclass(frozen=True, slots=True)
class Question:
    """One bank item. The reference answer is kept zlib-compressed (``answer_z``; a large bank's
    answers are most of its memory) and decompressed on access (``answer``); build with
    :meth:`create`."""

    id: str
    kind: Kind
    topic: str
    text: str
    answer_z: bytes
    key_points: tuple[KeyPoint, ...]
    terms: tuple[str, ...]
    difficulty: int
    number: int | None = None
    source_file: str | None = None
    source_section: str | None = None
    where: Location | None = field(default=None, compare=False)
    misconceptions: tuple[Misconception, ...] = ()
    details_z: bytes | None = None
    follow_ups: tuple[FollowUp, ...] = ()
    context: str | None = None
    original: bool = False  # source: {kind: original}; written for the bank, not from a seed
    # Items asking the same question (``same_as:``) or overlapping it (``overlaps:``), made
    # symmetric by the loader: never asked back to back, named on each other's reference card.
    same_as: tuple[str, ...] = ()
    overlaps: tuple[str, ...] = ()

    @classmethod
    def create(
        cls, id: str, kind: Kind, topic: str, text: str, answer: str, key_points: tuple[KeyPoint, ...],
        extras: QuestionExtras = NO_EXTRAS,
    ) -> Question:  # fmt: skip
        """The item with its answer and details compressed; ``extras`` holds everything else."""
        e = extras
        details_z = zlib.compress(e.details.encode("utf-8"), 6) if e.details else None
        return cls(
            id, kind, topic, text, zlib.compress(answer.encode("utf-8"), 6), key_points, e.terms, e.difficulty,
            e.number, e.source_file, e.source_section, e.where, e.misconceptions, details_z, e.follow_ups,
            e.context, e.original, e.same_as, e.overlaps,
        )  # fmt: skip

    @property
    def answer(self) -> str:
        return zlib.decompress(self.answer_z).decode("utf-8")

    @property
    def details(self) -> str | None:
        """The rest of the reference answer (pitfalls, numbers, sources), shown on demand."""
        return None if self.details_z is None else zlib.decompress(self.details_z).decode("utf-8")

    @property
    def label(self) -> str:
        """The handle users refer to it by (``/q <handle>``, shown in every header): '463', 't13',
        or for an unnumbered item its id without zero padding ('lora-4' for ``lora-04``)."""
        if self.number is None:
            return short_handle(self.id)
        return f"t{self.number}" if self.kind == "task" else str(self.number)

    @property
    def linked(self) -> tuple[str, ...]:
        """Every item linked to this one (``same_as`` first, then ``overlaps``)."""
        return self.same_as + self.overlaps if self.overlaps else self.same_as


@dataclass(frozen=True, slots=True)
class Term:
    id: str
    term_en: str
    term_ru: str
    aliases: tuple[str, ...]
    definition: str
    questions: tuple[str, ...]  # explicit links ∪ questions naming this term, in bank order
    where: Location | None = field(default=None, compare=False)

    def name(self, lang: str) -> str:
        return self.term_en if lang == "en" or not self.term_ru else self.term_ru

    @property
    def names(self) -> tuple[str, ...]:
        seen: dict[str, None] = {}
        for n in (self.term_en, self.term_ru, *self.aliases):
            if n:
                seen.setdefault(n, None)
        return tuple(seen)


@dataclass(frozen=True, slots=True, eq=False)
class Lexicon:
    """Word families and bilingual synonyms (``synonyms:``; any member matches any other) and
    opposites (``antonyms:``; pairs whose swap reverses a claim: больше/меньше). Compared and
    hashed by identity: the grader keys its compiled matcher on it for every answer."""

    synonyms: tuple[tuple[str, ...], ...] = ()
    antonyms: tuple[tuple[str, str], ...] = ()


class Bank:
    """An immutable, validated bank. Build it with :func:`bot.bank.loader.load_bank`."""

    __slots__ = (
        "_area_topics",
        "_areas",
        "_areas_by_id",
        "_by_handle",
        "_by_number",
        "_by_topic",
        "_candidates",
        "_links",
        "_questions",
        "_terms",
        "_topics",
        "_topics_by_id",
        "lexicon",
        "source",
    )

    def __init__(
        self,
        topics: list[Topic],
        questions: list[Question],
        terms: list[Term],
        source: str = "",
        lexicon: Lexicon | None = None,
        areas: list[Area] | None = None,
    ) -> None:
        self.source = source
        self.lexicon = lexicon or Lexicon()
        self._topics = tuple(sorted(topics, key=lambda t: (t.order, t.id)))
        self._topics_by_id = MappingProxyType({t.id: t for t in self._topics})
        self._areas = tuple(sorted(areas or (), key=lambda a: (a.order, a.id)))
        self._areas_by_id = MappingProxyType({a.id: a for a in self._areas})
        self._area_topics = MappingProxyType(
            {a.id: tuple(t.id for t in self._topics if t.area == a.id) for a in self._areas}
        )
        self._questions = MappingProxyType({q.id: q for q in questions})
        self._by_number = MappingProxyType({(q.kind, q.number): q for q in questions if q.number is not None})
        self._links = MappingProxyType({q.id: q.linked for q in questions if q.linked})
        self._by_handle = MappingProxyType({q.label: q for q in questions if q.number is None and q.label != q.id})
        by_topic: dict[str, list[str]] = {t.id: [] for t in self._topics}
        for q in questions:
            by_topic[q.topic].append(q.id)
        self._by_topic = MappingProxyType({k: tuple(v) for k, v in by_topic.items()})
        self._terms = MappingProxyType({t.id: t for t in terms})
        # What /q draws from, per topic (None: the whole bank), with and without practice tasks.
        candidates: dict[tuple[str | None, bool], tuple[str, ...]] = {}
        for topic_id, ids in [(None, tuple(self._questions)), *self._by_topic.items()]:
            candidates[(topic_id, True)] = ids
            candidates[(topic_id, False)] = tuple(q for q in ids if self._questions[q].kind == "question")
        self._candidates = MappingProxyType(candidates)

    # Topics ---------------------------------------------------------------------------------
    @property
    def topics(self) -> tuple[Topic, ...]:
        return self._topics

    def topic(self, topic_id: str) -> Topic | None:
        return self._topics_by_id.get(topic_id)

    def topic_question_ids(self, topic_id: str) -> tuple[str, ...]:
        return self._by_topic.get(topic_id, ())

    # Syllabus areas -------------------------------------------------------------------------
    @property
    def areas(self) -> tuple[Area, ...]:
        """The syllabus areas in order (empty for a bank that defines none)."""
        return self._areas

    def area(self, area_id: str) -> Area | None:
        return self._areas_by_id.get(area_id)

    def area_topics(self, area_id: str) -> tuple[str, ...]:
        """Topic ids of an area, in menu order."""
        return self._area_topics.get(area_id, ())

    def area_question_ids(self, area_id: str) -> tuple[str, ...]:
        """Every item (questions and tasks) of an area's topics."""
        return tuple(qid for tid in self.area_topics(area_id) for qid in self._by_topic.get(tid, ()))

    def topics_by_area(self) -> list[tuple[Area | None, tuple[Topic, ...]]]:
        """The topics grouped by syllabus area, in syllabus order; topics in no area come last
        (under None). A bank without areas is one group of all its topics."""
        groups: list[tuple[Area | None, tuple[Topic, ...]]] = [
            (a, tuple(self._topics_by_id[tid] for tid in self.area_topics(a.id))) for a in self._areas
        ]
        loose = tuple(t for t in self._topics if t.area not in self._areas_by_id)
        if loose:
            groups.append((None, loose))
        return groups

    def area_counts(self) -> list[tuple[Area, int]]:
        """Each area with how many items it holds, in syllabus order."""
        return [(a, len(self.area_question_ids(a.id))) for a in self._areas]

    def candidates(self, topic_id: str | None, *, include_tasks: bool = False) -> tuple[str, ...]:
        """Question ids of a topic (None: all topics), in bank order; tasks only if asked."""
        return self._candidates.get((topic_id, include_tasks), ())

    # Questions ------------------------------------------------------------------------------
    @property
    def questions(self) -> Mapping[str, Question]:
        return self._questions

    def question(self, question_id: str) -> Question | None:
        return self._questions.get(question_id)

    def by_number(self, number: int, kind: Kind = "question") -> Question | None:
        return self._by_number.get((kind, number))

    def resolve(self, ref: str) -> Question | None:
        """A question by its handle or id: a number ('463'), a task 't13', an id ('lora-04') or
        the short handle of an unnumbered item ('lora-4')."""
        ref = ref.strip().lower().lstrip("#№")
        if is_number(ref):
            return self.by_number(int(ref))
        if ref[:1] == "t" and is_number(ref[1:]):
            return self.by_number(int(ref[1:]), "task") or self._questions.get(ref)
        if ref[:1] == "q" and is_number(ref[1:]):
            return self.by_number(int(ref[1:])) or self._questions.get(ref)
        return self._questions.get(ref) or self._by_handle.get(short_handle(ref))

    @property
    def links(self) -> Mapping[str, tuple[str, ...]]:
        """Every linked item's id → the ids linked to it (items without links are absent)."""
        return self._links

    def linked(self, question_id: str) -> tuple[str, ...]:
        """Ids of the items linked to one (``same_as`` / ``overlaps``, symmetric)."""
        q = self._questions.get(question_id)
        return q.linked if q is not None else ()

    # Glossary -------------------------------------------------------------------------------
    @property
    def terms(self) -> Mapping[str, Term]:
        return self._terms

    def term(self, term_id: str) -> Term | None:
        return self._terms.get(term_id)

    def summary(self) -> dict[str, object]:
        per_topic = {t.id: len(self._by_topic[t.id]) for t in self._topics}
        tasks = sum(1 for q in self._questions.values() if q.kind == "task")
        links = sum(len(t.questions) for t in self._terms.values())
        return {
            "topics": len(self._topics),
            "questions": len(self._questions) - tasks,
            "tasks": tasks,
            "per_topic": per_topic,
            "terms": len(self._terms),
            "links": links,
        }

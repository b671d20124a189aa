"""The Mini App's pages of the bank: the topics, a topic's questions, search, a question with its
answer card, the glossary and a term, in the viewer's language, each question marked answered or not."""

from __future__ import annotations

from typing import Any

from bot.bank import Bank, Question, Term
from bot.bank.markdown import inline_plain, to_html
from bot.catalog import Catalog
from bot.db import answers as answers_db
from bot.db.engine import Database

SEARCH_LIMIT = 80


def question_item(q: Question, bank: Bank, lang: str, answered: set[str] | None = None) -> dict[str, Any]:
    topic = bank.topic(q.topic)
    item: dict[str, Any] = {
        "id": q.id,
        "label": q.label,
        "kind": q.kind,
        "text": q.text,
        "difficulty": q.difficulty,
        "topic": topic.title(lang) if topic else q.topic,
    }
    if answered is not None:
        item["answered"] = q.id in answered
    return item


async def answered(db: Database, *, user_id: int) -> set[str]:
    async with db.read() as session:
        return await answers_db.answered_per_question(session, user_id)


def topics(catalog: Catalog, lang: str, done: set[str]) -> list[dict[str, Any]]:
    """The non-empty topics in syllabus order, each with its area (``area`` is None for a topic in
    no area): the Mini App heads the topics of a many-topic area with the area's title."""
    bank = catalog.bank
    return [
        {
            "id": topic.id,
            "title": topic.title(lang),
            "count": len(ids := bank.topic_question_ids(topic.id)),
            "answered": sum(1 for qid in ids if qid in done),
            "area": {"id": area.id, "title": area.title(lang)} if area else None,
        }
        for area, group in bank.topics_by_area()
        for topic in group
        if bank.topic_question_ids(topic.id)
    ]


def topic(catalog: Catalog, topic_id: str, lang: str, done: set[str]) -> dict[str, Any] | None:
    bank = catalog.bank
    found = bank.topic(topic_id)
    if found is None:
        return None
    questions = [question_item(bank.questions[qid], bank, lang, done) for qid in bank.topic_question_ids(topic_id)]
    return {"id": found.id, "title": found.title(lang), "questions": questions}


def search(catalog: Catalog, query: str, lang: str, done: set[str]) -> list[dict[str, Any]]:
    """The same search as /search: BM25 over stemmed, transliterated keys (Russian endings match)."""
    bank = catalog.bank
    hits = catalog.find(query, limit=SEARCH_LIMIT).hits
    return [question_item(q, bank, lang, done) for h in hits if (q := bank.question(h.question_id)) is not None]


def _term_ref(term: Term, lang: str) -> dict[str, Any]:
    return {"id": term.id, "name": term.name(lang), "en": term.term_en, "ru": term.term_ru}


def question(catalog: Catalog, question_id: str, lang: str, done: set[str]) -> dict[str, Any] | None:
    """The question page: the answer card (reference answer and key points), the details, the
    follow-ups, the glossary links."""
    bank = catalog.bank
    q = bank.question(question_id)
    if q is None:
        return None
    terms = [_term_ref(term, lang) for tid in q.terms if (term := bank.term(tid)) is not None]
    details = q.details
    return {
        **question_item(q, bank, lang, done),
        "topic_id": q.topic,
        "answer_html": to_html(q.answer),
        "key_points": [{"text": inline_plain(kp.text), "core": kp.core} for kp in q.key_points],
        "details_html": to_html(details) if details else None,
        "context": q.context,  # one line that makes a seed question understandable alone
        "similar": [question_item(other, bank, lang, done) for qid in q.linked if (other := bank.question(qid))],
        "follow_ups": [{"question": inline_plain(f.question), "answer_html": to_html(f.answer)} for f in q.follow_ups],
        "terms": terms,
    }


def glossary(catalog: Catalog, lang: str) -> dict[str, Any]:
    """Terms A–Z (by their English name, as /glossary lists them) and by topic."""
    bank = catalog.bank
    terms = sorted(bank.terms.values(), key=lambda term: term.term_en.casefold())
    by_topic = []
    for t in bank.topics:
        ids = set(bank.topic_question_ids(t.id))
        linked = [term.id for term in terms if ids.intersection(term.questions)]
        if linked:
            by_topic.append({"id": t.id, "title": t.title(lang), "terms": linked})
    return {"terms": [_term_ref(term, lang) for term in terms], "topics": by_topic}


def term(catalog: Catalog, term_id: str, lang: str, done: set[str]) -> dict[str, Any] | None:
    bank = catalog.bank
    found = bank.term(term_id)
    if found is None:
        return None
    questions = [question_item(q, bank, lang, done) for qid in found.questions if (q := bank.question(qid)) is not None]
    return {**_term_ref(found, lang), "aliases": list(found.aliases), "definition_html": to_html(found.definition),
            "questions": questions}  # fmt: skip

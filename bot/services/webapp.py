"""The Mini App's use cases: progress, the bank, the glossary, one's own answers and the group board.

Telegram-free; each function takes the Database and/or the catalog, the user id taken from the
Telegram-signed ``initData`` (never one from the request), a clock value and the user's zone and
language, and returns plain JSON-ready dicts.
"""

from __future__ import annotations

import json
from collections import Counter, OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta, tzinfo
from typing import Any

from bot.bank import Bank, Question, Term
from bot.bank.markdown import inline_plain, to_html
from bot.catalog import Catalog
from bot.core import srs, stats
from bot.core.grading import GOOD, PARTIAL
from bot.db import answers as answers_db
from bot.db import chat_store as chats_db
from bot.db import miniapp_queries as webapp_db
from bot.db.engine import Database
from bot.i18n import language_from_telegram
from bot.services import quizzes
from bot.services.user_data import user_zone

HEATMAP_WEEKS = 26
WEAKEST = 8
PAGE = 10  # answers per page: each comes with its reference answer
SEARCH_LIMIT = 80
# a self-assessment as a share of the answer known («Знал», «Частично», «Не знал»)
GRADE_QUALITY = {3: 1.0, 2: 0.5, 1: 0.0}
VERDICTS = ("good", "partial", "weak")


@dataclass(frozen=True, slots=True)
class Viewer:
    """Who opened the app, as stored: the interface language and the time zone."""

    user_id: int
    lang: str
    zone: str
    tz: tzinfo
    known: bool  # the bot has a row for this user (they talked to it)


async def viewer(
    db: Database, *, user_id: int, tg_language: str | None, default_lang: str, default_zone: str
) -> Viewer:
    async with db.read() as session:
        user = await chats_db.get_user(session, user_id)
    lang = (user.language if user else None) or language_from_telegram(tg_language, default_lang)
    zone, tz = user_zone(user.timezone if user else None, default_zone)
    return Viewer(user_id, lang, zone, tz, user is not None)


def _day(d: date) -> str:
    return d.isoformat()


def _covered(text: str | None) -> set[int] | None:
    if text is None:
        return None
    out = set()
    for part in text.split(","):
        if part.strip().isdigit():
            out.add(int(part))
    return out


def verdict(coverage: float | None) -> str | None:
    if coverage is None:
        return None
    return "good" if coverage >= GOOD else "partial" if coverage >= PARTIAL else "weak"


# Progress -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Digest:
    """A user's answers as the progress screen needs them, in one zone: per-day counts, per question
    the latest grades, and how often each key point was graded and covered. Never changed once made:
    new answers make a new digest from it (:func:`_extend`)."""

    count: int  # answers digested
    newest: int  # the highest answer id digested (0: none)
    per_day: Counter[date]
    summary: dict[str, stats.QuestionSummary]
    graded: Counter[str]  # per question: graded answers
    hits: Counter[tuple[str, int]]  # per (question, key point): graded answers that covered it
    pending: frozenset[int]  # answers not graded yet (an LLM grade may be attached later)


class ProgressCache:
    """Digests of recent users' answers, each with the mark it was made at (:func:`_mark`) and how
    many answers the copy kept in the database covers. Unchanged mark: the digest is used as it is;
    new answers only (the count grew by the answers above the newest id digested): they are added to
    it; anything else (a deletion, /forget): made again. Per process and checked against the database
    on every use, so several instances never show stale data; keyed by the zone too."""

    def __init__(self, size: int = 1024) -> None:
        self.size = size
        self._items: OrderedDict[tuple[Any, ...], tuple[str, Digest, int]] = OrderedDict()

    def get(self, key: tuple[Any, ...]) -> tuple[str, Digest, int] | None:
        found = self._items.get(key)
        if found is not None:
            self._items.move_to_end(key)
        return found

    def put(self, key: tuple[Any, ...], mark: str, value: Digest, stored: int) -> None:
        self._items[key] = (mark, value, stored)
        self._items.move_to_end(key)
        while len(self._items) > self.size:
            self._items.popitem(last=False)


EXTEND_LIMIT = 500  # more new (or ungraded) answers than this: the digest is made again


def _slot_seconds(now: datetime, tz: tzinfo) -> int:
    """Answers are counted per UTC hour, per quarter hour in zones such as Asia/Kolkata."""
    instants = (now, now - timedelta(days=182))
    whole = all((i.astimezone(tz).utcoffset() or timedelta(0)) % timedelta(hours=1) == timedelta(0) for i in instants)
    return webapp_db.HOUR if whole else webapp_db.QUARTER


def _summary(questions: Iterable[webapp_db.QuestionStat]) -> dict[str, stats.QuestionSummary]:
    return {q.question_id: stats.QuestionSummary(q.question_id, q.answers, q.coverage, q.self_grade) for q in questions}


def _count_covered(graded: Counter[str], hits: Counter[tuple[str, int]], qid: str, text: str, n: int = 1) -> None:
    graded[qid] += n
    for part in text.split(","):
        if part.isdigit():
            hits[(qid, int(part))] += n


def digest(found: webapp_db.AnswerStats, tz: tzinfo, count: int, newest: int) -> Digest:
    per_day: Counter[date] = Counter()
    for slot, n in found.slots:
        per_day[slot.astimezone(tz).date()] += n
    graded: Counter[str] = Counter()
    hits: Counter[tuple[str, int]] = Counter()
    for qid, text, n in found.covered:
        _count_covered(graded, hits, qid, text, n)
    return Digest(count, newest, per_day, _summary(found.questions), graded, hits, frozenset(found.pending))


async def _extend(session: Any, old: Digest, user_id: int, tz: tzinfo, count: int) -> Digest | None:
    """``old`` with the answers added since it was made and the grades attached since; None when
    that is not all that changed (then the digest is made again)."""
    new = await webapp_db.answers_after(session, user_id, old.newest, EXTEND_LIMIT + 1)
    if len(new) > EXTEND_LIMIT or len(old.pending) > EXTEND_LIMIT or old.count + len(new) != count:
        return None
    per_day, graded, hits = Counter(old.per_day), Counter(old.graded), Counter(old.hits)
    pending = set()
    for row in new:
        per_day[row.created_at.astimezone(tz).date()] += 1
        if row.covered is None:
            pending.add(row.id)
        else:
            _count_covered(graded, hits, row.question_id, row.covered)
    if old.pending:
        now_graded = await webapp_db.covered_of(session, user_id, sorted(old.pending))
        if len(now_graded) != len(old.pending):
            return None  # some were deleted
        for answer_id, (qid, text) in now_graded.items():
            if text is None:
                pending.add(answer_id)
            else:
                _count_covered(graded, hits, qid, text)
    summary = _summary(await webapp_db.question_stats(session, user_id))
    newest = new[-1].id if new else old.newest
    return Digest(count, newest, per_day, summary, graded, hits, frozenset(pending))


STORE_EVERY = 25  # answers: the stored digest is replaced when it lags the cached one by this many


def _mark(answers: tuple[int, int | None], cards: tuple[Any, ...]) -> str:
    return json.dumps([*answers, *cards], default=str)


def dump_digest(d: Digest) -> str:
    return json.dumps(
        {
            "count": d.count,
            "newest": d.newest,
            "days": {day.isoformat(): n for day, n in d.per_day.items()},
            "summary": [[s.question_id, s.answers, s.coverage, s.self_grade] for s in d.summary.values()],
            "graded": d.graded,
            "hits": [[qid, i, n] for (qid, i), n in d.hits.items()],
            "pending": sorted(d.pending),
        },
        separators=(",", ":"),
    )


def load_digest(text: str) -> Digest | None:
    """A stored digest, or None when it cannot be read (it is made again then)."""
    try:
        raw = json.loads(text)
        return Digest(
            count=int(raw["count"]),
            newest=int(raw["newest"]),
            per_day=Counter({date.fromisoformat(day): int(n) for day, n in raw["days"].items()}),
            summary={q: stats.QuestionSummary(q, int(n), c, g) for q, n, c, g in raw["summary"]},
            graded=Counter({q: int(n) for q, n in raw["graded"].items()}),
            hits=Counter({(q, int(i)): int(n) for q, i, n in raw["hits"]}),
            pending=frozenset(int(i) for i in raw["pending"]),
        )
    except (ValueError, TypeError, KeyError, AttributeError):
        return None


async def _digest_for(
    db: Database,
    cache: ProgressCache | None,
    key: tuple[Any, ...],
    user_id: int,
    tz: tzinfo,
    slot_seconds: int,
    *,
    reuse: bool = True,
) -> Digest:
    """The user's digest: from this process's cache, else from the database's copy, extended with
    what changed since; made anew from the answers only when neither can be used. The database's
    copy is replaced when it was made anew or lags ``STORE_EVERY`` answers behind. ``reuse=False``:
    made anew from the answers, nothing kept (a check of the other paths)."""
    zone = f"{key[1]}|{slot_seconds}"
    async with db.read() as session:
        answers, cards = await webapp_db.answers_mark(session, user_id)
        count, newest = answers
        mark = _mark(answers, cards)
        cached = cache.get(key) if cache is not None else None
        stored = 0
        if cached is None and reuse:
            kept = await webapp_db.stored_digest(session, user_id)
            old = load_digest(kept.body) if kept is not None and kept.zone == zone else None
            if kept is not None and old is not None:
                cached = (kept.mark, old, old.count)
        found: Digest | None = None
        if cached is not None:
            stored = cached[2]
            if cached[0] == mark:
                found = cached[1]
            else:
                found = await _extend(session, cached[1], user_id, tz, count)
        if found is None:
            # only the answers the mark counted: one that arrives meanwhile is added next time
            stats_ = await webapp_db.answer_stats(session, user_id, slot_seconds=slot_seconds, up_to=newest or 0)
            found = digest(stats_, tz, count, newest or 0)
            stored = -1
    if reuse and count and (stored < 0 or abs(found.count - stored) >= STORE_EVERY):
        async with db.write() as session:
            await webapp_db.store_digest(session, user_id, zone, mark, dump_digest(found))
        stored = found.count
    if cache is not None:
        cache.put(key, mark, found, stored)
    return found


async def progress(
    db: Database,
    catalog: Catalog,
    *,
    user_id: int,
    now: datetime,
    tz: tzinfo,
    lang: str,
    cache: ProgressCache | None = None,
    reuse: bool = True,
) -> dict[str, Any]:
    """The heatmap of answer days (the last 26 weeks, in the user's zone), streaks, mastery per topic
    (FSRS recall × the latest grade), cards due now (as /review counts them) and later in the next
    7 days, the weakest key points.
    ``reuse=False``: from the answers alone, neither a cached nor a stored digest."""
    bank = catalog.bank
    slot_seconds = _slot_seconds(now, tz)
    key = (user_id, str(tz), slot_seconds)
    found = await _digest_for(db, cache if reuse else None, key, user_id, tz, slot_seconds, reuse=reuse)
    async with db.read() as session:
        cards = await webapp_db.card_stats(session, user_id)
    today = now.astimezone(tz).date()
    start = today - timedelta(days=today.weekday()) - timedelta(weeks=HEATMAP_WEEKS - 1)
    heat = {_day(d): n for d, n in found.per_day.items() if start <= d <= today}
    streak = stats.streak(found.per_day.keys(), today)
    return {
        "today": _day(today),
        "heatmap": {"start": _day(start), "end": _day(today), "days": heat, "active_days": len(heat)},
        "streak": {"current": streak.current, "longest": streak.best, "today": streak.today},
        "totals": {
            "answers": found.count,
            "questions": sum(1 for qid in found.summary if bank.question(qid) is not None),
            "total": len(bank.questions),
        },
        "topics": _mastery(bank, found.summary, cards, now, lang),
        "due": _due(bank, cards, now, tz, today),
        "weakest": [_weak_point(bank.questions[q], i, n, m, bank, lang) for q, i, n, m in _weakest_points(bank, found)],
    }


def _weak_point(q: Question, index: int, missed: int, seen: int, bank: Bank, lang: str) -> dict[str, Any]:
    return {
        "question": question_item(q, bank, lang),
        "point": inline_plain(q.key_points[index].text),
        "missed": missed,
        "of": seen,
    }


def _mastery(
    bank: Bank,
    summary: dict[str, stats.QuestionSummary],
    cards: list[webapp_db.CardStat],
    now: datetime,
    lang: str,
) -> list[dict[str, Any]]:
    recall = {c.question_id: srs.retrievability(c.state, now) for c in cards if c.question_id in summary}
    out = []
    for topic in bank.topics:
        ids = bank.topic_question_ids(topic.id)
        answered = [summary[qid] for qid in ids if qid in summary]
        score = 0.0
        for s in answered:
            quality = GRADE_QUALITY.get(s.self_grade or 0, s.coverage)
            score += (quality if quality is not None else 0.5) * recall.get(s.question_id, 1.0)
        out.append(
            {
                "id": topic.id,
                "title": topic.title(lang),
                "total": len(ids),
                "answered": len(answered),
                "mastery": stats.percent(score / len(ids)) if ids and score > 0 else 0,
            }
        )
    return out


def _due(bank: Bank, cards: list[webapp_db.CardStat], now: datetime, tz: tzinfo, today: date) -> dict[str, Any]:
    ends = [datetime.combine(today + timedelta(days=i + 1), time(0), tzinfo=tz) for i in range(8)]
    counts = [0] * 8  # today (overdue included), then each of the next 7 days
    for card in cards:
        if bank.question(card.question_id) is None:
            continue
        for i, end in enumerate(ends):
            if card.due < end:
                counts[i] += 1
                break
    week = [{"date": _day(today + timedelta(days=i)), "count": counts[i]} for i in range(1, 8)]
    due = len(srs.due_now(((c.question_id, c.due) for c in cards), now, bank.question))  # as /review and /stats
    # «Сейчас» is what /review gives now; the rest of today comes later, with the next 7 days
    return {"now": due, "later_today": counts[0] - due, "week": week,
            "week_total": counts[0] - due + sum(counts[1:])}  # fmt: skip


def _weakest_points(bank: Bank, found: Digest) -> list[tuple[str, int, int, int]]:
    """Key points most often missed over the graded answers (ties: the larger share missed), as
    (question, key point, missed, graded); questions no longer in the bank are left out."""
    missed: dict[tuple[str, int], int] = {}
    for qid, total in found.graded.items():
        q = bank.question(qid)
        for i in range(len(q.key_points) if q else 0):
            if n := total - found.hits[(qid, i)]:
                missed[(qid, i)] = n
    ranked = sorted(missed, key=lambda k: (-missed[k], -missed[k] / found.graded[k[0]], k))[:WEAKEST]
    return [(qid, i, missed[(qid, i)], found.graded[qid]) for qid, i in ranked]


# The bank ---------------------------------------------------------------------------------------


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


# My answers -------------------------------------------------------------------------------------


async def my_answers(
    db: Database,
    catalog: Catalog,
    *,
    user_id: int,
    tz: tzinfo,
    lang: str,
    topic_id: str | None = None,
    grade: str | None = None,
    before: int | None = None,
) -> dict[str, Any]:
    """The user's answers (in private chats and groups alike, only theirs), newest first, each with
    the reference answer, the key points covered and missed and the self-assessment. ``grade``:
    ``good``/``partial``/``weak`` (the grader's verdict) or ``1``..``3`` (the self-assessment)."""
    bank = catalog.bank
    ids = list(bank.topic_question_ids(topic_id)) if topic_id else None
    self_grade = int(grade) if grade in ("1", "2", "3") else None
    async with db.read() as session:
        rows = await webapp_db.answers_page(
            session, user_id, question_ids=ids, self_grade=self_grade,
            verdict=grade if grade in VERDICTS else None, before_id=before, limit=PAGE + 1,
        )  # fmt: skip
    more = len(rows) > PAGE
    rows = rows[:PAGE]
    items = []
    references: dict[str, Any] = {}
    for row in rows:
        q = bank.question(row.question_id)
        covered = _covered(row.covered)
        item: dict[str, Any] = {
            "id": row.id,
            "question_id": row.question_id,
            "question": question_item(q, bank, lang) if q else None,
            "text": row.text,
            "at": row.created_at.astimezone(tz).strftime("%Y-%m-%d %H:%M"),
            "edited": row.edited,
            "score": None if row.coverage is None else round(row.coverage * 100),
            "verdict": verdict(row.coverage),
            "self_grade": row.self_grade,
            "group": row.chat_title if row.chat_id != user_id else None,
            "covered": [],
            "missed": [],
        }
        if q is not None:
            if covered is not None:
                item["covered"] = [kp.text for i, kp in enumerate(q.key_points) if i in covered]
                item["missed"] = [kp.text for i, kp in enumerate(q.key_points) if i not in covered]
            if q.id not in references:
                references[q.id] = to_html(q.answer)
        items.append(item)
    return {"items": items, "references": references, "next": rows[-1].id if more and rows else None}


# The group board --------------------------------------------------------------------------------


async def board(db: Database, *, chat_id: int, user_id: int, zone: str, now: datetime) -> dict[str, Any]:
    """The group's board this week and of all time, as /top shows it (members who said /top off
    are not listed). Ids are not sent: only names, points and whether a row is the viewer's."""
    out: dict[str, Any] = {}
    for period in ("week", "all"):
        found = await quizzes.board(db, chat_id=chat_id, period=period, zone=zone, now=now)
        out[period] = [
            {"name": r.name, "points": round(r.points, 1), "questions": r.questions, "quiz": r.quiz_correct,
             "me": r.user_id == user_id}
            for r in found.rows
        ]  # fmt: skip
        if found.since is not None:
            out["since"] = _day(found.since)
    return out


async def group_of(db: Database, chat_id: int) -> dict[str, Any] | None:
    """A group the bot knows: its title and zone (None: not a group the bot is in)."""
    async with db.read() as session:
        chat = await chats_db.get_chat(session, chat_id)
    if chat is None or chat.type not in ("group", "supergroup"):
        return None
    return {"id": chat.id, "title": chat.title or "", "zone": chat.timezone}

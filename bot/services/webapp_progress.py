"""The Mini App's progress screen: the heatmap of answer days, streaks, mastery per topic, the cards
due and the weakest key points.

A user's answers are read as a :class:`Digest` (per-day counts, the latest grades per question, how
often each key point was covered), cached per process and kept in the database, and extended with
the answers given since instead of read again.
"""

from __future__ import annotations

import json
from collections import Counter, OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta, tzinfo
from typing import Any

from bot.bank import Bank, Question
from bot.bank.markdown import inline_plain
from bot.catalog import Catalog
from bot.core import srs, stats
from bot.db import miniapp_queries as webapp_db
from bot.db.engine import Database
from bot.services.webapp import Viewer
from bot.services.webapp_bank import question_item

HEATMAP_WEEKS = 26
WEAKEST = 8
# a self-assessment as a share of the answer known («Знал», «Частично», «Не знал»)
GRADE_QUALITY = {3: 1.0, 2: 0.5, 1: 0.0}


def _day(d: date) -> str:
    return d.isoformat()


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
    viewer: Viewer,
    *,
    now: datetime,
    cache: ProgressCache | None = None,
    reuse: bool = True,
) -> dict[str, Any]:
    """The heatmap of answer days (the last 26 weeks, in the viewer's zone), streaks, mastery per topic
    (FSRS recall × the latest grade), cards due now (as /review counts them) and later in the next
    7 days, the weakest key points.
    ``reuse=False``: from the answers alone, neither a cached nor a stored digest."""
    bank, user_id, tz, lang = catalog.bank, viewer.user_id, viewer.tz, viewer.lang
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

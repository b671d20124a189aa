"""Question picking, search and glossary lookup at scale, in memory: a synthetic bank of 100,000
questions (bench.synth.memory_bank: words of the shipped bank with their frequencies, 24 topics of
skewed sizes, ~5,000 glossary terms with aliases) and 100,000 users with seen-count histories
(log-normal sizes, median 25 questions, capped at 2,000; 0.2 % "completionists" who have seen every
question of their topic).

Timed paths (the CPU work of the handlers, without Telegram or the database):
- ``/q <topic>``: Catalog.find_topic + candidates_for + pick + the "all seen" round check, exactly
  as bot/tg/handlers/questions.py:cmd_q/next_question do; also without a topic (the whole bank)
  and for completionists (the slow path of pick);
- ``/search``: Catalog.search.search(query, limit=80) (browse.show_search);
- ``/glossary <word>``: GlossaryIndex.lookup + is_sure (browse.show_term_lookup).
Also: index build times (Bank, SearchIndex, GlossaryIndex) and RSS after each step.
"""

from __future__ import annotations

import argparse
import math
import random
import time
from collections.abc import Callable
from typing import Any

from bench.common import banner, fmt, median, rss_mb, summary, table


def _histories(
    bank: Any, n_users: int, rng: random.Random, completionists: float
) -> tuple[list[dict[str, int]], list[str]]:
    topics = [t.id for t in bank.topics]
    sizes = [len(bank.topic_question_ids(t)) for t in topics]
    by_topic = {t: bank.topic_question_ids(t) for t in topics}
    all_ids = list(bank.questions)
    users: list[dict[str, int]] = []
    homes: list[str] = []
    for _ in range(n_users):
        home = rng.choices(topics, weights=sizes)[0]
        homes.append(home)
        if rng.random() < completionists:
            seen = dict.fromkeys(by_topic[home], 1)
            for qid in rng.sample(by_topic[home], max(1, len(by_topic[home]) // 3)):
                seen[qid] = 2  # in the second round
        else:
            n = min(2000, int(rng.lognormvariate(math.log(25), 1.0)))
            own = rng.sample(by_topic[home], min(len(by_topic[home]), int(n * 0.8)))
            other = [all_ids[rng.randrange(len(all_ids))] for _ in range(n - len(own))]
            seen = dict.fromkeys(own + other, 1)
            for qid in own[: len(own) // 10]:
                seen[qid] = 2
        users.append(seen)
    return users, homes


def _q_path(catalog: Any, seen: dict[str, int], arg: str, rng: random.Random) -> str | None:
    """The CPU work of /q [topic] (bot/tg/handlers/questions.py: cmd_q → next_question)."""
    from bot.core.picking import candidates_for, pick

    bank = catalog.bank
    topic = None
    if arg:
        found = catalog.find_topic(arg)
        topic = found.id if found else None
    ids = candidates_for(bank, topic)
    qid = pick(ids, seen, rng)
    if len(seen) >= len(ids):
        counts = {seen.get(i, 0) for i in ids}
        _ = len(counts) == 1 and 0 not in counts
    return qid


def _time(fn: Callable[[], object], n: int) -> list[float]:
    out = []
    for _ in range(n):
        t0 = time.perf_counter_ns()
        fn()
        out.append((time.perf_counter_ns() - t0) / 1e6)
    return out


def _typo(rng: random.Random, word: str) -> str:
    if len(word) < 4:
        return word
    i = rng.randrange(1, len(word) - 1)
    op = rng.random()
    if op < 0.33:
        return word[:i] + word[i + 1 :]
    if op < 0.66:
        return word[: i - 1] + word[i] + word[i - 1] + word[i + 1 :]
    return word[:i] + rng.choice("аеиоуaeiou") + word[i:]


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--questions", type=int, default=100_000)
    p.add_argument("--users", type=int, default=100_000)
    p.add_argument("--terms", type=int, default=5_000)
    p.add_argument("--topics", type=int, default=24)
    p.add_argument("--completionists", type=float, default=0.002, help="share of users who saw a whole topic")
    p.add_argument("--queries", type=int, default=1000, help="/q picks per repeat")
    p.add_argument("--search-queries", type=int, default=40, help="/search queries per repeat")
    p.add_argument("--glossary-queries", type=int, default=60, help="/glossary lookups per repeat")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--seed", type=int, default=7)


def run(args: argparse.Namespace) -> int:
    from bench import synth
    from bot.catalog import Catalog
    from bot.core.search import GlossaryIndex, SearchIndex

    rng = random.Random(args.seed)
    builds: list[list[str]] = []
    rss0 = rss_mb()
    banner(f"building a synthetic bank: {args.questions:,} questions, {args.terms:,} terms, {args.topics} topics")
    timings: dict[str, float] = {}
    t0 = time.perf_counter()
    bank = synth.memory_bank(args.questions, args.terms, args.topics, seed=args.seed, timings=timings)
    gen = time.perf_counter() - t0
    rss_bank = rss_mb()
    builds.append(
        [
            "Bank(...) indexes (id, number, topic)",
            fmt(timings["bank_init"] * 1000, 0),
            fmt(rss_bank - rss0, 0),
            f"generating the objects took {gen:.1f} s (not the bot's cost)",
        ]
    )
    t0 = time.perf_counter()
    search = SearchIndex(bank)
    t_search = time.perf_counter() - t0
    rss_search = rss_mb()
    builds.append(
        [
            "SearchIndex (BM25 postings)",
            fmt(t_search * 1000, 0),
            fmt(rss_search - rss_bank, 0),
            f"{len(search._postings):,} keys",
        ]
    )
    t0 = time.perf_counter()
    glossary = GlossaryIndex(bank)
    t_gloss = time.perf_counter() - t0
    rss_gloss = rss_mb()
    builds.append(
        [
            "GlossaryIndex",
            fmt(t_gloss * 1000, 0),
            fmt(rss_gloss - rss_search, 0),
            f"{len(glossary._names):,} names and aliases",
        ]
    )
    catalog = Catalog(bank, search, glossary, loaded_at=None)  # type: ignore[arg-type]
    t0 = time.perf_counter()
    users, homes = _histories(bank, args.users, rng, args.completionists)
    t_users = time.perf_counter() - t0
    rss_users = rss_mb()
    sizes = [len(u) for u in users]
    builds.append(
        [
            f"{args.users:,} user histories (seen-count dicts)",
            fmt(t_users * 1000, 0),
            fmt(rss_users - rss_gloss, 0),
            f"sizes p50 {percentile_int(sizes, 50)}, p99 {percentile_int(sizes, 99)}, max {max(sizes)}",
        ]
    )
    banner("build time and memory")
    print(table(["step", "ms", "RSS + MB", "note"], builds))
    print(f"process RSS: {rss_users:,.0f} MB")

    topic_titles = {t.id: t.title_ru for t in bank.topics}
    completionist_ids = [i for i, u in enumerate(users) if len(u) >= len(bank.topic_question_ids(homes[i]))]
    words = [w for q in list(bank.questions.values())[:5000] for w in q.text.rstrip("?").split()]
    names = [n for term in list(bank.terms.values()) for n in term.names]
    results: dict[str, list[dict[str, float]]] = {}

    def record(name: str, values: list[float]) -> None:
        results.setdefault(name, []).append(summary(values))

    def one_repeat(r: int) -> None:
        sample = [rng.randrange(len(users)) for _ in range(args.queries)]
        it = iter(sample)
        record(
            "/q <topic> (user's topic)",
            _time(lambda: _q_path(catalog, users[(u := next(it))], homes[u], rng), args.queries),
        )
        it = iter(sample)
        record(
            "/q <topic> (random topic, by title)",
            _time(
                lambda: _q_path(catalog, users[next(it)], topic_titles[rng.choice(list(topic_titles))], rng),
                args.queries,
            ),
        )
        it = iter(sample)
        record(
            "/q (no filter: whole bank)", _time(lambda: _q_path(catalog, users[next(it)], "", rng), args.queries // 10)
        )
        if completionist_ids:
            it = iter(rng.choices(completionist_ids, k=args.queries // 4))
            record(
                "/q <topic>, topic fully seen (slow path)",
                _time(lambda: _q_path(catalog, users[(u := next(it))], homes[u], rng), args.queries // 4),
            )
        from bot.core.picking import candidates_for, pick

        big = max(bank.topics, key=lambda t: len(bank.topic_question_ids(t.id))).id
        cands = candidates_for(bank, big)
        it = iter(sample)
        record(
            f"  pick() alone, largest topic ({len(cands):,})",
            _time(lambda: pick(cands, users[next(it)], rng), args.queries),
        )
        record("  candidates_for() alone, largest topic", _time(lambda: candidates_for(bank, big), args.queries // 4))
        queries = []
        for _ in range(args.search_queries):
            k = rng.choice((1, 1, 2, 2, 3))
            queries.append(" ".join(rng.choice(words).lower().strip(",.:;()«»") for _ in range(k)))
        it_q = iter(queries)
        record("/search (limit 80)", _time(lambda: search.search(next(it_q), limit=80), len(queries)))
        lookups = []
        for _ in range(args.glossary_queries):
            roll = rng.random()
            name = rng.choice(names)
            lookups.append(name if roll < 0.4 else _typo(rng, name) if roll < 0.8 else rng.choice(words))
        it_g = iter(lookups)

        def gloss() -> None:
            matches = glossary.lookup(next(it_g))
            glossary.is_sure(matches)

        record("/glossary <word> (fuzzy)", _time(gloss, len(lookups)))
        print(
            f"  run {r + 1}: "
            + ", ".join(f"{k.strip()} p99 {v[-1]['p99']:.2f} ms" for k, v in results.items() if not k.startswith("  ")),
            flush=True,
        )

    for r in range(args.repeats):
        one_repeat(r)

    rows = []
    for name, runs in results.items():
        rows.append(
            [
                name,
                int(runs[0]["n"]),
                fmt(median(x["p50"] for x in runs), 3),
                fmt(median(x["p90"] for x in runs), 3),
                fmt(median(x["p99"] for x in runs), 3),
                fmt(median(x["max"] for x in runs), 2),
            ]
        )
    banner(f"latency in ms (medians over {args.repeats} repeats)")
    print(table(["operation", "n/run", "p50", "p90", "p99", "max"], rows))
    q_p99 = max(median(x["p99"] for x in results[k]) for k in results if k.startswith("/q"))
    user_p99 = median(x["p99"] for x in results["/q <topic> (user's topic)"])
    print(
        f"\nSUMMARY picking: /q <topic> p99 {user_p99:.3f} ms (worst /q case p99 {q_p99:.2f} ms), target < 2 ms "
        f"{'met' if q_p99 < 2 else 'NOT met for every case'}; /search p99 "
        f"{median(x['p99'] for x in results['/search (limit 80)']):.1f} ms; /glossary p99 "
        f"{median(x['p99'] for x in results['/glossary <word> (fuzzy)']):.1f} ms; RSS {rss_users:,.0f} MB"
    )
    return 0


def percentile_int(values: list[int], q: float) -> int:
    data = sorted(values)
    return data[min(len(data) - 1, int(len(data) * q / 100))]

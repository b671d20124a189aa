"""``interview-bot run``, ``demo``, ``validate``, ``migrate`` and ``health``: running the bot and
checking what it runs on."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from bot.bank import Bank
from bot.cli.common import EXIT_INVALID_BANK, configured_bank_path, load_bank_or_exit, load_bank_reported
from bot.config import SettingsError, load_settings


def _topic_line(bank: Bank, topic_id: str, indent: str) -> str:
    topic = bank.topic(topic_id)
    assert topic is not None
    ids = bank.topic_question_ids(topic.id)
    tasks = sum(1 for q in ids if bank.questions[q].kind == "task")
    extra = f" (+{tasks} tasks)" if tasks else ""
    return f"{indent}{topic.id:<16} {len(ids) - tasks:>4} questions{extra}  {topic.title_ru}"


def _print_summary(bank: Bank, path: Path) -> None:
    """Counts per topic, grouped by syllabus area with each area's target (a bank without areas
    lists its topics); a warning line names the areas below target: not a failure."""
    s = bank.summary()
    print(f"Bank {path}: OK")
    print(
        f"  topics: {s['topics']}, questions: {s['questions']}, tasks: {s['tasks']}, "
        f"glossary terms: {s['terms']}, term→question links: {s['links']}"
    )
    same = sum(len(q.same_as) for q in bank.questions.values()) // 2
    overlaps = sum(len(q.overlaps) for q in bank.questions.values()) // 2
    if same or overlaps:
        print(f"  linked items: {same} same_as, {overlaps} overlaps pairs")
    if not bank.areas:
        for topic in bank.topics:
            print(_topic_line(bank, topic.id, "  "))
        return
    print("  per area (items / target):")
    below: list[str] = []
    for area, count in bank.area_counts():
        mark = "ok" if count >= area.target else "below"
        print(f"  {area.id:<18} {count:>4} / {area.target:<4} {mark:<5}  {area.title_en}")
        topics = bank.area_topics(area.id)
        if topics != (area.id,):  # an area of one topic of its own name needs no second line
            for tid in topics:
                print(_topic_line(bank, tid, "      "))
        if count < area.target:
            below.append(f"{area.id} {count}/{area.target}")
    loose = [t.id for t in bank.topics if bank.area(t.area or "") is None]
    for tid in loose:
        print(_topic_line(bank, tid, "  (no area) "))
    total = len(bank.questions)
    target = sum(a.target for a in bank.areas)
    print(f"  {'total':<18} {total:>4} / {target:<4} (the sum of the area targets)")
    if below:
        print(f"warning: {len(below)} area(s) below target: {', '.join(below)}")
    if loose:
        print(f"warning: topic(s) in no area: {', '.join(loose)}")


def cmd_validate(args: argparse.Namespace) -> int:
    path = Path(args.path) if args.path else configured_bank_path()
    bank = load_bank_reported(path)
    if bank is None:
        return EXIT_INVALID_BANK
    _print_summary(bank, path)
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    settings = load_settings()
    token = settings.require_token()
    settings.require_llm()
    settings.require_stt()
    bank = load_bank_or_exit(settings)
    from bot.tg.app import run_bot

    run_bot(settings, bank, token, webhook=args.webhook)
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    from bot.demo.server import run_command  # the demo's modules stay off the bot's own run path

    return run_command(args.port, load_bank_or_exit)


def _port(value: str) -> int:
    if not value.isdigit() or int(value) > 65535:
        raise argparse.ArgumentTypeError(f"expected a port number 0-65535, not {value!r}")
    return int(value)


def cmd_migrate(args: argparse.Namespace) -> int:
    settings = load_settings()
    from bot.db.engine import DATABASE_ERRORS, database_problem, migrate_sync

    try:
        migrate_sync(settings.database_url)
    except DATABASE_ERRORS as exc:
        raise SettingsError(database_problem(exc, settings.database_url)) from None
    print("database is up to date")
    return 0


def cmd_health(args: argparse.Namespace) -> int:
    """Exit 0 when the running bot is healthy (the container health check): its /healthz in
    webhook mode or with METRICS_PORT, else the polling loop's heartbeat file."""
    import json
    import time
    import urllib.request

    settings = load_settings()
    port = settings.webhook_port if settings.webhook_url else settings.metrics_port
    if port is None:
        limit = max(60.0, 3 * settings.poll_timeout + 30)
        try:
            age = time.time() - settings.heartbeat_file.stat().st_mtime
        except OSError:
            print(f"unhealthy: no heartbeat at {settings.heartbeat_file} (is the bot running here?)")
            return 1
        print(json.dumps({"ok": age < limit, "polling_heartbeat_age_seconds": round(age, 1)}))
        return 0 if age < limit else 1
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=4) as response:
            body = json.loads(response.read())
    except OSError as exc:
        print(f"unhealthy: {exc}")
        return 1
    print(json.dumps(body))
    return 0 if body.get("ok") else 1


def add_commands(sub: Any) -> None:
    """Register run, demo, validate, migrate and health on the main parser."""
    run = sub.add_parser("run", help="run the bot (long polling unless --webhook)")
    run.add_argument("--webhook", action="store_true", help="serve a webhook (WEBHOOK_URL)")
    run.set_defaults(func=cmd_run)

    demo = sub.add_parser(
        "demo", help="try the bot in a browser with no token and no network: a local Telegram stand-in and a web chat"
    )
    demo.add_argument("--port", type=_port, default=8080, help="the web chat's port on 127.0.0.1 (default 8080)")
    demo.set_defaults(func=cmd_demo)

    validate = sub.add_parser("validate", help="check the question bank and print a summary")
    validate.add_argument("path", nargs="?", help="bank folder or file (default: BANK_PATH or data/)")
    validate.set_defaults(func=cmd_validate)

    migrate = sub.add_parser("migrate", help="apply database migrations and exit")
    migrate.set_defaults(func=cmd_migrate)

    health = sub.add_parser("health", help="check a running bot's /healthz (exit 0 when healthy)")
    health.set_defaults(func=cmd_health)

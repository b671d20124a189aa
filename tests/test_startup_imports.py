"""What starting the bot imports (issue 34): the entry point and the composition root load what every
update needs and nothing a default bot does not use. Not a timing test: it reads ``sys.modules``
of a fresh interpreter, so it fails the same way on any machine."""

from __future__ import annotations

import json
import subprocess
import sys

# imported on first use only: migrations when the schema is behind, exports, charts, the LLM
# examiner, speech, the HTTP server (webhook, Mini App, /metrics), PostgreSQL's async layer, the
# demo's stand-in for Telegram
NOT_AT_START = (
    "alembic",
    "genanki",
    "PIL",
    "faster_whisper",
    "aiohttp.web",
    "asyncpg",
    "sqlalchemy.ext.asyncio",
    "greenlet",
    "bot.services.llm",
    "bot.tg.http_server",
    "bot.tg.miniapp_routes",
    "bot.interop",
    "bot.terminal",
    "bot.demo",
)


def _loaded_by(code: str) -> set[str]:
    out = subprocess.run(
        [sys.executable, "-c", f"{code}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"],
        capture_output=True,
        text=True,
        check=True,
    )
    return set(json.loads(out.stdout.strip().splitlines()[-1]))


def test_starting_the_bot_imports_only_what_a_default_bot_uses() -> None:
    loaded = _loaded_by("import bot.cli, bot.tg.app\nbot.cli.build_parser().parse_args(['run'])")
    early = sorted(m for m in loaded if any(m == name or m.startswith(name + ".") for name in NOT_AT_START))
    assert early == [], f"imported at start-up: {early}"
    assert {"bot.tg.routes", "bot.db.engine", "telegram.ext"} <= loaded  # the check sees real imports


def test_the_features_import_what_they_need_when_used() -> None:
    loaded = _loaded_by("from bot.tg import chart\nchart.mastery_chart([chart.ChartRow('lora', 0.5, 0.4)])")
    assert "PIL" in loaded

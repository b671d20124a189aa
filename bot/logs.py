"""Logging setup: text or JSON lines, with the bot token scrubbed from every record.

httpx logs each request URL at INFO, and Bot API URLs contain the token, so besides the scrubbing
filter the httpx/httpcore loggers are capped at WARNING.
"""

from __future__ import annotations

import json
import logging
import re
import sys
from collections.abc import Iterable
from datetime import UTC, datetime

_TOKEN_RE = re.compile(r"\b\d{5,}:[A-Za-z0-9_-]{20,}\b")


class RedactTokenFilter(logging.Filter):
    """Replace the bot token (and anything shaped like one) and the other secrets (the webhook
    secret, API keys) in the formatted message and in tracebacks."""

    def __init__(self, token: str | None = None, secrets: Iterable[str | None] = ()) -> None:
        super().__init__()
        self._secrets = [s for s in (token, *(token.split(":", 1)[1:] if token else ()), *secrets) if s]
        self._secrets.sort(key=len, reverse=True)  # the whole token before its secret part

    def _clean(self, text: str) -> str:
        text = _TOKEN_RE.sub("<token>", text)
        for secret in self._secrets:
            text = text.replace(secret, "<secret>")
        return text

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        cleaned = self._clean(message)
        if cleaned != message:
            record.msg, record.args = cleaned, None
        if record.exc_info and record.exc_info[1] is not None:
            record.exc_text = self._clean(logging.Formatter().formatException(record.exc_info))
        return True


class _NonJsonReply(logging.Filter):
    """PTB logs an ERROR with a traceback when the Bot API URL answers something that is not JSON
    (a wrong TELEGRAM_API_URL: "404: Not Found"); the start-up error that follows says it in one
    line, so keep this one short: a warning without the traceback."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.getMessage().startswith("Can not load invalid JSON data"):
            record.levelno, record.levelname = logging.WARNING, "WARNING"
            record.exc_info, record.exc_text = None, None
        return True


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        data: dict[str, object] = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        for key in ("chat_id", "user_id", "update_id", "event"):
            value = getattr(record, key, None)
            if value is not None:
                data[key] = value
        if record.exc_info:
            data["exc"] = record.exc_text or self.formatException(record.exc_info)
        return json.dumps(data, ensure_ascii=False)


def setup_logging(
    level: str = "INFO", fmt: str = "text", token: str | None = None, secrets: Iterable[str | None] = ()
) -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.addFilter(RedactTokenFilter(token, secrets))
    if fmt == "json":
        handler.setFormatter(JsonFormatter())
    else:
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s", "%H:%M:%S"))
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level)
    for noisy in ("httpx", "httpcore"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    logging.getLogger("apscheduler").setLevel(logging.WARNING)
    logging.getLogger("pymorphy3").setLevel(logging.WARNING)  # "Loading dictionaries ..." at start
    logging.getLogger("alembic").setLevel(logging.WARNING)  # a line per step: bot.db.engine logs one summary
    ptb_request = logging.getLogger("telegram.request.BaseRequest")
    if not any(isinstance(f, _NonJsonReply) for f in ptb_request.filters):
        ptb_request.addFilter(_NonJsonReply())

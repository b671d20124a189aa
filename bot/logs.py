"""Logging setup: text or JSON lines, with the bot token scrubbed from every record.

httpx logs each request URL at INFO, and Bot API URLs contain the token, so besides the scrubbing
filter the httpx/httpcore loggers are capped at WARNING.
"""

from __future__ import annotations

import json
import logging
import re
import sys
from datetime import UTC, datetime

_TOKEN_RE = re.compile(r"\b\d{5,}:[A-Za-z0-9_-]{20,}\b")


class RedactTokenFilter(logging.Filter):
    """Replace the bot token (and anything shaped like one) in the formatted message."""

    def __init__(self, token: str | None = None) -> None:
        super().__init__()
        self._token = token

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        cleaned = _TOKEN_RE.sub("<token>", message)
        if self._token:
            cleaned = cleaned.replace(self._token, "<token>")
        if cleaned != message:
            record.msg, record.args = cleaned, None
        if record.exc_info and record.exc_info[1] is not None:
            text = logging.Formatter().formatException(record.exc_info)
            record.exc_text = _TOKEN_RE.sub("<token>", text)
            if self._token:
                record.exc_text = record.exc_text.replace(self._token, "<token>")
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


def setup_logging(level: str = "INFO", fmt: str = "text", token: str | None = None) -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.addFilter(RedactTokenFilter(token))
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

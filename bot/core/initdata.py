"""Telegram Mini App ``initData``: checking its signature (and signing it, for tests and the dev mode).

As Telegram documents it: parse ``initData`` as a query string, take out ``hash``, sort the other
``key=value`` pairs by key and join them with line feeds (the data-check-string);
``secret_key = HMAC_SHA256(key="WebAppData", msg=bot_token)`` and the data is genuine when
``hex(HMAC_SHA256(key=secret_key, msg=data_check_string)) == hash``. Newer clients also send
``signature`` (Ed25519, for third parties); the hash is accepted whether the client computed it with
that field in the data-check-string or without it. The user is taken only from the signed ``user``
JSON; ``auth_date`` must be fresh.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from dataclasses import dataclass
from urllib.parse import parse_qsl, urlencode

MAX_INIT_DATA = 4096


@dataclass(frozen=True, slots=True)
class WebAppUser:
    id: int
    first_name: str
    language_code: str | None
    auth_date: int
    chat_type: str | None = None  # where the app was opened: "private", "group", "supergroup", ...
    chat_instance: str | None = None
    start_param: str | None = None


def _secret(token: str) -> bytes:
    return hmac.new(b"WebAppData", token.encode(), hashlib.sha256).digest()


def _check_string(pairs: dict[str, str], *, without: tuple[str, ...] = ()) -> str:
    return "\n".join(f"{k}={v}" for k, v in sorted(pairs.items()) if k != "hash" and k not in without)


def _digest(secret: bytes, check: str) -> str:
    return hmac.new(secret, check.encode(), hashlib.sha256).hexdigest()


def verify(init_data: str, token: str, *, now: float, max_age: float) -> WebAppUser | None:
    """The signed user of ``init_data``, or None: unsigned, tampered, stale, from the future, or
    without a user."""
    if not init_data or len(init_data) > MAX_INIT_DATA:
        return None
    try:
        pairs = parse_qsl(init_data, keep_blank_values=True, strict_parsing=True)
    except ValueError:
        return None
    fields = dict(pairs)
    if len(fields) != len(pairs):  # a key given twice: which one was signed?
        return None
    given = fields.get("hash", "")
    secret = _secret(token)
    candidates = [_check_string(fields)]
    if "signature" in fields:
        candidates.append(_check_string(fields, without=("signature",)))
    ok = False
    for check in candidates:  # compare every candidate: no early exit
        ok |= hmac.compare_digest(_digest(secret, check).encode(), given.encode())
    if not ok:
        return None
    try:
        auth_date = int(fields.get("auth_date", ""))
        user = json.loads(fields.get("user", ""))
    except ValueError:
        return None
    if not (now - max_age <= auth_date <= now + 300):  # a little clock skew ahead is tolerated
        return None
    if not isinstance(user, dict) or type(user.get("id")) is not int or user["id"] <= 0:
        return None
    language = user.get("language_code")
    return WebAppUser(
        id=user["id"],
        first_name=str(user.get("first_name") or ""),
        language_code=language if isinstance(language, str) else None,
        auth_date=auth_date,
        chat_type=fields.get("chat_type"),
        chat_instance=fields.get("chat_instance"),
        start_param=fields.get("start_param"),
    )


def sign(fields: dict[str, str], token: str) -> str:
    """``fields`` (``user`` as JSON text, ``auth_date``, ...) as a signed ``initData`` string, as the
    Telegram client makes it: the local dev mode and the tests use it."""
    pairs = {k: v for k, v in fields.items() if k != "hash"}
    return urlencode({**pairs, "hash": _digest(_secret(token), _check_string(pairs))})


def sign_user(user: dict[str, object], token: str, *, auth_date: int, **extra: str) -> str:
    text = json.dumps(user, ensure_ascii=False, separators=(",", ":"))
    return sign({"user": text, "auth_date": str(auth_date), **extra}, token)

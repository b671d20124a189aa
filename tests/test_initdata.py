"""The Mini App's initData signature (bot/core/initdata.py), checked against Telegram's documented
algorithm computed independently here."""

from __future__ import annotations

import hashlib
import hmac
import json
from urllib.parse import urlencode

from bot.core import initdata

TOKEN = "123456:ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghi"
NOW = 1_800_000_000


def telegram_init_data(fields: dict[str, str], token: str = TOKEN) -> str:
    """initData as a Telegram client builds it (the docs' algorithm, written out again)."""
    check = "\n".join(f"{k}={fields[k]}" for k in sorted(fields))
    secret = hmac.new(b"WebAppData", token.encode(), hashlib.sha256).digest()
    return urlencode({**fields, "hash": hmac.new(secret, check.encode(), hashlib.sha256).hexdigest()})


def user_fields(user_id: int = 42, auth_date: int = NOW, **extra: str) -> dict[str, str]:
    user = json.dumps({"id": user_id, "first_name": "Анна", "language_code": "ru"}, ensure_ascii=False)
    return {"query_id": "AAH", "user": user, "auth_date": str(auth_date), **extra}


def test_a_telegram_signature_is_accepted_and_the_user_read_from_it() -> None:
    user = initdata.verify(telegram_init_data(user_fields(start_param="g-100")), TOKEN, now=NOW + 5, max_age=86_400)
    assert user is not None
    assert (user.id, user.first_name, user.language_code, user.start_param) == (42, "Анна", "ru", "g-100")
    # our own signer (dev mode, tests) makes the same thing
    assert initdata.verify(initdata.sign(user_fields(), TOKEN), TOKEN, now=NOW, max_age=60) is not None


def test_tampered_expired_foreign_or_malformed_data_is_refused() -> None:
    good = telegram_init_data(user_fields())
    assert initdata.verify(good.replace("42", "43"), TOKEN, now=NOW, max_age=86_400) is None
    assert initdata.verify(good, "654321:" + "Z" * 35, now=NOW, max_age=86_400) is None
    assert initdata.verify(good, TOKEN, now=NOW + 86_401, max_age=86_400) is None  # stale
    assert initdata.verify(good, TOKEN, now=NOW - 3600, max_age=86_400) is None  # from the future
    assert initdata.verify(good + "&user=%7B%22id%22%3A1%7D", TOKEN, now=NOW, max_age=86_400) is None  # a key twice
    for bad in ("", "hash=", "&&&", "user=1", "x" * 5000):
        assert initdata.verify(bad, TOKEN, now=NOW, max_age=86_400) is None
    no_user = telegram_init_data({"auth_date": str(NOW)})
    assert initdata.verify(no_user, TOKEN, now=NOW, max_age=86_400) is None
    bad_id = telegram_init_data({"auth_date": str(NOW), "user": json.dumps({"id": "42"})})
    assert initdata.verify(bad_id, TOKEN, now=NOW, max_age=86_400) is None


def test_the_signature_field_of_newer_clients_in_or_out_of_the_check_string() -> None:
    fields = user_fields(signature="dGVzdA")
    assert initdata.verify(telegram_init_data(fields), TOKEN, now=NOW, max_age=60) is not None
    without = {k: v for k, v in fields.items() if k != "signature"}
    digest = telegram_init_data(without).rsplit("hash=", 1)[1]
    assert initdata.verify(urlencode({**fields, "hash": digest}), TOKEN, now=NOW, max_age=60) is not None

"""The Bot API transport: PTB's ``BaseRequest`` over aiohttp's client.

PTB's default transport (httpx → httpcore → anyio → h11) costs about 1 ms of CPU per API call on
this project's 2-core machine, as much as the rest of a simple update together; aiohttp (already
the bot's web server) does the same request in well under half of that. Everything PTB asks of a
transport is kept: multipart uploads (the /stats chart, /export files), plain GETs (file
downloads), per-call timeouts, and its error types: a timeout is ``TimedOut``, any other failure to
talk to the server is ``NetworkError``. Calls without files send their parameters as one JSON body
(the Bot API takes ``application/json``): PTB's form encoding JSON-dumps every nested value and then
percent-encodes each byte of the text, ~0.1 ms for a 1,500-character Russian message, against
~10 µs for one ``json.dumps``. Responses are handed to PTB whole: a sent message comes back with
its keyboard and entities (rebuilding a question's keyboard costs PTB ~60 µs, a price paid for
``sent.reply_markup`` being what Telegram says). ``getUpdates`` has a request object
of its own (:class:`RawUpdatesRequest`, one connection) that also keeps each update's JSON as
received, for the inbox.
"""

from __future__ import annotations

import json
from typing import Any

import aiohttp
from telegram.error import NetworkError, TimedOut
from telegram.request import BaseRequest, RequestData

_DEFAULT = type(BaseRequest.DEFAULT_NONE)  # "the caller did not say": the transport's own value
_JSON = {"Content-Type": "application/json"}


class AiohttpRequest(BaseRequest):
    """A keep-alive aiohttp session with at most ``connection_pool_size`` connections."""

    def __init__(
        self,
        *,
        connection_pool_size: int = 256,
        read_timeout: float | None = 5.0,
        write_timeout: float | None = 5.0,
        connect_timeout: float | None = 5.0,
        pool_timeout: float | None = 1.0,
        media_write_timeout: float | None = 20.0,
    ) -> None:
        self._pool_size = connection_pool_size
        self._read_timeout = read_timeout
        self._write_timeout = write_timeout
        self._connect_timeout = connect_timeout
        self._pool_timeout = pool_timeout
        self._media_write_timeout = media_write_timeout
        self._session: aiohttp.ClientSession | None = None

    @property
    def read_timeout(self) -> float | None:
        return self._read_timeout

    async def initialize(self) -> None:
        if self._session is None or self._session.closed:
            connector = aiohttp.TCPConnector(limit=self._pool_size, enable_cleanup_closed=True)
            self._session = aiohttp.ClientSession(
                connector=connector, headers={"User-Agent": self.USER_AGENT}, raise_for_status=False
            )

    async def shutdown(self) -> None:
        if self._session is not None and not self._session.closed:
            await self._session.close()
        self._session = None

    @staticmethod
    def _pick(value: Any, default: float | None) -> float | None:
        return default if isinstance(value, _DEFAULT) else value

    async def do_request(
        self,
        url: str,
        method: str,
        request_data: RequestData | None = None,
        read_timeout: Any = BaseRequest.DEFAULT_NONE,
        write_timeout: Any = BaseRequest.DEFAULT_NONE,
        connect_timeout: Any = BaseRequest.DEFAULT_NONE,
        pool_timeout: Any = BaseRequest.DEFAULT_NONE,
    ) -> tuple[int, bytes]:
        if self._session is None or self._session.closed:
            raise RuntimeError("This AiohttpRequest is not initialized!")
        files = request_data.multipart_data if request_data is not None and request_data.contains_files else None
        read = self._pick(read_timeout, self._read_timeout)
        write = self._pick(write_timeout, self._write_timeout if files is None else self._media_write_timeout)
        connect = self._pick(connect_timeout, self._connect_timeout)
        pool = self._pick(pool_timeout, self._pool_timeout)
        # aiohttp has no write timeout of its own: sending the body is bounded by the whole call
        total = None if read is None or write is None else read + write + (connect or 0) + (pool or 0)
        timeout = aiohttp.ClientTimeout(
            total=total, connect=None if connect is None else connect + (pool or 0), sock_read=read
        )
        data: Any = None
        headers: dict[str, str] | None = None
        if files is not None:
            assert request_data is not None
            form = aiohttp.FormData()
            for name, value in request_data.json_parameters.items():
                form.add_field(name, value)
            for name, part in files.items():
                filename, content, *rest = part
                form.add_field(name, content, filename=filename, content_type=rest[0] if rest else None)
            data = form
        elif request_data is not None:
            data = json.dumps(request_data.parameters, ensure_ascii=False).encode()
            headers = _JSON
        try:
            async with self._session.request(method, url, data=data, headers=headers, timeout=timeout) as response:
                return response.status, await response.read()
        except TimeoutError as exc:
            raise TimedOut from exc
        except (aiohttp.ClientError, OSError) as exc:
            raise NetworkError(f"aiohttp.{type(exc).__name__}: {exc}") from exc


class RawUpdatesRequest(AiohttpRequest):
    """``getUpdates``' transport: keeps each update's JSON object as Telegram sent it, so the inbox
    stores it without PTB's ``Update.to_dict`` (which rebuilds it from the objects at ~0.5 ms an
    update)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**{"connection_pool_size": 1, **kwargs})
        self.raw: dict[int, Any] = {}  # update_id -> the update's JSON object, of the last batch

    def parse_json_payload(self, payload: bytes) -> dict[str, Any]:  # type: ignore[override]
        data = BaseRequest.parse_json_payload(payload)
        result = data.get("result") if isinstance(data, dict) else None
        if isinstance(result, list):
            self.raw = {u["update_id"]: u for u in result if isinstance(u, dict) and type(u.get("update_id")) is int}
        return data

"""A headless Chromium driven over the Chrome DevTools Protocol (a websocket; aiohttp's client, which
the bot already depends on): load a page, run JavaScript, wait for a condition, take screenshots,
collect the console's errors. Debian's ``chromium`` package (``.ci/run`` installs it)."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import itertools
import json
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import aiohttp


def chromium_path() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


class Browser:
    def __init__(self, width: int = 390, height: int = 844) -> None:
        self.width, self.height = width, height
        self.errors: list[str] = []  # console errors, uncaught exceptions, failed loads
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self._profile = tempfile.TemporaryDirectory(prefix="cdp-", ignore_cleanup_errors=True)
        self._proc: subprocess.Popen[bytes] | None = None
        self._session: aiohttp.ClientSession | None = None
        self._ws: aiohttp.ClientWebSocketResponse | None = None
        self._reader: asyncio.Task[None] | None = None

    async def __aenter__(self) -> Browser:
        path = chromium_path()
        assert path is not None, "chromium is not installed"
        profile = Path(self._profile.name)
        self._proc = subprocess.Popen(  # noqa: ASYNC220 - started once, returns at once
            [path, "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
             "--no-first-run", "--no-default-browser-check", "--disable-extensions", "--disable-background-networking",
             "--disable-component-update", "--disable-sync", "--hide-scrollbars", "--mute-audio",
             f"--user-data-dir={profile}", "--remote-debugging-port=0", f"--window-size={self.width},{self.height}",
             "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        port_file = profile / "DevToolsActivePort"
        deadline = time.monotonic() + 30
        while not (port_file.exists() and port_file.read_text().count("\n") >= 1):
            if time.monotonic() > deadline or self._proc.poll() is not None:
                raise AssertionError("chromium did not start")
            await asyncio.sleep(0.05)
        port = int(port_file.read_text().splitlines()[0])
        self._session = aiohttp.ClientSession()
        async with self._session.get(f"http://127.0.0.1:{port}/json/list") as response:
            targets = await response.json()
        page = next(t for t in targets if t["type"] == "page")
        self._ws = await self._session.ws_connect(page["webSocketDebuggerUrl"], max_msg_size=64 * 1024 * 1024)
        self._reader = asyncio.create_task(self._read())
        for domain in ("Page", "Runtime", "Log"):
            await self.send(f"{domain}.enable")
        await self.send(
            "Emulation.setDeviceMetricsOverride",
            {"width": self.width, "height": self.height, "deviceScaleFactor": 1, "mobile": True},
        )
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reader
        if self._ws is not None:
            await self._ws.close()
        if self._session is not None:
            await self._session.close()
        if self._proc is not None:
            self._proc.terminate()
            try:
                self._proc.wait(10)
            except subprocess.TimeoutExpired:
                self._proc.kill()
        # Chromium's helper processes may still write into the profile for a moment after the
        # browser has exited ("Directory not empty"): try again for up to 2 s
        for _ in range(20):
            try:
                shutil.rmtree(self._profile.name)
                break
            except FileNotFoundError:
                break
            except OSError:
                await asyncio.sleep(0.1)
        self._profile.cleanup()

    async def _read(self) -> None:
        assert self._ws is not None
        async for message in self._ws:
            data = json.loads(message.data)
            if "id" in data:
                future = self._pending.pop(data["id"], None)
                if future is not None and not future.done():
                    future.set_result(data)
                continue
            method, params = data.get("method"), data.get("params", {})
            if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
                self.errors.append(
                    "console: " + " ".join(str(a.get("value", a.get("description"))) for a in params["args"])
                )
            elif method == "Runtime.exceptionThrown":
                self.errors.append("exception: " + json.dumps(params.get("exceptionDetails", {}))[:500])
            elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
                entry = params["entry"]
                self.errors.append(f"log: {entry.get('text')} {entry.get('url', '')}")

    async def send(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        assert self._ws is not None
        call_id = next(self._ids)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[call_id] = future
        await self._ws.send_str(json.dumps({"id": call_id, "method": method, "params": params or {}}))
        reply = await asyncio.wait_for(future, 30)
        if "error" in reply:
            raise AssertionError(f"{method}: {reply['error']}")
        return dict(reply.get("result", {}))

    async def goto(self, url: str) -> None:
        await self.send("Page.navigate", {"url": url})

    async def js(self, expression: str) -> Any:
        result = await self.send(
            "Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": True}
        )
        if "exceptionDetails" in result:
            raise AssertionError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    async def wait(self, expression: str, seconds: float = 10.0) -> Any:
        deadline = time.monotonic() + seconds
        while True:
            value = await self.js(expression)
            if value:
                return value
            if time.monotonic() > deadline:
                body = await self.js("document.body ? document.body.innerText.slice(0, 500) : ''")
                raise AssertionError(
                    f"timed out waiting for {expression}; the page says: {body!r}; errors: {self.errors}"
                )
            await asyncio.sleep(0.05)

    async def key(self, key: str, code: int, text: str = "") -> None:
        """Press a key (e.g. "Tab", 9; "Enter", 13, "\r") as the keyboard would."""
        for kind in ("keyDown", "keyUp"):
            event: dict[str, Any] = {"type": kind, "key": key, "code": key, "windowsVirtualKeyCode": code}
            if text and kind == "keyDown":
                event["text"] = text
            await self.send("Input.dispatchKeyEvent", event)

    async def screenshot(self, path: Path) -> Path:
        result = await self.send("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True})
        path.write_bytes(base64.b64decode(result["data"]))  # noqa: ASYNC240 - a small local file
        return path

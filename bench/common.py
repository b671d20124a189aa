"""Shared helpers: statistics, process CPU/RSS from /proc, the instrumented fake Bot API server,
bot processes (ours and the echo baseline) and tables."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # `python -m bench` from the repo root already has it
    sys.path.insert(0, str(ROOT))

from tests.fakebot import TOKEN, FakeTelegram  # noqa: E402

CLK_TCK = os.sysconf("SC_CLK_TCK")


# -- statistics -------------------------------------------------------------------------------
def percentile(values: Sequence[float], q: float) -> float:
    """Linear-interpolated percentile (q in 0..100)."""
    if not values:
        return float("nan")
    data = sorted(values)
    if len(data) == 1:
        return data[0]
    pos = (len(data) - 1) * q / 100.0
    lo = int(pos)
    hi = min(lo + 1, len(data) - 1)
    return data[lo] + (data[hi] - data[lo]) * (pos - lo)


def median(values: Iterable[float]) -> float:
    data = list(values)
    return statistics.median(data) if data else float("nan")


def summary(values: Sequence[float]) -> dict[str, float]:
    return {
        "n": len(values),
        "p50": percentile(values, 50),
        "p90": percentile(values, 90),
        "p99": percentile(values, 99),
        "max": max(values) if values else float("nan"),
        "mean": statistics.fmean(values) if values else float("nan"),
    }


def fmt(value: float, digits: int = 2) -> str:
    if value != value:  # NaN
        return "—"
    if abs(value) >= 100:
        return f"{value:,.0f}"
    return f"{value:.{digits}f}"


def table(headers: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    """A Markdown table (also readable in a terminal)."""
    rows = [[str(c) for c in r] for r in rows]
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)]
    line = "| " + " | ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)) + " |"
    sep = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    body = ["| " + " | ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) + " |" for r in rows]
    return "\n".join([line, sep, *body])


def banner(text: str) -> None:
    print(f"\n== {text} ==", flush=True)


# -- /proc ------------------------------------------------------------------------------------
def proc_cpu_seconds(pid: int) -> float:
    """utime + stime of a process (all its threads), in seconds."""
    with open(f"/proc/{pid}/stat") as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def proc_status_kb(pid: int | str = "self") -> dict[str, int]:
    """VmRSS, VmHWM (peak RSS), RssAnon ... in kB."""
    out: dict[str, int] = {}
    with open(f"/proc/{pid}/status") as fh:
        for line in fh:
            if line.startswith(("Vm", "Rss")):
                name, _, rest = line.partition(":")
                parts = rest.split()
                if parts and parts[0].isdigit():
                    out[name] = int(parts[0])
    return out


def rss_mb(pid: int | str = "self") -> float:
    return proc_status_kb(pid).get("VmRSS", 0) / 1024


def peak_rss_mb(pid: int | str = "self") -> float:
    return proc_status_kb(pid).get("VmHWM", 0) / 1024


class CpuSampler:
    """Samples a process's CPU time every ``interval`` seconds (monotonic clock) in a thread."""

    def __init__(self, pid: int, interval: float = 0.02) -> None:
        self.pid, self.interval = pid, interval
        self.samples: list[tuple[float, float]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self.samples.append((time.monotonic(), proc_cpu_seconds(self.pid)))
            except (FileNotFoundError, ProcessLookupError):
                return
            self._stop.wait(self.interval)

    def start(self) -> CpuSampler:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(2)

    def at(self, when: float) -> float:
        """CPU seconds at monotonic time ``when`` (linear interpolation between samples)."""
        prev = None
        for t, c in self.samples:
            if t >= when:
                if prev is None:
                    return c
                t0, c0 = prev
                return c0 + (c - c0) * (when - t0) / max(t - t0, 1e-9)
            prev = (t, c)
        return self.samples[-1][1] if self.samples else float("nan")


# -- the instrumented fake Bot API server -------------------------------------------------------
class BenchFake(FakeTelegram):
    """tests.fakebot.FakeTelegram plus hooks for timing: every message the bot sends and every
    callback answer is reported (with ``time.monotonic()``) to a per-chat asyncio queue, and
    scenarios can run as coroutines on the fake's own event loop (no driver threads)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.events: dict[int, asyncio.Queue[tuple[float, str, Any]]] = {}
        self.send_times: list[float] = []  # monotonic time of every recorded bot message
        self.record_hook: Callable[[int, float], None] | None = None

    def _queue(self, chat_id: int) -> asyncio.Queue[tuple[float, str, Any]]:
        q = self.events.get(chat_id)
        if q is None:
            q = self.events[chat_id] = asyncio.Queue()
        return q

    def _record(self, chat: Any, method: str, params: dict[str, Any], text: str, raw: str) -> dict[str, Any]:
        message = super()._record(chat, method, params, text, raw)
        now = time.monotonic()
        self.send_times.append(now)
        q = self.events.get(chat.id)
        if q is not None:
            q.put_nowait((now, method, self.sent[-1]))
        return message

    async def m_answerCallbackQuery(self, params: dict[str, Any]) -> bool:
        result = await super().m_answerCallbackQuery(params)
        qid = str(params.get("callback_query_id") or "")
        if qid.startswith("cq") and "_" in qid:  # bench query ids: cq<chat>_<n>
            chat_id = int(qid[2:].split("_", 1)[0])
            q = self.events.get(chat_id)
            if q is not None:
                q.put_nowait((time.monotonic(), "answerCallbackQuery", params))
        return result

    async def push(self, update: dict[str, Any]) -> float:
        """Add an update (on the fake's loop); returns the monotonic time it became available."""
        update = {"update_id": next(self.update_ids), **update}
        assert self._cond is not None
        async with self._cond:
            self.updates.append(update)
            self._cond.notify_all()
        return time.monotonic()

    def run(self, coro: Any, timeout: float = 600) -> Any:
        """Run a scenario coroutine on the fake's event loop and wait for its result."""
        return self._call(coro, timeout)


def message_update(fake: FakeTelegram, user_id: int, text: str, *, first_name: str = "Bench") -> dict[str, Any]:
    chat = fake.private_chat(user_id)
    message: dict[str, Any] = {
        "message_id": fake.new_message_id(chat.id),
        "date": int(time.time()),
        "chat": chat.as_dict(),
        "from": {"id": user_id, "is_bot": False, "first_name": first_name, "language_code": "ru"},
        "text": text,
    }
    if text.startswith("/"):
        command = text.split()[0]
        message["entities"] = [{"type": "bot_command", "offset": 0, "length": len(command)}]
    return {"message": message}


_query_seq = iter(range(1, 10**12))


def callback_update(fake: FakeTelegram, user_id: int, sent: Any, data: str) -> dict[str, Any]:
    chat = fake.private_chat(user_id)
    return {
        "callback_query": {
            "id": f"cq{user_id}_{next(_query_seq)}",
            "from": {"id": user_id, "is_bot": False, "first_name": "Bench", "language_code": "ru"},
            "chat_instance": f"ci{chat.id}",
            "data": data,
            "message": {
                "message_id": sent.message_id,
                "date": int(sent.at),
                "chat": chat.as_dict(),
                "from": fake._bot_user(),
                "text": sent.text,
            },
        }
    }


# -- bot processes --------------------------------------------------------------------------------
class Proc:
    """A bot process (ours: ``python -m bot run``; the echo baseline: ``python -m bench.echo_bot``)
    against a fake server; waits for its first ``getUpdates``."""

    def __init__(
        self, fake: FakeTelegram, argv: list[str], workdir: Path, env: dict[str, str] | None = None, name: str = "bot"
    ) -> None:
        self.fake, self.argv, self.workdir, self.name = fake, argv, workdir, name
        self.env = {
            **os.environ,
            "BOT_TOKEN": TOKEN,
            "TELEGRAM_API_URL": fake.url,
            "PYTHONUNBUFFERED": "1",
            "PYTHONPATH": str(ROOT),
            **(env or {}),
        }
        self.proc: subprocess.Popen[bytes] | None = None
        self.log_path = workdir / f"{name}.log"
        self.started_at = 0.0

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def start(self, wait: bool = True, timeout: float = 120) -> Proc:
        before = len(self.fake.calls_of("getUpdates"))
        self._log = open(self.log_path, "ab")  # noqa: SIM115
        self.started_at = time.monotonic()
        self.proc = subprocess.Popen(
            self.argv, cwd=self.workdir, env=self.env, stdout=self._log, stderr=subprocess.STDOUT
        )
        if wait:
            self.fake.wait_for(
                lambda: len(self.fake.calls_of("getUpdates")) > before or self.proc.poll() is not None,  # type: ignore[union-attr]
                timeout=timeout,
                what=f"{self.name} to start polling",
            )
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.name} exited at start:\n{self.log()[-3000:]}")
        return self

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def wait_for_log(self, text: str, timeout: float = 60) -> Proc:
        """Wait until the process has logged ``text`` (e.g. "grader ready": the end of the grader's
        warm-up after a start, so what is measured next is the steady state)."""
        self.fake.wait_for(lambda: text in self.log(), timeout=timeout, what=f"{self.name} to log {text!r}")
        return self

    def cpu(self) -> float:
        return proc_cpu_seconds(self.pid)

    def rss_mb(self) -> float:
        return rss_mb(self.pid)

    def stop(self) -> int | None:
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        self._log.close()
        return self.proc.returncode


def our_bot(fake: FakeTelegram, workdir: Path, env: dict[str, str] | None = None, name: str = "bot") -> Proc:
    # FLOOD_BURST=0: a benchmark's user is a script sending a command every few milliseconds, which
    # the bot's flood limit (20 in 2 s per user) would drop; the limit is not what is measured
    base = {"DATABASE_URL": f"sqlite:///{workdir / 'bot.db'}", "LOG_LEVEL": "INFO", "FLOOD_BURST": "0"}
    return Proc(fake, [sys.executable, "-m", "bot", "run"], workdir, {**base, **(env or {})}, name)


def echo_bot(fake: FakeTelegram, workdir: Path, *extra: str, name: str = "echo") -> Proc:
    return Proc(fake, [sys.executable, "-m", "bench.echo_bot", *extra], workdir, None, name)


def tempdir(prefix: str) -> Path:
    return Path(tempfile.mkdtemp(prefix=f"ib-bench-{prefix}-"))


def rmtree(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)


def by_kind(rows: Iterable[tuple[str, float]]) -> dict[str, list[float]]:
    out: dict[str, list[float]] = defaultdict(list)
    for kind, value in rows:
        out[kind].append(value)
    return out

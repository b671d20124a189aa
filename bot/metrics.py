"""Prometheus metrics of one bot process (its own registry; nothing is created at import time)."""

from __future__ import annotations

from collections.abc import Callable

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest


class Metrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self.updates = Counter("interview_bot_updates_total", "Updates handled, by kind", ["kind"], registry=r)
        self.duplicates = Counter(
            "interview_bot_duplicate_updates_total", "Updates delivered twice and dropped", registry=r
        )
        self.answers = Counter("interview_bot_answers_stored_total", "Free-text answers stored", registry=r)
        self.pushes_sent = Counter("interview_bot_pushes_sent_total", "Daily pushes delivered", registry=r)
        self.pushes_failed = Counter(
            "interview_bot_pushes_failed_total",
            "Daily pushes not delivered, by reason",
            ["reason"],
            registry=r,
        )
        self.tick_seconds = Histogram(
            "interview_bot_tick_duration_seconds", "Time to plan one push tick", registry=r,
            buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0),
        )  # fmt: skip
        self.queue_depth = Gauge("interview_bot_sender_queue_depth", "Pushes waiting to be sent", registry=r)

    def watch_queue(self, size: Callable[[], int]) -> None:
        self.queue_depth.set_function(lambda: float(size()))

    def render(self) -> bytes:
        return generate_latest(self.registry)

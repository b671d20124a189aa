"""What became of one message sent to Telegram, in terms the senders act on (no telegram imports).

The Telegram adapter (:mod:`bot.tg.delivery`) turns every Bot API answer into an :class:`Outcome`;
the push sender and broadcasts decide what to do with it:

- ``SENT``: delivered (``message_id``, and ``poll_id`` for a poll);
- ``RETRY_AFTER``: 429: nothing was delivered; pause all bulk sends ``retry_after`` seconds, retry;
- ``BLOCKED``: 403 (blocked, kicked, deactivated, chat deleted): stop sending to the chat;
- ``MIGRATED``: the group became a supergroup ``new_chat_id``: move the chat, send there once;
- ``TOO_LONG``: "message is too long": our fault, retrying cannot help;
- ``REJECTED``: any other 400: retrying cannot help;
- ``TIMED_OUT``: no answer in time: it may have been delivered, so it is not retried;
- ``NETWORK``: no answer at all (connection failed): not delivered, retry later.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Status(StrEnum):
    SENT = "sent"
    RETRY_AFTER = "retry_after"
    BLOCKED = "blocked"
    MIGRATED = "migrated"
    TOO_LONG = "too_long"
    REJECTED = "rejected"
    TIMED_OUT = "timed_out"
    NETWORK = "network"


@dataclass(frozen=True, slots=True)
class Outcome:
    status: Status
    message_id: int | None = None
    poll_id: str | None = None
    new_chat_id: int | None = None
    retry_after: float = 0.0
    detail: str = ""

    @property
    def ok(self) -> bool:
        return self.status is Status.SENT

    @classmethod
    def sent(cls, message_id: int, poll_id: str | None = None) -> Outcome:
        return cls(Status.SENT, message_id=message_id, poll_id=poll_id)

    @classmethod
    def wait(cls, seconds: float) -> Outcome:
        return cls(Status.RETRY_AFTER, retry_after=seconds)

    @classmethod
    def blocked(cls, detail: str) -> Outcome:
        return cls(Status.BLOCKED, detail=detail)

    @classmethod
    def migrated(cls, new_chat_id: int) -> Outcome:
        return cls(Status.MIGRATED, new_chat_id=new_chat_id)

    @classmethod
    def failed(cls, status: Status, detail: str = "") -> Outcome:
        """A failure without data of its own: TOO_LONG, REJECTED, TIMED_OUT or NETWORK."""
        return cls(status, detail=detail)

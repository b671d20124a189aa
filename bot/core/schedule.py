"""Daily-push time arithmetic: parsing times and zones, and the next push instant.

Pure functions with the clock passed in. A push is due once per *local* date:

- a local time that does not exist that day (spring forward) fires at the next valid minute;
- a local time that occurs twice (fall back) fires at its first occurrence;
- weekdays-only skips local Saturdays and Sundays.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, time, timedelta, timezone, tzinfo
from functools import lru_cache
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError, available_timezones

# Common abbreviations → an IANA zone that observes them (DST included where the zone has it).
ABBREVIATIONS = {
    "UTC": "UTC",
    "GMT": "UTC",
    "Z": "UTC",
    "MSK": "Europe/Moscow",
    "МСК": "Europe/Moscow",
    "WET": "Europe/Lisbon",
    "WEST": "Europe/Lisbon",
    "BST": "Europe/London",
    "CET": "Europe/Berlin",
    "CEST": "Europe/Berlin",
    "EET": "Europe/Kiev",
    "EEST": "Europe/Kiev",
    "SAMT": "Europe/Samara",
    "YEKT": "Asia/Yekaterinburg",
    "OMST": "Asia/Omsk",
    "NOVT": "Asia/Novosibirsk",
    "KRAT": "Asia/Krasnoyarsk",
    "IRKT": "Asia/Irkutsk",
    "YAKT": "Asia/Yakutsk",
    "VLAT": "Asia/Vladivostok",
    "MAGT": "Asia/Magadan",
    "PETT": "Asia/Kamchatka",
    "ALMT": "Asia/Almaty",
    "EST": "America/New_York",
    "EDT": "America/New_York",
    "CST": "America/Chicago",
    "CDT": "America/Chicago",
    "MST": "America/Denver",
    "MDT": "America/Denver",
    "PST": "America/Los_Angeles",
    "PDT": "America/Los_Angeles",
    "IST": "Asia/Kolkata",
    "JST": "Asia/Tokyo",
    "KST": "Asia/Seoul",
    "HKT": "Asia/Hong_Kong",
    "SGT": "Asia/Singapore",
    "AEST": "Australia/Sydney",
    "AEDT": "Australia/Sydney",
}

_TIME_RE = re.compile(r"^(\d{1,2})(?:[:.h ](\d{2}))?$")
_OFFSET_RE = re.compile(r"^(?:UTC|GMT)?\s*([+-−])\s*(\d{1,2})(?::?(\d{2}))?$", re.IGNORECASE)


class ScheduleError(ValueError):
    """A time or zone the user typed that we cannot use."""


def parse_time(text: str) -> int:
    """'09:30', '9:30', '9.30', '930'? no — '9' means 09:00. Returns minutes after midnight."""
    m = _TIME_RE.match(text.strip().lower())
    if not m:
        raise ScheduleError(text)
    hours, minutes = int(m.group(1)), int(m.group(2) or 0)
    if hours > 23 or minutes > 59:
        raise ScheduleError(text)
    return hours * 60 + minutes


def format_minute(minute: int) -> str:
    return f"{minute // 60:02d}:{minute % 60:02d}"


@lru_cache(maxsize=1)
def _zones_by_city() -> dict[str, str]:
    out: dict[str, str] = {}
    for name in sorted(available_timezones()):
        if "/" in name and not name.startswith(("Etc/", "SystemV/", "US/")):
            out.setdefault(name.rsplit("/", 1)[1].lower().replace("_", " "), name)
    return out


def parse_zone(text: str) -> str:
    """An IANA name ('Europe/Berlin', 'europe/berlin', 'Berlin'), an abbreviation ('MSK', 'CET')
    or a UTC offset ('+3', 'UTC+03:00', 'GMT-5:30'). Returns the canonical string to store."""
    raw = text.strip()
    if not raw:
        raise ScheduleError(text)
    offset = _OFFSET_RE.match(raw.replace("−", "-"))
    if offset:
        sign = -1 if offset.group(1) in "-−" else 1
        hours, minutes = int(offset.group(2)), int(offset.group(3) or 0)
        if hours > 14 or minutes >= 60 or hours * 60 + minutes > 14 * 60:
            raise ScheduleError(text)
        if hours == minutes == 0:
            return "UTC"
        return f"UTC{'+' if sign > 0 else '-'}{hours:02d}:{minutes:02d}"
    if raw.upper() in ABBREVIATIONS:
        return ABBREVIATIONS[raw.upper()]
    if "/" in raw or raw.upper() == "UTC":
        for candidate in (raw, "/".join(p[:1].upper() + p[1:] for p in raw.split("/"))):
            try:
                ZoneInfo(candidate)
            except (ZoneInfoNotFoundError, ValueError):
                continue
            return candidate
        lowered = {z.lower(): z for z in available_timezones()}
        if raw.lower() in lowered:
            return lowered[raw.lower()]
        raise ScheduleError(text)
    city = _zones_by_city().get(raw.lower().replace("_", " "))
    if city:
        return city
    raise ScheduleError(text)


@lru_cache(maxsize=4096)
def get_tz(zone: str) -> tzinfo:
    """The tzinfo for a stored zone string (IANA name or 'UTC±HH:MM')."""
    if zone.startswith("UTC") and len(zone) > 3:
        sign = -1 if zone[3] == "-" else 1
        hours, minutes = int(zone[4:6]), int(zone[7:9])
        return timezone(sign * timedelta(hours=hours, minutes=minutes), zone)
    return ZoneInfo(zone)


def _exists(naive: datetime, tz: tzinfo) -> bool:
    aware = naive.replace(tzinfo=tz)
    return aware.astimezone(UTC).astimezone(tz).replace(tzinfo=None) == naive


def occurrence(day: date, minute: int, tz: tzinfo) -> datetime:
    """The UTC instant of local ``day`` at ``minute`` (see the module rules for DST)."""
    naive = datetime.combine(day, time(minute // 60, minute % 60))
    probe = naive
    for _ in range(3 * 60):  # gaps are at most a couple of hours
        if _exists(probe, tz):
            return probe.replace(tzinfo=tz, fold=0).astimezone(UTC)
        probe += timedelta(minutes=1)
    return naive.replace(tzinfo=tz).astimezone(UTC)  # pragma: no cover - no such zone


def local_date(instant: datetime, tz: tzinfo) -> date:
    return instant.astimezone(tz).date()


def next_push(
    after: datetime,
    minute: int,
    tz: tzinfo,
    *,
    weekdays_only: bool = False,
    min_date: date | None = None,
) -> tuple[datetime, date]:
    """The first push instant strictly after ``after`` (UTC) on a local date ≥ ``min_date``.

    Returns the instant (UTC) and the local date it belongs to.
    """
    day = local_date(after, tz)
    if min_date is not None and min_date > day:
        day = min_date
    for _ in range(14):
        if not (weekdays_only and day.weekday() >= 5):
            instant = occurrence(day, minute, tz)
            if instant > after:
                return instant, day
        day += timedelta(days=1)
    raise AssertionError("no push instant within two weeks")  # pragma: no cover


def describe_zone(zone: str, now: datetime) -> str:
    """'Europe/Berlin (UTC+01:00)' for messages."""
    offset = now.astimezone(get_tz(zone)).utcoffset() or timedelta()
    total = int(offset.total_seconds() // 60)
    sign = "+" if total >= 0 else "-"
    text = f"UTC{sign}{abs(total) // 60:02d}:{abs(total) % 60:02d}"
    return zone if zone.startswith("UTC") else f"{zone} ({text})"


def schedule_fields(
    chat_zone: str, minute: int, weekdays_only: bool, now: datetime, min_date: date | None = None
) -> dict[str, Any]:
    """The next_push_at/next_push_date for a chat's settings, as of ``now``."""
    instant, day = next_push(now, minute, get_tz(chat_zone), weekdays_only=weekdays_only, min_date=min_date)
    return {"next_push_at": instant, "next_push_date": day}

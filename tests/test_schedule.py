"""Daily-push time arithmetic: parsing, DST gaps and overlaps, weekdays, several zones."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.core.schedule import (
    ScheduleError,
    get_tz,
    local_date,
    next_push,
    occurrence,
    parse_time,
    parse_zone,
)


@pytest.mark.parametrize(
    ("text", "minute"),
    [("09:30", 570), ("9:30", 570), ("9.30", 570), ("7", 420), ("23:59", 1439), ("00:00", 0)],
)
def test_parse_time(text: str, minute: int) -> None:
    assert parse_time(text) == minute


@pytest.mark.parametrize("text", ["24:00", "9:60", "abc", "", "9:5", "-1", "12:30pm"])
def test_parse_time_rejects(text: str) -> None:
    with pytest.raises(ScheduleError):
        parse_time(text)


@pytest.mark.parametrize(
    ("text", "zone"),
    [
        ("Europe/Berlin", "Europe/Berlin"), ("europe/berlin", "Europe/Berlin"), ("Berlin", "Europe/Berlin"),
        ("new york", "America/New_York"), ("MSK", "Europe/Moscow"), ("cet", "Europe/Berlin"),
        ("+3", "UTC+03:00"), ("UTC+3", "UTC+03:00"), ("GMT-5:30", "UTC-05:30"), ("−4", "UTC-04:00"),
        ("+0", "UTC"), ("UTC", "UTC"),
    ],
)  # fmt: skip
def test_parse_zone(text: str, zone: str) -> None:
    assert parse_zone(text) == zone
    get_tz(zone)  # and it is usable


@pytest.mark.parametrize("text", ["Mars/Olympus", "+15", "UTC+3:75", "nowhere", ""])
def test_parse_zone_rejects(text: str) -> None:
    with pytest.raises(ScheduleError):
        parse_zone(text)


def utc(*args: int) -> datetime:
    return datetime(*args, tzinfo=UTC)  # type: ignore[misc]


def test_plain_day_in_several_zones() -> None:
    for zone, expected in [("Europe/Berlin", utc(2026, 1, 15, 8, 30)), ("Asia/Kolkata", utc(2026, 1, 15, 4, 0)),
                           ("America/New_York", utc(2026, 1, 15, 14, 30)), ("UTC+03:00", utc(2026, 1, 15, 6, 30))]:  # fmt: skip
        instant, day = next_push(utc(2026, 1, 15, 0, 0), 9 * 60 + 30, get_tz(zone))
        assert day == date(2026, 1, 15)
        assert instant == expected
    # Kolkata at 09:30 is 04:00 UTC: asked at 05:00 UTC, it is tomorrow
    instant, day = next_push(utc(2026, 1, 15, 5, 0), 570, get_tz("Asia/Kolkata"))
    assert day == date(2026, 1, 16)


def test_spring_forward_gap_fires_at_next_valid_minute() -> None:
    berlin = get_tz("Europe/Berlin")  # 2026-03-29: 02:00 CET → 03:00 CEST
    instant = occurrence(date(2026, 3, 29), 2 * 60 + 30, berlin)
    assert instant.astimezone(berlin).strftime("%H:%M %Z") == "03:00 CEST"
    assert instant == utc(2026, 3, 29, 1, 0)
    # the day before and after are normal
    assert occurrence(date(2026, 3, 28), 150, berlin) == utc(2026, 3, 28, 1, 30)
    assert occurrence(date(2026, 3, 30), 150, berlin) == utc(2026, 3, 30, 0, 30)


def test_fall_back_repeated_hour_fires_once() -> None:
    berlin = get_tz("Europe/Berlin")  # 2026-10-25: 03:00 CEST → 02:00 CET; 02:30 happens twice
    first, day = next_push(utc(2026, 10, 24, 23, 0), 150, berlin)
    assert (first, day) == (utc(2026, 10, 25, 0, 30), date(2026, 10, 25))  # 02:30 CEST
    # after the first 02:30 fired, the next push is the next day, not the second 02:30
    second, day2 = next_push(first, 150, berlin, min_date=day + timedelta(days=1))
    assert day2 == date(2026, 10, 26)
    assert second == utc(2026, 10, 26, 1, 30)


def test_new_york_and_southern_hemisphere_dst() -> None:
    ny = get_tz("America/New_York")  # 2026-03-08 02:00 → 03:00
    assert occurrence(date(2026, 3, 8), 2 * 60 + 15, ny).astimezone(ny).strftime("%H:%M") == "03:00"
    sydney = get_tz("Australia/Sydney")  # 2026-10-04 02:00 → 03:00 AEDT
    assert occurrence(date(2026, 10, 4), 2 * 60 + 59, sydney).astimezone(sydney).strftime("%H:%M") == "03:00"


def test_weekdays_only_skips_weekend() -> None:
    berlin = get_tz("Europe/Berlin")
    # Friday 2026-01-16 after 09:30 → Monday 2026-01-19
    _, day = next_push(utc(2026, 1, 16, 10, 0), 570, berlin, weekdays_only=True)
    assert day == date(2026, 1, 19)
    assert day.weekday() == 0


@given(
    start=st.datetimes(min_value=datetime(2026, 1, 1), max_value=datetime(2027, 12, 31)),
    minute=st.integers(0, 1439),
    zone=st.sampled_from(
        [
            "Europe/Berlin",
            "America/New_York",
            "Australia/Sydney",
            "Asia/Tehran",
            "Europe/Moscow",
            "America/Santiago",
            "Pacific/Chatham",
            "UTC+05:30",
        ]
    ),
)
def test_exactly_one_push_per_local_day(start: datetime, minute: int, zone: str) -> None:
    """Walking push to push: local dates strictly increase by one day and instants increase."""
    tz = get_tz(zone)
    after = start.replace(tzinfo=UTC)
    instant, day = next_push(after, minute, tz)
    for _ in range(40):
        assert instant > after
        assert local_date(instant, tz) == day
        nxt, nday = next_push(instant, minute, tz, min_date=day + timedelta(days=1))
        assert nday == day + timedelta(days=1)
        assert nxt > instant
        after, instant, day = instant, nxt, nday

"""The /stats chart: one horizontal bar per topic (PNG, Pillow).

The light bar is the share of the topic's questions answered, the dark bar inside it the mastery
(mean key-point coverage × share answered). Labels are Latin topic ids: Pillow's bundled font has
no Cyrillic; the caption carries the "id — title" legend.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass

from PIL import Image, ImageDraw, ImageFont

from bot.core.stats import percent

WIDTH = 640
ROW = 30
TOP = 52
BOTTOM = 44
LABEL_W = 130
PCT_W = 52
PAD = 16
BACKGROUND = (255, 255, 255)
TRACK = (236, 239, 243)
ANSWERED = (178, 205, 238)
MASTERY = (38, 99, 175)
TEXT = (33, 37, 41)
MUTED = (110, 117, 125)


@dataclass(frozen=True, slots=True)
class ChartRow:
    label: str  # Latin: the topic id
    answered: float  # share of the topic's questions answered, 0..1
    mastery: float  # 0..1


def _clamp(value: float) -> float:
    return min(max(value, 0.0), 1.0)


def mastery_chart(rows: Sequence[ChartRow], title: str = "Mastery by topic") -> bytes:
    """A small PNG; its height grows with the number of topics."""
    height = TOP + ROW * max(len(rows), 1) + BOTTOM
    image = Image.new("RGB", (WIDTH, height), BACKGROUND)
    draw = ImageDraw.Draw(image)
    font = ImageFont.load_default(size=14)
    bold = ImageFont.load_default(size=17)
    draw.text((PAD, 16), title, fill=TEXT, font=bold)
    track_x0 = PAD + LABEL_W
    track_x1 = WIDTH - PAD - PCT_W
    span = track_x1 - track_x0
    for i, row in enumerate(rows):
        y = TOP + i * ROW
        label = row.label if len(row.label) <= 16 else row.label[:15] + "."
        lw = draw.textlength(label, font=font)
        draw.text((track_x0 - 10 - lw, y + 7), label, fill=TEXT, font=font)
        draw.rectangle((track_x0, y + 5, track_x1, y + ROW - 5), fill=TRACK)
        answered, mastery = _clamp(row.answered), _clamp(row.mastery)
        if answered > 0:
            right = track_x0 + max(2, round(span * answered))
            draw.rectangle((track_x0, y + 5, right, y + ROW - 5), fill=ANSWERED)
        if mastery > 0:
            right = track_x0 + max(2, round(span * mastery))
            draw.rectangle((track_x0, y + 9, right, y + ROW - 9), fill=MASTERY)
        draw.text((track_x1 + 8, y + 7), f"{percent(mastery)}%", fill=TEXT if mastery else MUTED, font=font)
    legend_y = height - BOTTOM + 14
    x = track_x0
    draw.rectangle((x, legend_y + 2, x + 14, legend_y + 14), fill=MASTERY)
    draw.text((x + 20, legend_y), "mastery = coverage x answered", fill=MUTED, font=font)
    x += 20 + int(draw.textlength("mastery = coverage x answered", font=font)) + 24
    draw.rectangle((x, legend_y + 2, x + 14, legend_y + 14), fill=ANSWERED)
    draw.text((x + 20, legend_y), "answered", fill=MUTED, font=font)
    out = io.BytesIO()
    image.save(out, format="PNG", optimize=True)
    return out.getvalue()

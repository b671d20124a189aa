"""The /stats chart: one horizontal bar per topic (PNG, Pillow).

The light bar is the share of the topic's questions answered, the dark bar inside it the mastery
(mean score × share answered). Title, labels and legend are in the user's language, drawn with
DejaVu Sans (Debian's fonts-dejavu-core, `CHART_FONT` to point elsewhere). Where no such font is
installed, Pillow's bundled font has no Cyrillic: the labels fall back to Latin topic ids and the
caption carries the "id — title" legend (:func:`has_cyrillic_font`).
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # Pillow is imported when a chart is drawn, not at start-up (issue 34)
    from PIL.ImageFont import FreeTypeFont
    from PIL.ImageFont import ImageFont as BitmapFont

from bot.core.stats import percent

WIDTH = 640
ROW = 30
TOP = 52
BOTTOM = 44
LABEL_W = 130
MAX_LABEL_W = 240
PCT_W = 52
PAD = 16
BACKGROUND = (255, 255, 255)
TRACK = (236, 239, 243)
ANSWERED = (178, 205, 238)
MASTERY = (38, 99, 175)
TEXT = (33, 37, 41)
MUTED = (110, 117, 125)


FONT_PATHS = (
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/TTF/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu/DejaVuSans.ttf",
    "/Library/Fonts/DejaVuSans.ttf",
)


def _font_path() -> str | None:
    import os

    for path in (os.environ.get("CHART_FONT", ""), *FONT_PATHS):
        if path and os.path.isfile(path):
            return path
    return None


def has_cyrillic_font() -> bool:
    """Whether the chart can draw Russian labels (a DejaVu-like TrueType font is installed)."""
    return _font_path() is not None


def _font(size: int) -> FreeTypeFont | BitmapFont:
    from PIL import ImageFont

    path = _font_path()
    return ImageFont.truetype(path, size) if path else ImageFont.load_default(size=size)


@dataclass(frozen=True, slots=True)
class Legend:
    mastery: str = "mastery = score x answered"
    answered: str = "answered"


@dataclass(frozen=True, slots=True)
class ChartRow:
    label: str  # the topic's title (its id where no Cyrillic font is installed)
    answered: float  # share of the topic's questions answered, 0..1
    mastery: float  # 0..1


def _clamp(value: float) -> float:
    return min(max(value, 0.0), 1.0)


def mastery_chart(rows: Sequence[ChartRow], title: str = "Mastery by topic", legend: Legend | None = None) -> bytes:
    """A small PNG; its height grows with the number of topics."""
    from PIL import Image, ImageDraw

    legend = legend or Legend()
    height = TOP + ROW * max(len(rows), 1) + BOTTOM
    image = Image.new("RGB", (WIDTH, height), BACKGROUND)
    draw = ImageDraw.Draw(image)
    font = _font(14)
    bold = _font(17)
    draw.text((PAD, 16), title, fill=TEXT, font=bold)
    widest = max((draw.textlength(r.label, font=font) for r in rows), default=0.0)
    label_w = int(min(max(widest + 14, LABEL_W), MAX_LABEL_W))
    track_x0 = PAD + label_w
    track_x1 = WIDTH - PAD - PCT_W
    span = track_x1 - track_x0
    for i, row in enumerate(rows):
        y = TOP + i * ROW
        label = row.label
        while len(label) > 1 and draw.textlength(label, font=font) > label_w - 14:
            label = label[:-2].rstrip() + "…"
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
    x = PAD
    draw.rectangle((x, legend_y + 2, x + 14, legend_y + 14), fill=MASTERY)
    draw.text((x + 20, legend_y), legend.mastery, fill=MUTED, font=font)
    x += 20 + int(draw.textlength(legend.mastery, font=font)) + 24
    draw.rectangle((x, legend_y + 2, x + 14, legend_y + 14), fill=ANSWERED)
    draw.text((x + 20, legend_y), legend.answered, fill=MUTED, font=font)
    out = io.BytesIO()
    image.save(out, format="PNG", optimize=True)
    return out.getvalue()

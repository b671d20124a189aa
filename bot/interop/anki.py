"""Export the bank as an Anki deck (``.apkg``, via genanki).

One note per question: the front is the question, the back the reference answer (the bank's
Markdown rendered to simple HTML) and its key points. Tags: ``topic::<topic id>`` and
``term::<term id>`` for every glossary term the question links to.

Ids are stable, so importing a newer export into Anki updates the notes instead of adding copies:
a note's GUID is derived from the question id, the note type (model) id is a constant and each
topic's deck id is derived from the topic id. Questions whose answer is still an import
placeholder are left out.
"""

from __future__ import annotations

import hashlib
import html
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import genanki

from bot.bank import Bank, Question
from bot.bank.markdown import inline_html, render_blocks
from bot.interop.items import is_placeholder

MODEL_ID: Final = 1_607_392_417  # never change: Anki identifies the note type by it
MODEL_NAME: Final = "interview-bot question"
DECK_ROOT: Final = "Interview bot"
FIELDS: Final = ("Question", "Answer", "Key points", "Topic", "Label")

CSS: Final = """\
.card { font-family: -apple-system, "Segoe UI", Roboto, sans-serif; font-size: 18px; text-align: left;
        color: #1d1d1f; background: #fff; max-width: 46em; margin: 0 auto; line-height: 1.45; }
.meta { color: #888; font-size: 13px; margin-bottom: .6em; }
.question { font-weight: 600; }
pre { background: #f4f4f4; padding: .6em; overflow-x: auto; font-size: 14px; }
.kp ul { margin-top: .3em; }
.night_mode .card { color: #eee; background: #1e1e1e; }
.night_mode pre { background: #2b2b2b; }
"""

FRONT: Final = '<div class="meta">{{Topic}} · {{Label}}</div><div class="question">{{Question}}</div>'
BACK: Final = (
    '{{FrontSide}}<hr id="answer"><div class="answer">{{Answer}}</div>'
    '<div class="kp"><b>Ключевые пункты</b>{{Key points}}</div>'
)


def stable_id(*parts: str) -> int:
    """A deck id from names: the same input always gives the same id, in Anki's usual range."""
    digest = hashlib.sha256("\x1f".join(("interview-bot", *parts)).encode()).digest()
    return (1 << 30) + int.from_bytes(digest[:4], "big") % (1 << 30)


def note_guid(question_id: str) -> str:
    return str(genanki.guid_for(question_id))


def model() -> genanki.Model:
    return genanki.Model(
        MODEL_ID,
        MODEL_NAME,
        fields=[{"name": name} for name in FIELDS],
        templates=[{"name": "Question → answer", "qfmt": FRONT, "afmt": BACK}],
        css=CSS,
    )


def answer_html(markdown: str) -> str:
    """The bank's Markdown as HTML for a card: paragraphs with <br> line breaks, code in <pre>."""
    out = []
    for block in render_blocks(markdown):
        if block.startswith("<pre>"):
            out.append(block)
        else:
            out.append("<p>" + block.replace("\n", "<br>") + "</p>")
    return "".join(out)


def card_back_html(q: Question) -> str:
    """The answer card, then the details and the interviewer's follow-ups (the chat shows those on
    demand; a flash card shows them under the answer)."""
    parts = [answer_html(q.answer)]
    if q.details:
        parts.append(answer_html(q.details))
    if q.follow_ups:
        items = "".join(f"<li><b>{inline_html(f.question)}</b><br>{inline_html(f.answer)}</li>" for f in q.follow_ups)
        parts.append(f"<p><b>Что спросят дальше</b></p><ul>{items}</ul>")
    return "<hr>".join(parts)


def question_html(q: Question) -> str:
    text = html.escape(q.text, quote=False)
    return f"<i>{html.escape(q.context, quote=False)}</i><br>{text}" if q.context else text


def key_points_html(q: Question) -> str:
    items = "".join(f"<li>{inline_html(kp.text)}</li>" for kp in q.key_points)
    return f"<ul>{items}</ul>"


def tags(q: Question) -> list[str]:
    return [f"topic::{q.topic}", *(f"term::{t}" for t in q.terms)]


@dataclass(frozen=True, slots=True)
class DeckSummary:
    notes: int
    decks: int
    skipped: list[str]  # ids left out (placeholder answers)


def build_package(bank: Bank, questions: Iterable[Question]) -> tuple[genanki.Package, DeckSummary]:
    note_type = model()
    decks: dict[str, genanki.Deck] = {}
    notes = 0
    skipped: list[str] = []
    for q in questions:
        if is_placeholder(q.answer):
            skipped.append(q.id)
            continue
        topic = bank.topic(q.topic)
        title = topic.title_ru if topic else q.topic
        deck = decks.get(q.topic)
        if deck is None:
            deck = genanki.Deck(stable_id("deck", q.topic), f"{DECK_ROOT}::{title}")
            decks[q.topic] = deck
        deck.add_note(
            genanki.Note(
                model=note_type,
                fields=[
                    question_html(q),
                    card_back_html(q),
                    key_points_html(q),
                    html.escape(title, quote=False),
                    html.escape(q.label, quote=False),
                ],
                tags=tags(q),
                guid=note_guid(q.id),
            )
        )
        notes += 1
    return genanki.Package(list(decks.values())), DeckSummary(notes, len(decks), skipped)


def write_deck(bank: Bank, questions: Iterable[Question], out: Path) -> DeckSummary:
    package, summary = build_package(bank, questions)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.writing")
    package.write_to_file(str(tmp))
    os.replace(tmp, out)
    return summary

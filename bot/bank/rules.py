"""The bank format's rules the validator holds records to: ids, fields, limits, list sizes."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

ID_RE: Final = re.compile(r"^[a-z0-9][a-z0-9-]{0,31}$")
# Room left in a message for the question header, labels and the like around question + answer.
MESSAGE_CHROME: Final = 200
MIN_KEY_POINTS, MAX_KEY_POINTS = 3, 6
MIN_MISCONCEPTIONS, MAX_MISCONCEPTIONS = 2, 8
WEIGHTS: Final = ("core", "bonus")
MISCONCEPTION_WEIGHTS: Final = ("core", "side")
# The answer card is chat-sized; the rest goes to ``details`` (shown on demand).
ANSWER_LIMIT: Final = 900
FOLLOW_UP_ANSWER_LIMIT: Final = 400
MIN_FOLLOW_UPS, MAX_FOLLOW_UPS = 2, 3
SOURCE_KINDS: Final = ("seed", "original")

QUESTION_FIELDS: Final = frozenset(
    {
        "id",
        "number",
        "kind",
        "topic",
        "difficulty",
        "source",
        "text",
        "terms",
        "key_points",
        "misconceptions",
        "answer",
        "details",
        "follow_ups",
        "context",
        "same_as",
        "overlaps",
    }
)
LINK_FIELDS: Final = ("same_as", "overlaps")
TOPIC_FIELDS: Final = frozenset({"id", "title", "order", "area"})
AREA_FIELDS: Final = frozenset({"id", "title", "order", "target"})
TERM_FIELDS: Final = frozenset({"id", "term", "aliases", "definition", "questions"})
TOP_LEVEL: Final = frozenset({"areas", "topics", "questions", "glossary", "synonyms", "antonyms"})


@dataclass(frozen=True, slots=True)
class ListSpec:
    """A list of mappings in a question (key points, misconceptions, follow-ups): its key, what one
    item is called, how many it takes, the shape an item must have, the problem when it is missing."""

    key: str
    noun: str
    bounds: tuple[int, int]
    shape: str
    missing: str


KEY_POINTS_LIST: Final = ListSpec(
    "key_points", "key point", (MIN_KEY_POINTS, MAX_KEY_POINTS), "{text: ..., match: [...]}",
    "missing 'key_points' (a list of 3 to 6)",
)  # fmt: skip
MISCONCEPTIONS_LIST: Final = ListSpec(
    "misconceptions", "misconception", (MIN_MISCONCEPTIONS, MAX_MISCONCEPTIONS),
    "{claim: ..., correction: ..., match: [...]}", "'misconceptions' must be a list of {claim, correction, match}",
)  # fmt: skip
FOLLOW_UPS_LIST: Final = ListSpec(
    "follow_ups", "follow-up", (MIN_FOLLOW_UPS, MAX_FOLLOW_UPS), "{question: ..., answer: ...}",
    "'follow_ups' must be a list of {question, answer}",
)  # fmt: skip

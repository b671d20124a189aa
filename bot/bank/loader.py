"""Load and validate a bank from YAML files; every problem is reported as ``file:line: message``.

The loader reads every ``*.yaml``/``*.yml`` file under the bank folder with PyYAML's C loader (when
available), keeps the line of every mapping and key, checks each record and then the links between
them, and either returns an immutable :class:`~bot.bank.model.Bank` or raises :class:`BankError`
listing all problems at once.
"""

from __future__ import annotations

import difflib
import hashlib
import itertools
import os
import pickle
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Final, cast

import yaml

from bot.bank.markdown import TELEGRAM_TEXT_LIMIT, escape, to_html, visible_length
from bot.bank.model import (
    Area,
    Bank,
    FollowUp,
    KeyPoint,
    Kind,
    Lexicon,
    Location,
    Misconception,
    Question,
    QuestionExtras,
    Term,
    Topic,
    short_handle,
)

try:  # the C loader is several times faster; fall back to pure Python where libyaml is missing
    from yaml import CSafeLoader as _BaseLoader
except ImportError:  # pragma: no cover - depends on how PyYAML was built
    from yaml import SafeLoader as _BaseLoader  # type: ignore[assignment]

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
class _ListSpec:
    """A list of mappings in a question (key points, misconceptions, follow-ups): its key, what one
    item is called, how many it takes, the shape an item must have, the problem when it is missing."""

    key: str
    noun: str
    bounds: tuple[int, int]
    shape: str
    missing: str


KEY_POINTS_LIST: Final = _ListSpec(
    "key_points", "key point", (MIN_KEY_POINTS, MAX_KEY_POINTS), "{text: ..., match: [...]}",
    "missing 'key_points' (a list of 3 to 6)",
)  # fmt: skip
MISCONCEPTIONS_LIST: Final = _ListSpec(
    "misconceptions", "misconception", (MIN_MISCONCEPTIONS, MAX_MISCONCEPTIONS),
    "{claim: ..., correction: ..., match: [...]}", "'misconceptions' must be a list of {claim, correction, match}",
)  # fmt: skip
FOLLOW_UPS_LIST: Final = _ListSpec(
    "follow_ups", "follow-up", (MIN_FOLLOW_UPS, MAX_FOLLOW_UPS), "{question: ..., answer: ...}",
    "'follow_ups' must be a list of {question, answer}",
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class Problem:
    file: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.message}"


class BankError(Exception):
    """The bank is invalid; ``problems`` lists every problem found."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = sorted(problems, key=lambda p: (p.file, p.line, p.message))
        super().__init__(self.report())

    def __reduce__(self) -> tuple[type[BankError], tuple[list[Problem]]]:
        return (BankError, (self.problems,))  # picklable across processes

    def report(self) -> str:
        lines = [str(p) for p in self.problems]
        lines.append(f"{len(self.problems)} problem(s) found; the bank was not loaded.")
        return "\n".join(lines)


class _Map(dict[Any, Any]):
    """A YAML mapping that remembers its own line and the line of each key (1-based)."""

    line: int
    key_lines: dict[Any, int]


class _LineLoader(_BaseLoader):
    duplicate_keys: list[tuple[int, str]]
    offset: int = 0  # lines before this loader's text in its file (a chunk of a large file)


def _construct_mapping(loader: _LineLoader, node: yaml.MappingNode) -> _Map:
    loader.flatten_mapping(node)
    result = _Map()
    result.line = node.start_mark.line + 1 + loader.offset
    result.key_lines = {}
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        line = key_node.start_mark.line + 1 + loader.offset
        try:
            if key in result:
                loader.duplicate_keys.append((line, f"duplicate key {key!r} in one mapping"))
        except TypeError:
            loader.duplicate_keys.append((line, "a mapping key must be a plain value"))
            continue
        result[key] = loader.construct_object(value_node, deep=True)
        result.key_lines[key] = line
    return result


class _Seq(list[Any]):
    """A YAML sequence that remembers the line of each item (1-based)."""

    item_lines: list[int]


def _construct_sequence(loader: _LineLoader, node: yaml.SequenceNode) -> _Seq:
    result = _Seq(loader.construct_object(child, deep=True) for child in node.value)
    result.item_lines = [child.start_mark.line + 1 + loader.offset for child in node.value]
    return result


_LineLoader.add_constructor("tag:yaml.org,2002:map", _construct_mapping)
_LineLoader.add_constructor("tag:yaml.org,2002:seq", _construct_sequence)


def _interned(phrases: list[str]) -> tuple[str, ...]:
    return tuple(sys.intern(x) for x in phrases)


def _display(path: Path) -> str:
    try:
        rel = os.path.relpath(path)
    except ValueError:  # pragma: no cover - other drive on Windows
        return str(path)
    return str(path) if rel.startswith("..") else rel


def bank_files(path: Path) -> list[Path]:
    if path.is_file():
        return [path]
    return sorted(p for p in path.rglob("*") if p.suffix in {".yaml", ".yml"} and p.is_file())


class _Checker:
    """Collects records and problems while walking the parsed files."""

    def __init__(self) -> None:
        self.problems: list[Problem] = []
        self.topics: list[tuple[Topic, Location]] = []
        self.areas: list[tuple[Area, Location]] = []
        self.area_lines: dict[str, int] = {}  # topic id → the line of its 'area:'
        self.questions: list[tuple[Question, Location]] = []
        self.link_lines: dict[tuple[str, str], int] = {}  # (question id, field) → its line
        self.terms: list[tuple[Term, Location, dict[str, int], int]] = []
        self.synonyms: list[tuple[str, ...]] = []
        self.antonyms: list[tuple[str, str]] = []

    def problem(self, file: str, line: int, message: str) -> None:
        self.problems.append(Problem(file, line, message))

    # -- field helpers -----------------------------------------------------------------------
    def _line(self, m: _Map, key: str) -> int:
        return m.key_lines.get(key, m.line)

    def _unknown_fields(self, file: str, m: _Map, allowed: frozenset[str], what: str) -> None:
        for key in m:
            if key not in allowed:
                hint = difflib.get_close_matches(str(key), sorted(allowed), n=1)
                extra = f" (did you mean {hint[0]!r}?)" if hint else ""
                self.problem(file, self._line(m, key), f"{what}: unknown field {key!r}{extra}")

    def _str(self, file: str, m: _Map, key: str, what: str, *, required: bool = True) -> str | None:
        value = m.get(key)
        if value is None:
            if required:
                self.problem(file, m.line, f"{what}: missing {key!r}")
            return None
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            self.problem(file, self._line(m, key), f"{what}: {key!r} must be text")
            return None
        text = str(value).strip()
        if not text:
            self.problem(file, self._line(m, key), f"{what}: empty {key!r}")
            return None
        return text

    def _int(self, file: str, m: _Map, key: str, what: str, lo: int, hi: int) -> int | None:
        value = m.get(key)
        if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
            self.problem(file, self._line(m, key), f"{what}: {key!r} must be a whole number {lo}..{hi}")
            return None
        return value

    def _id(self, file: str, m: _Map, what: str) -> str | None:
        value = self._str(file, m, "id", what)
        if value is not None and not ID_RE.match(value):
            self.problem(
                file,
                self._line(m, "id"),
                f"{what}: id {value!r} must be lowercase letters, digits and '-' (at most 32)",
            )
            return None
        return value

    def _str_list(self, file: str, m: _Map, key: str, what: str) -> list[str] | None:
        value = m.get(key)
        if value is None:
            return []
        if not isinstance(value, list) or not all(
            isinstance(v, str | int) and not isinstance(v, bool) and str(v).strip() for v in value
        ):
            self.problem(file, self._line(m, key), f"{what}: {key!r} must be a list of texts")
            return None
        return [str(v).strip() for v in value]

    def _title(self, file: str, m: _Map, what: str, *, plain: bool) -> tuple[str | None, str | None]:
        """``title: {ru, en}`` (``plain``: one text for both is accepted too); a missing one is reported."""
        title = m.get("title")
        if isinstance(title, _Map):
            return self._str(file, title, "ru", f"{what} title"), self._str(file, title, "en", f"{what} title")
        if plain and isinstance(title, str) and title.strip():
            return title.strip(), title.strip()
        self.problem(file, self._line(m, "title"), f"{what}: missing 'title' {{ru: ..., en: ...}}")
        return None, None

    # -- records -----------------------------------------------------------------------------
    def topic(self, file: str, m: _Map) -> None:
        where = Location(file, m.line)
        tid = self._id(file, m, "topic")
        what = f"topic {tid!r}" if tid else "topic"
        self._unknown_fields(file, m, TOPIC_FIELDS, what)
        ru, en = self._title(file, m, what, plain=True)
        order = self._int(file, m, "order", what, -(10**6), 10**6) if "order" in m else 0
        area = self._str(file, m, "area", what, required=False)
        if tid and area:
            self.area_lines[tid] = self._line(m, "area")
        if tid and ru and en and order is not None:
            self.topics.append((Topic(tid, ru, en, order, area), where))

    def area(self, file: str, m: _Map) -> None:
        """A syllabus area: ``{id, title: {ru, en}, order, target}``."""
        where = Location(file, m.line)
        aid = self._id(file, m, "area")
        what = f"area {aid!r}" if aid else "area"
        self._unknown_fields(file, m, AREA_FIELDS, what)
        ru, en = self._title(file, m, what, plain=False)
        order = self._int(file, m, "order", what, -(10**6), 10**6) if "order" in m else 0
        target = self._int(file, m, "target", what, 0, 10**6) if "target" in m else 0
        if aid and ru and en and order is not None and target is not None:
            self.areas.append((Area(aid, ru, en, order, target), where))

    def question(self, file: str, m: _Map) -> None:
        where = Location(file, m.line)
        qid = self._id(file, m, "question")
        what = f"question {qid!r}" if qid else "question"
        self._unknown_fields(file, m, QUESTION_FIELDS, what)
        ok = qid is not None
        kind = m.get("kind", "question")
        if kind not in ("question", "task"):
            self.problem(file, self._line(m, "kind"), f"{what}: kind must be 'question' or 'task'")
            ok = False
        number = None
        if m.get("number") is not None:
            number = self._int(file, m, "number", what, 1, 10**7)
            ok = ok and number is not None
        topic = self._str(file, m, "topic", what)
        text = self._str(file, m, "text", what)
        answer = self._str(file, m, "answer", what)
        difficulty = self._int(file, m, "difficulty", what, 1, 3) if "difficulty" in m else 2
        terms = self._str_list(file, m, "terms", what)
        if terms is not None and not terms:
            self.problem(file, self._line(m, "terms"), f"{what}: needs at least one glossary term")
        source = self._source(file, m, what)
        details = self._str(file, m, "details", what, required=False)
        context = self._str(file, m, "context", what, required=False)
        links = self._links(file, m, what, qid)
        follow_ups = self._follow_ups(file, m, what)
        key_points = self._key_points(file, m, what)
        misconceptions = self._misconceptions(file, m, what)
        parts = (topic, text, answer, difficulty, terms, key_points, misconceptions, follow_ups, source, links)
        if text and answer:
            self._check_length(file, m, what, text, answer, details)
        if not ok or None in parts:
            return
        src_file, src_section, original = cast(tuple[str | None, str | None, bool], source)
        extras = QuestionExtras(
            terms=tuple(sys.intern(t) for t in cast(list[str], terms)), difficulty=cast(int, difficulty),
            number=number, source_file=src_file, source_section=src_section, where=where,
            misconceptions=tuple(cast(list[Misconception], misconceptions)), details=details,
            follow_ups=tuple(cast(list[FollowUp], follow_ups)), context=context, original=original,
            same_as=cast(dict[str, tuple[str, ...]], links).get("same_as", ()),
            overlaps=cast(dict[str, tuple[str, ...]], links).get("overlaps", ()),
        )  # fmt: skip
        question = Question.create(
            cast(str, qid), cast(Kind, kind), cast(str, topic), cast(str, text), cast(str, answer),
            tuple(cast(list[KeyPoint], key_points)), extras,
        )  # fmt: skip
        self.questions.append((question, where))

    def _source(self, file: str, m: _Map, what: str) -> tuple[str | None, str | None, bool] | None:
        """``source: {file, section}`` or ``{kind: original}``: (file, section, original); None when
        its kind is unknown."""
        source = m.get("source")
        if isinstance(source, _Map):
            self._unknown_fields(file, source, frozenset({"file", "section", "kind"}), f"{what} source")
            src_file = self._str(file, source, "file", f"{what} source", required=False)
            src_section = self._str(file, source, "section", f"{what} source", required=False)
            kind_of_source = source.get("kind", "seed")
            if kind_of_source not in SOURCE_KINDS:
                self.problem(file, self._line(source, "kind"), f"{what}: source kind must be 'seed' or 'original'")
                return None
            return src_file, src_section, kind_of_source == "original"
        if source is not None:
            where_line = self._line(m, "source")
            self.problem(file, where_line, f"{what}: source must be {{file, section}} or {{kind: original}}")
        return None, None, False

    def _links(self, file: str, m: _Map, what: str, qid: str | None) -> dict[str, tuple[str, ...]] | None:
        """``same_as`` and ``overlaps`` (ids, lowercased, each once), their lines noted for the cross
        checks; None when one is not a list of ids."""
        links: dict[str, tuple[str, ...]] = {}
        ok = True
        for key in LINK_FIELDS:
            found = self._str_list(file, m, key, what)
            if found is None:
                ok = False
                continue
            links[key] = tuple(dict.fromkeys(x.lower() for x in found))
            if qid and key in m:
                self.link_lines[(qid, key)] = self._line(m, key)
        return links if ok else None

    def _entries(
        self, file: str, m: _Map, what: str, spec: _ListSpec
    ) -> tuple[int, list[tuple[str, _Map]], bool] | None:
        """The list under ``spec.key`` (key points, misconceptions): its line, each mapping with its
        label (``<what> <noun> <n>``), and whether every item was a mapping; None when it is not a list."""
        raw = m.get(spec.key)
        line = self._line(m, spec.key)
        if not isinstance(raw, list):
            self.problem(file, line, f"{what}: {spec.missing}")
            return None
        lo, hi = spec.bounds
        if not lo <= len(raw) <= hi:
            self.problem(file, line, f"{what}: has {len(raw)} {spec.noun}s, needs {lo} to {hi}")
        entries: list[tuple[str, _Map]] = []
        all_maps = True
        for i, item in enumerate(raw, 1):
            label = f"{what} {spec.noun} {i}"
            if isinstance(item, _Map):
                entries.append((label, item))
            else:
                self.problem(file, line, f"{label}: must be {spec.shape}")
                all_maps = False
        return line, entries, all_maps

    def _key_points(self, file: str, m: _Map, what: str) -> list[KeyPoint] | None:
        found = self._entries(file, m, what, KEY_POINTS_LIST)
        if found is None:
            return None
        line, entries, good = found
        points: list[KeyPoint] = []
        for label, item in entries:
            self._unknown_fields(file, item, frozenset({"text", "match", "weight"}), label)
            text = self._str(file, item, "text", label)
            weight = item.get("weight", "core")
            if weight not in WEIGHTS:
                self.problem(file, self._line(item, "weight"), f"{label}: weight must be 'core' or 'bonus'")
                good = False
                continue
            match = self._match(file, item, label, "no match words (list the words that show it was covered)")
            if text is None or match is None:
                good = False
                continue
            points.append(KeyPoint(text, tuple(sys.intern(m) for m in match), weight))
        if good and points and not any(p.core for p in points):
            self.problem(file, line, f"{what}: every key point is 'bonus'; at least one must be 'core'")
            good = False
        return points if good else None

    def _match(self, file: str, item: _Map, label: str, empty: str) -> list[str] | None:
        """The ``match`` list of a key point; an empty one is a problem."""
        return self._phrases(file, item, "match", label, empty)

    def _misconceptions(self, file: str, m: _Map, what: str) -> list[Misconception] | None:
        if m.get("misconceptions") is None:
            return []
        found = self._entries(file, m, what, MISCONCEPTIONS_LIST)
        if found is None:
            return None
        _, entries, good = found
        items: list[Misconception] = []
        fields = frozenset({"claim", "correction", "match", "predicate", "subject", "object", "weight"})
        for label, item in entries:
            self._unknown_fields(file, item, fields, label)
            claim = self._str(file, item, "claim", label)
            correction = self._str(file, item, "correction", label)
            if "predicate" in item and "match" in item:
                self.problem(file, self._line(item, "match"), f"{label}: give 'predicate' or 'match', not both")
                good = False
                continue
            key = "predicate" if "predicate" in item or "match" not in item else "match"
            predicate = self._phrases(
                file, item, key, label, "no predicate phrases (list what the wrong claim says of its subject)"
            )
            subject = self._phrases(file, item, "subject", label, "an empty subject (omit it instead)", optional=True)
            obj = self._phrases(file, item, "object", label, "an empty object (omit it instead)", optional=True)
            weight = item.get("weight", "core")
            if weight not in MISCONCEPTION_WEIGHTS:
                self.problem(file, self._line(item, "weight"), f"{label}: weight must be 'core' or 'side'")
                good = False
                continue
            if claim is None or correction is None or predicate is None or subject is None or obj is None:
                good = False
                continue
            items.append(
                Misconception(claim, correction, _interned(predicate), weight, _interned(subject), _interned(obj))
            )
        return items if good else None

    def _phrases(
        self, file: str, item: _Map, key: str, label: str, empty: str, *, optional: bool = False
    ) -> list[str] | None:
        """A list of phrases under ``key``; an empty one is a problem, a missing one too unless optional."""
        if optional and key not in item:
            return []
        found = self._str_list(file, item, key, label)
        if found is not None and not found:
            self.problem(file, self._line(item, key) if key in item else item.line, f"{label}: {empty}")
            return None
        return found

    def _follow_ups(self, file: str, m: _Map, what: str) -> list[FollowUp] | None:
        """``follow_ups:``: 2 or 3 {question, answer}, each answer at most 400 characters."""
        if m.get("follow_ups") is None:
            return []
        found = self._entries(file, m, what, FOLLOW_UPS_LIST)
        if found is None:
            return None
        _, entries, good = found
        items: list[FollowUp] = []
        for label, item in entries:
            self._unknown_fields(file, item, frozenset({"question", "answer"}), label)
            question = self._str(file, item, "question", label)
            answer = self._str(file, item, "answer", label)
            if question is None or answer is None:
                good = False
                continue
            if len(answer) > FOLLOW_UP_ANSWER_LIMIT:
                self.problem(
                    file,
                    self._line(item, "answer"),
                    f"{label}: the answer is {len(answer)} characters; at most {FOLLOW_UP_ANSWER_LIMIT}",
                )
                good = False
                continue
            items.append(FollowUp(question, answer))
        return items if good else None

    def synonym_group(self, file: str, line: int, item: object, section: str) -> None:
        if not isinstance(item, list) or not all(
            isinstance(v, str | int) and not isinstance(v, bool) and str(v).strip() for v in item
        ):
            self.problem(file, line, f"every entry under {section!r} must be a list of words, e.g. [задержка, latency]")
            return
        words = tuple(str(v).strip() for v in item)
        if section == "antonyms":
            if len(words) != 2:
                self.problem(file, line, f"an 'antonyms' entry must be a pair, got {len(words)} words: {list(words)}")
                return
            self.antonyms.append((words[0], words[1]))
            return
        if len(words) < 2:
            self.problem(file, line, f"a 'synonyms' group needs at least two words, got {list(words)}")
            return
        self.synonyms.append(words)

    def _check_length(self, file: str, m: _Map, what: str, text: str, answer: str, details: str | None) -> None:
        if len(answer) > ANSWER_LIMIT:
            self.problem(
                file,
                self._line(m, "answer"),
                f"{what}: the answer is {len(answer)} characters; the card holds at most {ANSWER_LIMIT} "
                "(move the rest to 'details:')",
            )
        size = visible_length(f"<b>{escape(text)}</b>\n\n{to_html(answer)}") + MESSAGE_CHROME
        if size > TELEGRAM_TEXT_LIMIT:
            self.problem(
                file,
                self._line(m, "answer"),
                f"{what}: question and answer are {size} characters after rendering "
                f"(with {MESSAGE_CHROME} for the message around them); Telegram allows "
                f"{TELEGRAM_TEXT_LIMIT}",
            )
        if details:
            size = visible_length(to_html(details)) + MESSAGE_CHROME
            if size > TELEGRAM_TEXT_LIMIT:
                self.problem(
                    file,
                    self._line(m, "details"),
                    f"{what}: details are {size} characters after rendering (with {MESSAGE_CHROME} "
                    f"for the message around them); Telegram allows {TELEGRAM_TEXT_LIMIT}",
                )

    def term(self, file: str, m: _Map) -> None:
        where = Location(file, m.line)
        tid = self._id(file, m, "term")
        what = f"term {tid!r}" if tid else "term"
        self._unknown_fields(file, m, TERM_FIELDS, what)
        names = m.get("term")
        en = ru = None
        if isinstance(names, _Map):
            en = self._str(file, names, "en", f"{what} term")
            ru = self._str(file, names, "ru", f"{what} term", required=False) or ""
        elif isinstance(names, str) and names.strip():
            en, ru = names.strip(), ""
        else:
            self.problem(file, self._line(m, "term"), f"{what}: missing 'term' {{en: ..., ru: ...}}")
        aliases = self._str_list(file, m, "aliases", what)
        definition = self._str(file, m, "definition", what)
        links = self._str_list(file, m, "questions", what)
        link_lines: dict[str, int] = {}
        if links:
            raw = m.get("questions")
            assert isinstance(raw, list)
            base = self._line(m, "questions")
            for qid in links:
                link_lines.setdefault(qid, base)
        if tid and definition and en is not None and ru is not None and aliases is not None:
            if links is None:
                return
            term = Term(tid, en, ru, tuple(aliases), definition, tuple(links), where)
            self.terms.append((term, where, link_lines, self._line(m, "aliases")))

    # -- cross checks ------------------------------------------------------------------------
    def link(self) -> Bank | None:
        """The bank, once every record and the links between them are checked; None on problems."""
        topics = self._link_topics()
        areas = self._link_areas(topics)
        questions = self._link_question_records(topics)
        self._link_questions(questions)
        terms = self._link_terms(questions)
        if self.problems:
            return None
        lexicon = Lexicon(tuple(self.synonyms), tuple(self.antonyms))
        return Bank(list(topics.values()), list(questions.values()), terms, lexicon=lexicon, areas=areas)

    def _link_topics(self) -> dict[str, Topic]:
        topics: dict[str, Topic] = {}
        for topic, where in self.topics:
            if topic.id in topics:
                self.problem(where.file, where.line, f"duplicate topic id {topic.id!r}")
            topics[topic.id] = topic
        if not self.topics and not self.problems:
            self.problem("(bank)", 0, "no topics defined (add a 'topics:' list)")
        return topics

    def _link_question_records(self, topics: dict[str, Topic]) -> dict[str, Question]:
        """The questions by id: ids and numbers unique, topics and glossary links known."""
        questions: dict[str, Question] = {}
        numbers: dict[tuple[str, int], str] = {}
        term_ids = {t.id for t, _, _, _ in self.terms}
        for q, where in self.questions:
            if q.id in questions:
                first = questions[q.id].where
                self.problem(where.file, where.line, f"duplicate question id {q.id!r} (first at {first})")
                continue
            questions[q.id] = q
            if q.number is not None:
                num_key = (q.kind, q.number)
                if num_key in numbers:
                    self.problem(
                        where.file,
                        where.line,
                        f"duplicate {q.kind} number {q.number} (also {numbers[num_key]!r})",
                    )
                numbers[num_key] = q.id
            if q.topic not in topics:
                hint = difflib.get_close_matches(q.topic, sorted(topics), n=1)
                extra = f" (did you mean {hint[0]!r}?)" if hint else ""
                self.problem(where.file, where.line, f"question {q.id!r}: unknown topic {q.topic!r}{extra}")
            for tid in q.terms:
                if tid not in term_ids:
                    self.problem(
                        where.file,
                        where.line,
                        f"question {q.id!r}: dangling glossary link {tid!r} (no such term)",
                    )
        return questions

    def _link_terms(self, questions: dict[str, Question]) -> list[Term]:
        """The terms: ids and names unique, question links known; each term's questions are its own
        links and the questions that link to it, in bank order."""
        terms: list[Term] = []
        seen_terms: set[str] = set()
        names: dict[str, str] = {}
        order = {qid: i for i, qid in enumerate(questions)}
        linked: dict[str, list[str]] = {}
        for q in questions.values():
            for tid in q.terms:
                linked.setdefault(tid, []).append(q.id)
        for term, where, link_lines, aliases_line in self.terms:
            if term.id in seen_terms:
                self.problem(where.file, where.line, f"duplicate term id {term.id!r}")
                continue
            seen_terms.add(term.id)
            for name in term.names:
                key = name.casefold()
                if key in names and names[key] != term.id:
                    self.problem(
                        where.file,
                        aliases_line if name in term.aliases else where.line,
                        f"term {term.id!r}: name or alias {name!r} is also used by term {names[key]!r}",
                    )
                names.setdefault(key, term.id)
            for qid in term.questions:
                if qid not in questions:
                    self.problem(
                        where.file,
                        link_lines.get(qid, where.line),
                        f"term {term.id!r}: dangling question link {qid!r} (no such question)",
                    )
            union = [q for q in dict.fromkeys([*term.questions, *linked.get(term.id, [])]) if q in order]
            terms.append(
                Term(term.id, term.term_en, term.term_ru, term.aliases, term.definition, tuple(union), term.where)
            )
        return terms

    def _link_areas(self, topics: dict[str, Topic]) -> list[Area]:
        """Areas are unique and each topic's ``area`` names one. A topic without an area loads (an
        import may add one); ``validate`` lists it, and a test keeps every shipped topic in an area."""
        areas: dict[str, Area] = {}
        for area, where in self.areas:
            if area.id in areas:
                self.problem(where.file, where.line, f"duplicate area id {area.id!r}")
            areas[area.id] = area
        where_of = {t.id: w for t, w in self.topics}
        for topic in topics.values():
            where = where_of[topic.id]
            if topic.area is not None and topic.area not in areas:
                hint = difflib.get_close_matches(topic.area, sorted(areas), n=1)
                extra = f" (did you mean {hint[0]!r}?)" if hint else ""
                line = self.area_lines.get(topic.id, where.line)
                self.problem(where.file, line, f"topic {topic.id!r}: unknown area {topic.area!r}{extra}")
        used = {t.area for t in topics.values()}
        for area, where in self.areas:
            if area.id not in used:
                self.problem(where.file, where.line, f"area {area.id!r} has no topics (give a topic 'area: {area.id}')")
        return list(areas.values())

    def _link_questions(self, questions: dict[str, Question]) -> None:
        """``same_as`` / ``overlaps`` name known items other than the item itself; each link is made
        symmetric (linking A to B links B to A). Handles are unique: an unnumbered item's short
        handle ('lora-4') names no other item."""
        same: dict[str, dict[str, None]] = {qid: {} for qid in questions}
        over: dict[str, dict[str, None]] = {qid: {} for qid in questions}
        for q in questions.values():
            where = q.where or Location("(bank)", 0)
            for key, targets, table in (("same_as", q.same_as, same), ("overlaps", q.overlaps, over)):
                line = self.link_lines.get((q.id, key), where.line)
                for other in targets:
                    if other == q.id:
                        self.problem(where.file, line, f"question {q.id!r}: {key} names the question itself")
                    elif other not in questions:
                        hint = difflib.get_close_matches(other, sorted(questions), n=1)
                        extra = f" (did you mean {hint[0]!r}?)" if hint else ""
                        message = f"question {q.id!r}: {key} names unknown question {other!r}{extra}"
                        self.problem(where.file, line, message)
                    else:
                        table[q.id][other] = None
                        table[other][q.id] = None
        for qid, q in questions.items():
            both = set(same[qid]) & set(over[qid])
            for other in sorted(both):
                del over[qid][other]  # same_as is the stronger link
            s, o = tuple(sorted(same[qid])), tuple(sorted(over[qid]))  # the same whatever the file order
            if (s, o) != (q.same_as, q.overlaps):
                questions[qid] = replace(q, same_as=s, overlaps=o)
        handles: dict[str, str] = {}
        for q in questions.values():
            handle = short_handle(q.id) if q.number is None else None
            if handle is None or handle == q.id:
                continue
            if handle in questions or handle in handles:
                where = q.where or Location("(bank)", 0)
                other = handles.get(handle, handle)
                self.problem(where.file, where.line, f"question {q.id!r}: its handle {handle!r} is also {other!r}")
            handles[handle] = q.id


CHUNKED_CHARS = 1_000_000  # a larger file is parsed an entry at a time (PyYAML holds a whole document's nodes)
_TOP_KEY = re.compile(r"([a-z_]+):[ \t]*(?:#.*)?")
_ENTRY_START = "  - "


def _parse(text: str, offset: int, duplicates: list[tuple[int, str]]) -> Any:
    loader = _LineLoader(text)
    loader.duplicate_keys = duplicates
    loader.offset = offset
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()


def _parse_in_chunks(text: str, duplicates: list[tuple[int, str]]) -> _Map | None:
    """A large bank file parsed one list entry at a time, so its memory peaks at one entry's nodes
    (a 4 MB import's validation went past 250 MB). Only for the plain block layout every bank file
    has — top-level ``key:`` lines, entries starting ``  - `` — and None for anything else (a flow
    list, an anchor, a stray line, a YAML error): the whole file is then parsed as usual."""
    lines = text.split("\n")
    sections: list[tuple[str, int, list[int]]] = []  # (key, its line index, line indexes of its entries)
    for i, line in enumerate(lines):
        if not line or line[0] in " #" or line.startswith("\t"):
            if line.startswith(_ENTRY_START):
                if not sections:
                    return None
                sections[-1][2].append(i)
            continue
        m = _TOP_KEY.fullmatch(line)
        if m is None or any(key == m.group(1) for key, _, _ in sections):
            return None  # not the plain layout, or a key twice: the whole parse reports it
        sections.append((m.group(1), i, []))
    data = _Map()
    data.line, data.key_lines = 1, {}
    for n, (key, at, starts) in enumerate(sections):
        end = sections[n + 1][1] if n + 1 < len(sections) else len(lines)
        items = _Seq()
        items.item_lines = []
        bounds = [*starts, end]
        for a, b in itertools.pairwise(bounds):
            chunk = "\n".join(["_:", *lines[a:b]])
            try:
                parsed = _parse(chunk, a - 1, duplicates)
            except yaml.YAMLError:
                return None
            if not isinstance(parsed, _Map) or not isinstance(parsed.get("_"), list) or len(parsed["_"]) != 1:
                return None
            items.append(parsed["_"][0])
            items.item_lines.append(a + 1)
        if not starts:
            between = "\n".join(lines[at + 1 : end]).strip()
            if between and not all(x.strip().startswith("#") for x in between.split("\n")):
                return None
        data[key] = items if starts else None
        data.key_lines[key] = at + 1
    return data


def _walk_file(checker: _Checker, path: Path) -> None:
    file = _display(path)
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        checker.problem(file, 1, f"not UTF-8 text ({exc.reason} at byte {exc.start})")
        return
    except OSError as exc:
        checker.problem(file, 0, f"cannot read: {exc.strerror}")
        return
    duplicates: list[tuple[int, str]] = []
    try:
        data = _parse_in_chunks(text, duplicates) if len(text) > CHUNKED_CHARS else None
        if data is None:
            duplicates.clear()
            data = _parse(text, 0, duplicates)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, col = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        reason = exc.problem or exc.context or "invalid YAML"
        checker.problem(file, line, f"bad YAML at column {col}: {reason}")
        return
    except yaml.YAMLError as exc:
        checker.problem(file, 1, f"bad YAML: {exc}")
        return
    for line, message in duplicates:
        checker.problem(file, line, message)
    if data is None:
        return
    if not isinstance(data, _Map):
        checker.problem(file, 1, "expected a mapping with 'topics:', 'questions:' or 'glossary:'")
        return
    handlers = {"areas": checker.area, "topics": checker.topic, "questions": checker.question, "glossary": checker.term}
    for key, value in data.items():
        line = data.key_lines.get(key, 1)
        if key not in TOP_LEVEL:
            checker.problem(
                file, line, f"unknown section {key!r} (expected areas, topics, questions, glossary, synonyms, antonyms)"
            )
            continue
        if value is None:
            continue
        if not isinstance(value, list):
            checker.problem(file, line, f"{key!r} must be a list of entries ('- id: ...')")
            continue
        if key in ("synonyms", "antonyms"):
            for i, item in enumerate(value):
                checker.synonym_group(file, value.item_lines[i] if isinstance(value, _Seq) else line, item, key)
            continue
        for item in value:
            if not isinstance(item, _Map):
                checker.problem(file, line, f"every entry under {key!r} must be a mapping")
                continue
            handlers[key](file, item)


def load_bank(path: Path | str, files: Iterable[Path] | None = None, *, cache_dir: Path | None = None) -> Bank:
    """Load and validate the bank at ``path`` (a folder or one file); raise :class:`BankError`.

    With ``cache_dir``, a bank whose files are unchanged since the last successful load (same
    paths, sizes and modification times, same loader version) is rebuilt from a cache of its
    validated records instead of parsing the YAML again; any change means a full load.
    """
    root = Path(path)
    if not root.exists():
        raise BankError([Problem(_display(root), 0, "no such file or folder")])
    paths = list(files) if files is not None else bank_files(root)
    if not paths:
        raise BankError([Problem(_display(root), 0, "no .yaml files in the bank folder")])
    cache_file = _cache_file(cache_dir, root, paths) if cache_dir is not None else None
    if cache_file is not None:
        cached = _read_cache(cache_file)
        if cached is not None:
            topics, questions, terms, lexicon, areas = cached
            return Bank(topics, questions, terms, source=str(root), lexicon=lexicon, areas=areas)
    checker = _Checker()
    for p in paths:
        _walk_file(checker, p)
    bank = checker.link()
    if bank is None:
        raise BankError(checker.problems)
    bank.source = str(root)
    if cache_file is not None:
        _write_cache(cache_file, bank)
    return bank


CACHE_VERSION = 5


def cache_is_warm(path: Path | str, cache_dir: Path) -> bool:
    """Whether :func:`load_bank` would be a cache hit for the bank at ``path``."""
    root = Path(path)
    paths = bank_files(root) if root.exists() else []
    return bool(paths) and _cache_file(cache_dir, root, paths).exists()


def warm_cache(path: Path | str, cache_dir: Path) -> None:
    """Load and validate the bank only to fill the cache (run in a child process, so that the
    memory the YAML parser leaves behind never belongs to the long-running bot)."""
    load_bank(path, cache_dir=cache_dir)


def _cache_file(cache_dir: Path, root: Path, paths: list[Path]) -> Path:
    """A cache file name that changes whenever the bank's files (or this loader) change."""
    digest = hashlib.sha256(f"{CACHE_VERSION}:{root.resolve()}".encode())
    digest.update(Path(__file__).read_bytes())  # a new loader or format invalidates the cache
    for p in sorted(paths):
        st = p.stat()
        digest.update(f"\0{p.resolve()}\0{st.st_size}\0{st.st_mtime_ns}".encode())
    return cache_dir / f"bank-{digest.hexdigest()[:32]}.pickle"


def _read_cache(cache_file: Path) -> tuple[list[Topic], list[Question], list[Term], Lexicon, list[Area]] | None:
    try:
        with cache_file.open("rb") as f:  # streamed: the file's bytes (21 MB for 10,000 questions) are never held whole
            data = pickle.load(f)  # noqa: S301 - our own file in the user's cache dir
    except (OSError, pickle.PickleError, EOFError, AttributeError, ValueError, TypeError):
        return None
    if not (isinstance(data, tuple) and len(data) == 5):
        return None
    return data


def _write_cache(cache_file: Path, bank: Bank) -> None:
    try:
        cache_file.parent.mkdir(parents=True, exist_ok=True)
        for old in cache_file.parent.glob("bank-*.pickle"):
            old.unlink(missing_ok=True)
        records = (
            list(bank.topics), list(bank.questions.values()), list(bank.terms.values()), bank.lexicon, list(bank.areas)
        )  # fmt: skip
        tmp = cache_file.with_suffix(f".{os.getpid()}.tmp")  # processes warming at once do not mix
        with tmp.open("wb") as f:
            pickle.dump(records, f, protocol=pickle.HIGHEST_PROTOCOL)
        tmp.replace(cache_file)
    except OSError:
        pass  # a read-only home: load from YAML every time


def default_bank_path() -> Path:
    """The bundled bank: ``data/`` in a source checkout, ``bot/bank_data`` in an installed wheel."""
    import importlib.util

    spec = importlib.util.find_spec("bot.bank_data")
    if spec is not None and spec.submodule_search_locations:
        for location in spec.submodule_search_locations:
            if Path(location).is_dir():
                return Path(location)
    return Path(__file__).resolve().parents[2] / "data"

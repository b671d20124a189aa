"""Each record of a bank file checked on its own (topics, areas, questions with their key points,
misconceptions and follow-ups, glossary terms, synonyms): the valid ones are kept, every problem is
noted. The links between records are checked by :mod:`bot.bank.linking`."""

from __future__ import annotations

import difflib
import sys
from typing import cast

from bot.bank.markdown import TELEGRAM_TEXT_LIMIT, escape, to_html, visible_length
from bot.bank.model import (
    Area,
    FollowUp,
    KeyPoint,
    Kind,
    Location,
    Misconception,
    Question,
    QuestionExtras,
    Term,
    Topic,
)
from bot.bank.problems import Problem
from bot.bank.rules import (
    ANSWER_LIMIT,
    AREA_FIELDS,
    FOLLOW_UP_ANSWER_LIMIT,
    FOLLOW_UPS_LIST,
    ID_RE,
    KEY_POINTS_LIST,
    LINK_FIELDS,
    MESSAGE_CHROME,
    MISCONCEPTION_WEIGHTS,
    MISCONCEPTIONS_LIST,
    QUESTION_FIELDS,
    SOURCE_KINDS,
    TERM_FIELDS,
    TOPIC_FIELDS,
    WEIGHTS,
    ListSpec,
)
from bot.bank.yaml_lines import LineMap


def interned(phrases: list[str]) -> tuple[str, ...]:
    return tuple(sys.intern(x) for x in phrases)


class RecordChecker:
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
    def _line(self, m: LineMap, key: str) -> int:
        return m.key_lines.get(key, m.line)

    def _unknown_fields(self, file: str, m: LineMap, allowed: frozenset[str], what: str) -> None:
        for key in m:
            if key not in allowed:
                hint = difflib.get_close_matches(str(key), sorted(allowed), n=1)
                extra = f" (did you mean {hint[0]!r}?)" if hint else ""
                self.problem(file, self._line(m, key), f"{what}: unknown field {key!r}{extra}")

    def _str(self, file: str, m: LineMap, key: str, what: str, *, required: bool = True) -> str | None:
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

    def _int(self, file: str, m: LineMap, key: str, what: str, lo: int, hi: int) -> int | None:
        value = m.get(key)
        if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
            self.problem(file, self._line(m, key), f"{what}: {key!r} must be a whole number {lo}..{hi}")
            return None
        return value

    def _id(self, file: str, m: LineMap, what: str) -> str | None:
        value = self._str(file, m, "id", what)
        if value is not None and not ID_RE.match(value):
            self.problem(
                file,
                self._line(m, "id"),
                f"{what}: id {value!r} must be lowercase letters, digits and '-' (at most 32)",
            )
            return None
        return value

    def _str_list(self, file: str, m: LineMap, key: str, what: str) -> list[str] | None:
        value = m.get(key)
        if value is None:
            return []
        if not isinstance(value, list) or not all(
            isinstance(v, str | int) and not isinstance(v, bool) and str(v).strip() for v in value
        ):
            self.problem(file, self._line(m, key), f"{what}: {key!r} must be a list of texts")
            return None
        return [str(v).strip() for v in value]

    def _title(self, file: str, m: LineMap, what: str, *, plain: bool) -> tuple[str | None, str | None]:
        """``title: {ru, en}`` (``plain``: one text for both is accepted too); a missing one is reported."""
        title = m.get("title")
        if isinstance(title, LineMap):
            return self._str(file, title, "ru", f"{what} title"), self._str(file, title, "en", f"{what} title")
        if plain and isinstance(title, str) and title.strip():
            return title.strip(), title.strip()
        self.problem(file, self._line(m, "title"), f"{what}: missing 'title' {{ru: ..., en: ...}}")
        return None, None

    # -- records -----------------------------------------------------------------------------
    def topic(self, file: str, m: LineMap) -> None:
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

    def area(self, file: str, m: LineMap) -> None:
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

    def question(self, file: str, m: LineMap) -> None:
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

    def _source(self, file: str, m: LineMap, what: str) -> tuple[str | None, str | None, bool] | None:
        """``source: {file, section}`` or ``{kind: original}``: (file, section, original); None when
        its kind is unknown."""
        source = m.get("source")
        if isinstance(source, LineMap):
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

    def _links(self, file: str, m: LineMap, what: str, qid: str | None) -> dict[str, tuple[str, ...]] | None:
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
        self, file: str, m: LineMap, what: str, spec: ListSpec
    ) -> tuple[int, list[tuple[str, LineMap]], bool] | None:
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
        entries: list[tuple[str, LineMap]] = []
        all_maps = True
        for i, item in enumerate(raw, 1):
            label = f"{what} {spec.noun} {i}"
            if isinstance(item, LineMap):
                entries.append((label, item))
            else:
                self.problem(file, line, f"{label}: must be {spec.shape}")
                all_maps = False
        return line, entries, all_maps

    def _key_points(self, file: str, m: LineMap, what: str) -> list[KeyPoint] | None:
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

    def _match(self, file: str, item: LineMap, label: str, empty: str) -> list[str] | None:
        """The ``match`` list of a key point; an empty one is a problem."""
        return self._phrases(file, item, "match", label, empty)

    def _misconceptions(self, file: str, m: LineMap, what: str) -> list[Misconception] | None:
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
                Misconception(claim, correction, interned(predicate), weight, interned(subject), interned(obj))
            )
        return items if good else None

    def _phrases(
        self, file: str, item: LineMap, key: str, label: str, empty: str, *, optional: bool = False
    ) -> list[str] | None:
        """A list of phrases under ``key``; an empty one is a problem, a missing one too unless optional."""
        if optional and key not in item:
            return []
        found = self._str_list(file, item, key, label)
        if found is not None and not found:
            self.problem(file, self._line(item, key) if key in item else item.line, f"{label}: {empty}")
            return None
        return found

    def _follow_ups(self, file: str, m: LineMap, what: str) -> list[FollowUp] | None:
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

    def _check_length(self, file: str, m: LineMap, what: str, text: str, answer: str, details: str | None) -> None:
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

    def term(self, file: str, m: LineMap) -> None:
        where = Location(file, m.line)
        tid = self._id(file, m, "term")
        what = f"term {tid!r}" if tid else "term"
        self._unknown_fields(file, m, TERM_FIELDS, what)
        names = m.get("term")
        en = ru = None
        if isinstance(names, LineMap):
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

"""The checks across records once every file is read: unique ids, numbers, names and handles; the
topics, areas, glossary terms and linked items each record names exist; links made symmetric."""

from __future__ import annotations

import difflib
from dataclasses import replace

from bot.bank.model import Area, Bank, Lexicon, Location, Question, Term, Topic, short_handle
from bot.bank.records import RecordChecker


class BankChecker(RecordChecker):
    """The records of a bank (:class:`RecordChecker`) and the links between them."""

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

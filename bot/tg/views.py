"""Message texts (Telegram HTML) and inline keyboards. Every bank and user string is escaped here."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from telegram import InlineKeyboardButton, InlineKeyboardMarkup, KeyboardButton, ReplyKeyboardMarkup

from bot.bank import Bank, Question, Term
from bot.bank.markdown import TELEGRAM_TEXT_LIMIT, escape, inline_html, pack, render_blocks, to_html
from bot.catalog import Catalog
from bot.core.grading import Grade
from bot.i18n import counted, t
from bot.services.feedback import charges, feedback_lines
from bot.tg.callbacks import (
    AskQuestion,
    ButtonData,
    Chosen,
    ConfirmShort,
    Details,
    Dispute,
    DropShort,
    GlossaryPage,
    GlossaryTopic,
    GlossaryTopics,
    Language,
    Next,
    NextReview,
    NextSearchResult,
    QuestionTerms,
    Reveal,
    SearchPage,
    SearchResult,
    SelfAssess,
    TermCard,
    TopicFilter,
)

PAGE = 8
BUTTON_TEXT = 60


@dataclass(frozen=True, slots=True)
class View:
    text: str
    keyboard: InlineKeyboardMarkup | None = None


def _short(text: str, limit: int = BUTTON_TEXT) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _btn(text: str, data: ButtonData) -> InlineKeyboardButton:
    return InlineKeyboardButton(_short(text, 64), callback_data=data.encode())


def question_button(q: Question, search: tuple[int, str] | None = None) -> InlineKeyboardButton:
    """A button that asks ``q``; from search results (``search`` = its index and the query) the
    question's «Следующий» then goes on to the next result."""
    prefix = f"{q.label}. "
    if search is not None:
        return _btn(prefix + q.text, SearchResult(q.id, search[0], search[1]))
    return _btn(prefix + q.text, AskQuestion(q.id))


def main_menu(lang: str) -> ReplyKeyboardMarkup:
    return ReplyKeyboardMarkup(
        [
            [KeyboardButton(t(lang, "menu.question")), KeyboardButton(t(lang, "menu.topics"))],
            [KeyboardButton(t(lang, "menu.glossary")), KeyboardButton(t(lang, "menu.help"))],
        ],
        resize_keyboard=True,
        is_persistent=True,
    )


def _kind_label(q: Question, lang: str) -> str:
    """'Вопрос 463', 'Задача t13', 'Вопрос lora-4': always with the handle ``/q`` takes."""
    return f"{t(lang, f'kind.{q.kind}')} {escape(q.label)}"


def similar_block(q: Question, bank: Bank, lang: str) -> str:
    """«Похожий вопрос: 412 · …» naming the items linked to ``q`` (same_as / overlaps)."""
    lines = [
        t(lang, "similar", label=escape(other.label), text=escape(_short(other.text, 90)))
        for qid in q.linked
        if (other := bank.question(qid)) is not None
    ]
    return "\n".join(lines)


def _header(q: Question, bank: Bank, lang: str) -> str:
    topic = bank.topic(q.topic)
    return t(
        lang,
        "question_header",
        kind_label=_kind_label(q, lang),
        topic=escape(topic.title(lang) if topic else q.topic),
        stars="★" * q.difficulty + "☆" * (3 - q.difficulty),
    )


def _context(q: Question) -> str:
    """The line shown above a seed question that makes no sense alone («Какие виды знаешь?»)."""
    return f"<i>{escape(q.context)}</i>" if q.context else ""


def details_button(q: Question, lang: str) -> InlineKeyboardButton:
    return _btn(t(lang, "btn.details"), Details(q.id))


def follow_ups_block(q: Question, lang: str) -> str:
    """«Что спросят дальше»: each follow-up with its short answer folded under it."""
    items = [
        f"• <b>{inline_html(f.question)}</b>\n<blockquote expandable>{inline_html(f.answer)}</blockquote>"
        for f in q.follow_ups
    ]
    return t(lang, "follow_ups") + "\n" + "\n".join(items)


def next_button(lang: str, topic: str | None = None, search: tuple[int, str] | None = None) -> InlineKeyboardButton:
    """«Следующий»: the next search result when the question came from a search, the same topic
    when it came from one (`/q lora`), else by the chat's filter."""
    if search is not None:
        return _btn(t(lang, "btn.next"), NextSearchResult(search[0], search[1]))
    return _btn(t(lang, "btn.next"), Next(topic or None))


def question_keyboard(
    q: Question, lang: str, next_topic: str | None = None, next_search: tuple[int, str] | None = None
) -> InlineKeyboardMarkup:
    return InlineKeyboardMarkup(
        [
            [_btn(t(lang, "btn.reveal"), Reveal(q.id)), _btn(t(lang, "btn.glossary"), QuestionTerms(q.id))],
            [next_button(lang, next_topic, next_search)],
        ]
    )


def question_view(
    q: Question,
    bank: Bank,
    lang: str,
    *,
    group: bool,
    note: str = "",
    next_topic: str | None = None,
    next_search: tuple[int, str] | None = None,
) -> View:
    hint = t(lang, "question_hint_group" if group else "question_hint_private")
    parts = [note, _header(q, bank, lang), _context(q), f"<b>{escape(q.text)}</b>", hint]
    return View("\n\n".join(p for p in parts if p), question_keyboard(q, lang, next_topic, next_search))


def answer_views(q: Question, bank: Bank, lang: str, *, lead: str = "") -> list[View]:
    """The reference answer, key points and glossary buttons; split only if it cannot fit."""
    head = t(lang, "answer_header", kind_label=_kind_label(q, lang))
    blocks = [f"{head}\n<i>{escape(q.text)}</i>", *render_blocks(q.answer)]
    if lead:
        blocks.insert(0, lead)
    points = "\n".join(f"• {inline_html(kp.text)}" for kp in q.key_points)
    blocks.append(f"{t(lang, 'key_points')}\n{points}")
    if q.follow_ups:
        blocks.append(follow_ups_block(q, lang))
    if q.linked:
        blocks.append(similar_block(q, bank, lang))
    terms = [bank.term(tid) for tid in q.terms]
    rows = [[_btn(term.name(lang), TermCard(term.id))] for term in terms if term is not None]
    if rows:
        blocks.append(t(lang, "answer_terms"))
    if q.details:
        rows.append([details_button(q, lang)])
    rows.append([_btn(t(lang, "btn.next"), Next())])
    messages = pack(blocks, TELEGRAM_TEXT_LIMIT)
    views = [View(m) for m in messages[:-1]]
    views.append(View(messages[-1], InlineKeyboardMarkup(rows)))
    return views


def details_views(q: Question, lang: str) -> list[View]:
    """«Подробнее»: the rest of the reference answer, with «Следующий» under it."""
    head = t(lang, "details_header", kind_label=_kind_label(q, lang))
    blocks = [f"{head}\n<i>{escape(q.text)}</i>", *render_blocks(q.details or "")]
    messages = pack(blocks, TELEGRAM_TEXT_LIMIT)
    views = [View(m) for m in messages[:-1]]
    views.append(View(messages[-1], InlineKeyboardMarkup([[_btn(t(lang, "btn.next"), Next())]])))
    return views


def inline_card(q: Question, bank: Bank, lang: str) -> str:
    """A question shared into any chat (inline mode): the bot may not be there, so answers go to it."""
    parts = [_header(q, bank, lang), _context(q), f"<b>{escape(q.text)}</b>", t(lang, "inline.hint")]
    return "\n\n".join(p for p in parts if p)


def question_terms_view(q: Question, bank: Bank, lang: str) -> View:
    terms = [term for tid in q.terms if (term := bank.term(tid)) is not None]
    if not terms:
        return View(t(lang, "question_no_terms"))
    rows = [[_btn(term.name(lang), TermCard(term.id))] for term in terms]
    return View(t(lang, "question_terms", label=escape(q.label)), InlineKeyboardMarkup(rows))


def _pager(to: Callable[[int], ButtonData], page: int, pages: int, lang: str) -> list[InlineKeyboardButton]:
    """«‹» and «›» under a paged list; ``to`` builds the button data of a page."""
    row = []
    if page > 0:
        row.append(_btn(t(lang, "btn.prev_page"), to(page - 1)))
    if page + 1 < pages:
        row.append(_btn(t(lang, "btn.next_page"), to(page + 1)))
    return row


def term_view(term: Term, bank: Bank, lang: str, page: int = 0) -> View:
    title = escape(term.term_en)
    if term.term_ru and term.term_ru != term.term_en:
        title = f"{escape(term.term_ru)} ({escape(term.term_en)})"
    lines = [f"📖 <b>{title}</b>"]
    aliases = [a for a in term.aliases if a not in (term.term_en, term.term_ru)]
    if aliases:
        lines.append(t(lang, "term_aliases", aliases=escape(", ".join(aliases))))
    lines.append("")
    if label := t(lang, "term_definition"):
        lines.append(label)
    lines.append(to_html(term.definition))  # `code` as code
    lines.append("")
    questions = [q for qid in term.questions if (q := bank.question(qid)) is not None]
    pages = max(1, math.ceil(len(questions) / PAGE))
    page = min(max(page, 0), pages - 1)
    if questions:
        lines.append(t(lang, "term_where", count=len(questions)))
    else:
        lines.append(t(lang, "term_where_none"))
    rows = [[question_button(q)] for q in questions[page * PAGE : (page + 1) * PAGE]]
    pager = _pager(lambda p: TermCard(term.id, p), page, pages, lang)
    if pager:
        rows.append(pager)
    return View("\n".join(lines), InlineKeyboardMarkup(rows) if rows else None)


def _sorted_terms(terms: Sequence[Term]) -> list[Term]:
    return sorted(terms, key=lambda term: term.term_en.casefold())


def glossary_view(bank: Bank, lang: str, page: int = 0) -> View:
    terms = _sorted_terms(list(bank.terms.values()))
    pages = max(1, math.ceil(len(terms) / PAGE))
    page = min(max(page, 0), pages - 1)
    chunk = terms[page * PAGE : (page + 1) * PAGE]
    rows = [
        [
            _btn(
                f"{term.term_en} · {term.term_ru}" if term.term_ru != term.term_en else term.term_en,
                TermCard(term.id),
            )
        ]
        for term in chunk
    ]
    pager = _pager(GlossaryPage, page, pages, lang)
    if pager:
        rows.append(pager)
    rows.append([_btn(t(lang, "btn.by_topic"), GlossaryTopics())])
    text = t(lang, "glossary_title", count=counted(len(terms), "terms", lang), page=page + 1, pages=pages)
    return View(text, InlineKeyboardMarkup(rows))


def glossary_topics_view(bank: Bank, lang: str) -> View:
    rows = [[_btn(topic.title(lang), GlossaryTopic(topic.id, 0))] for topic in bank.topics]
    rows.append([_btn(t(lang, "btn.alphabet"), GlossaryPage(0))])
    return View(t(lang, "glossary_pick_topic"), InlineKeyboardMarkup(rows))


def glossary_topic_view(bank: Bank, lang: str, topic_id: str, page: int = 0) -> View | None:
    topic = bank.topic(topic_id)
    if topic is None:
        return None
    ids = set(bank.topic_question_ids(topic_id))
    terms = _sorted_terms([term for term in bank.terms.values() if ids & set(term.questions)])
    pages = max(1, math.ceil(len(terms) / PAGE))
    page = min(max(page, 0), pages - 1)
    rows = [[_btn(term.name(lang), TermCard(term.id))] for term in terms[page * PAGE : (page + 1) * PAGE]]
    pager = _pager(lambda p: GlossaryTopic(topic_id, p), page, pages, lang)
    if pager:
        rows.append(pager)
    rows.append([_btn(t(lang, "btn.by_topic"), GlossaryTopics())])
    text = t(lang, "glossary_topic_title", topic=escape(topic.title(lang)), page=page + 1, pages=pages)
    return View(text, InlineKeyboardMarkup(rows))


def did_you_mean_view(query: str, terms: Sequence[Term], lang: str) -> View:
    rows = [[_btn(term.name(lang), TermCard(term.id))] for term in terms]
    return View(t(lang, "glossary_did_you_mean", query=escape(query)), InlineKeyboardMarkup(rows))


def search_view(
    catalog: Catalog, query: str, ids: Sequence[str], lang: str, page: int, *, corrected: str | None = None
) -> View:
    pages = max(1, math.ceil(len(ids) / PAGE))
    page = min(max(page, 0), pages - 1)
    chunk = [q for qid in ids[page * PAGE : (page + 1) * PAGE] if (q := catalog.bank.question(qid))]
    lines = [t(lang, "search_title", query=escape(query), count=len(ids), page=page + 1, pages=pages)]
    if corrected is not None:  # a typo: say what the results are for
        lines.append(t(lang, "search_corrected", query=escape(corrected)))
    for i, q in enumerate(chunk, page * PAGE + 1):
        lines.append(f"{i}. [{escape(q.label)}] {escape(_short(q.text, 150))}")  # the handle /q takes
    rows = [[question_button(q, (i, query))] for i, q in enumerate(chunk, page * PAGE)]
    # the query rides along in the paging and question buttons (cut to fit 64 bytes)
    pager = _pager(lambda p: SearchPage(p, query), page, pages, lang)
    if pager:
        rows.append(pager)
    return View("\n".join(lines), InlineKeyboardMarkup(rows))


def topics_view(bank: Bank, lang: str, answered: set[str], current: str | None) -> View:
    """The topics in syllabus order: those of one area stand together."""
    lines = [t(lang, "topics_title")]
    rows = []
    for topic in (topic for _, group in bank.topics_by_area() for topic in group):
        ids = bank.topic_question_ids(topic.id)  # questions and practice tasks
        if not ids:
            continue  # an empty topic is not offered
        done = sum(1 for qid in ids if qid in answered)
        mark = "✅ " if topic.id == current else ""
        rows.append([_btn(f"{mark}{topic.title(lang)} · {done}/{len(ids)}", TopicFilter(topic.id))])
    rows.append([_btn(t(lang, "btn.all_topics"), TopicFilter(None))])
    chosen = bank.topic(current) if current else None
    if chosen:
        lines.append(t(lang, "topics_filter", topic=escape(chosen.title(lang))))
    else:
        lines.append(t(lang, "topics_no_filter"))
    return View("\n".join(lines), InlineKeyboardMarkup(rows))


def nothing_found_view(bank: Bank, query: str, lang: str) -> View:
    """`/q words` that match nothing: say so, offer a random question and the topics."""
    rows = [[_btn(t(lang, "btn.random_question"), Next())]]
    rows += [
        [_btn(topic.title(lang), TopicFilter(topic.id))] for topic in bank.topics if bank.topic_question_ids(topic.id)
    ]
    return View(t(lang, "nothing_found_q", query=escape(query)), InlineKeyboardMarkup(rows))


def lang_keyboard() -> InlineKeyboardMarkup:
    return InlineKeyboardMarkup([[_btn("Русский", Language("ru")), _btn("English", Language("en"))]])


def self_assessment_row(q: Question, lang: str, answerer: int | None = None) -> list[InlineKeyboardButton]:
    """«Знал / Частично / Не знал». In a group the buttons name the answerer: only they count."""
    return [
        _btn(t(lang, "practice.knew"), SelfAssess(q.id, 3, answerer)),
        _btn(t(lang, "practice.partly"), SelfAssess(q.id, 2, answerer)),
        _btn(t(lang, "practice.didnt"), SelfAssess(q.id, 1, answerer)),
    ]


@dataclass(frozen=True, slots=True)
class FeedbackButtons:
    """The buttons under an answer's feedback: «Это не ошибка» under the offline grader's charges
    of a stored answer (``answer_id``); the self-assessment (``rate``: False once the user has rated
    themselves; ``answerer``: a group's answer, only its author may rate it); «Показать ответ»
    (``reveal``); and «Следующий» (``next_op`` "n", in ``next_topic`` when one was asked for) or
    «Следующий на повторение» ("rv"), or neither (None)."""

    answer_id: int | None = None
    rate: bool = True
    answerer: int | None = None
    reveal: bool = True
    next_op: str | None = "n"
    next_topic: str | None = None


def feedback_view(
    q: Question,
    grade: Grade,
    lang: str,
    *,
    head: str,
    fallback: str = "",
    disputed: Sequence[str] = (),
    buttons: FeedbackButtons = FeedbackButtons(),
) -> View:
    """What the user sees after an answer: the score, mistakes with corrections, covered key points,
    hints for the missed ones (``fallback``: why the LLM examiner did not grade it; ``disputed``:
    charges the user disputed), and the ``buttons``."""
    lines = [head]
    found = feedback_lines(q, grade, lang, fallback=fallback, disputed=disputed)
    fitted = _fit([line.text for line in found], TELEGRAM_TEXT_LIMIT - len(head) - 200)
    for line, raw in zip(found, fitted, strict=True):
        text = inline_html(raw)  # key points and corrections carry `code`
        lines.append(f"<b>{text}</b>" if line.kind == "score" else text)
    rows = dispute_rows(grade, lang, buttons.answer_id)
    if buttons.rate:
        lines.append("")
        lines.append(t(lang, "practice.rate_yourself"))
        rows.append(self_assessment_row(q, lang, buttons.answerer))
    tail = []
    if buttons.reveal:
        tail.append(_btn(t(lang, "btn.reveal"), Reveal(q.id)))
    if buttons.next_op == "n":
        tail.append(next_button(lang, buttons.next_topic))
    elif buttons.next_op == "rv":
        tail.append(_btn(t(lang, "practice.next_review"), NextReview()))
    if tail:
        rows.append(tail)
    return View("\n".join(lines), InlineKeyboardMarkup(rows))


def _fit(texts: list[str], budget: int) -> list[str]:
    """Lines cut, longest first, until they fit ``budget`` characters (escaping may add some: the
    caller leaves room), so the verdict always arrives in one message."""
    out = list(texts)
    while sum(len(x) + 1 for x in out) > budget and out:
        i = max(range(len(out)), key=lambda k: len(out[k]))
        excess = sum(len(x) + 1 for x in out) - budget
        keep = max(40, len(out[i]) - excess - 1)
        if keep >= len(out[i]):
            break
        out[i] = out[i][:keep].rstrip() + "…"
    return out


def dispute_rows(grade: Grade, lang: str, answer_id: int | None) -> list[list[InlineKeyboardButton]]:
    """«Это не ошибка» for each charge of the offline grader (numbered as the charges are when there
    are several), two to a row."""
    found = charges(grade)
    if answer_id is None or grade.backend != "keywords" or not found:
        return []
    if len(found) == 1:
        return [[_btn(t(lang, "practice.dispute"), Dispute(answer_id, found[0]))]]
    buttons = [_btn(t(lang, "practice.dispute_n", n=n), Dispute(answer_id, c)) for n, c in enumerate(found, 1)]
    return [buttons[i : i + 2] for i in range(0, len(buttons), 2)]


def confirm_short_view(text: str, ask_id: int, user_id: int, lang: str) -> View:
    """«Это ваш ответ?» for a 1-2 character message or a bare "?"."""
    keyboard = InlineKeyboardMarkup(
        [
            [
                _btn(t(lang, "practice.confirm_yes"), ConfirmShort(ask_id, user_id, text.strip()[:8])),
                _btn(t(lang, "practice.confirm_no"), DropShort()),
            ]
        ]
    )
    return View(t(lang, "practice.confirm_short", text=escape(text.strip())), keyboard)


def after_assessment_keyboard(
    q: Question, lang: str, next_op: str = "n", next_topic: str | None = None, chosen: str = ""
) -> InlineKeyboardMarkup:
    """After «Знал / Частично / Не знал»: that row becomes the chosen grade; «Показать ответ»,
    «Подробнее» (where the answer has details) and «Следующий» stay (none of them in a mock
    interview, where the next question comes by itself)."""
    rows = [[_btn(f"✓ {chosen}", Chosen())]] if chosen else []
    if next_op:
        tail = [_btn(t(lang, "btn.reveal"), Reveal(q.id))]
        if q.details:
            tail.append(details_button(q, lang))
        tail.append(
            _btn(t(lang, "practice.next_review"), NextReview()) if next_op == "rv" else next_button(lang, next_topic)
        )
        rows.append(tail)
    return InlineKeyboardMarkup(rows)


def my_answer_view(text: str, lang: str) -> View:
    """The user's own latest answer, quoted above the reference answer; a long one is cut to fit
    one message (the whole text stays stored, and /export has it)."""
    label = "Ваш ответ" if lang == "ru" else "Your answer"
    room = TELEGRAM_TEXT_LIMIT - 200
    if len(text) > room:
        quoted = escape(text[:room].rstrip()) + "…"
        note = "\n" + t(lang, "answer_quote_cut", chars=counted(len(text), "chars", lang))
    else:
        quoted, note = escape(text), ""
    return View(f"<b>{label}:</b>\n<blockquote expandable>{quoted}</blockquote>{note}")

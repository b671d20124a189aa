"""The mock interview's report is Telegram HTML that Telegram accepts for every question of the bank: a
long question is cut before it is escaped, never inside «&lt;» (1224: «…как только p < 0,05…» once cut
its «&lt;» to «&l…», and Telegram refused the report with "unsupported entity")."""

from __future__ import annotations

from bot.core.interview import ItemResult, report
from bot.db.models import Interview, InterviewItem
from bot.demo.markup import parse_html
from bot.services.interviews import Report
from bot.tg.handlers.interview import report_view
from tests.conftest import shipped_bank


def test_every_question_fits_a_report_telegram_accepts() -> None:
    bank = shipped_bank()
    questions = list(bank.questions.values())
    for start in range(0, len(questions), 5):
        chunk = questions[start : start + 5]
        interview = Interview(id=1, user_id=1, chat_id=1, size=len(chunk), time_limit=None)
        items = [
            InterviewItem(
                interview_id=1,
                position=i,
                question_id=q.id,
                follow_up="Почему?",
                follow_up_answer="a < b & c > d " * 30,
            )
            for i, q in enumerate(chunk)
        ]
        results = [ItemResult(q.id, 0.8, 3, 30.0, False) for q in chunk]
        done = Report(interview, items, results, report(bank, results), 120.0, [None] * len(chunk))
        for lang in ("ru", "en"):
            parse_html(report_view(bank, done, lang).text)  # raises as Telegram would

"""User-facing strings, one YAML file per language in ``bot/locales``.

Values are Python format strings; placeholders carry already-escaped HTML where the caller says so.
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from typing import Any, Final

import yaml

LANGUAGES: Final = ("ru", "en")
_RU_FAMILY: Final = frozenset({"ru", "uk", "be", "kk"})


@cache
def _catalog(lang: str) -> dict[str, Any]:
    """``locales/<lang>.yaml`` merged with ``locales/<lang>.<feature>.yaml`` files (one per feature)."""
    folder = resources.files("bot").joinpath("locales")
    names = sorted(
        entry.name for entry in folder.iterdir() if entry.name.startswith(f"{lang}.") and entry.name.endswith(".yaml")
    )
    merged: dict[str, Any] = {}
    for name in names:
        data = yaml.safe_load(folder.joinpath(name).read_text("utf-8"))
        assert isinstance(data, dict), name
        duplicated = merged.keys() & data.keys()
        assert not duplicated, f"{name}: keys defined twice: {sorted(duplicated)}"
        merged.update(data)
    return merged


def t(lang: str, key: str, /, **values: object) -> str:
    """The string ``key`` in ``lang`` (falling back to Russian), formatted with ``values``."""
    lang = lang if lang in LANGUAGES else "ru"
    node: Any = _catalog(lang)
    for part in key.split("."):
        node = node.get(part) if isinstance(node, dict) else None
        if node is None:
            if lang != "ru":
                return t("ru", key, **values)
            raise KeyError(key)
    if not isinstance(node, str):
        raise KeyError(key)
    return node.format(**values) if values else node


def language_from_telegram(code: str | None, default: str) -> str:
    """Russian for ru/uk/be/kk, English for other known codes, ``default`` when unknown."""
    if not code:
        return default
    base = code.split("-")[0].lower()
    return "ru" if base in _RU_FAMILY else "en"


def plural_ru(n: int, one: str, few: str, many: str) -> str:
    if n % 10 == 1 and n % 100 != 11:
        return one
    if 2 <= n % 10 <= 4 and not 12 <= n % 100 <= 14:
        return few
    return many


def count_questions(n: int, lang: str) -> str:
    """'5 вопросов', '1 question'."""
    return counted(n, "questions", lang)


# Russian forms (one, few, many) of the nouns shown with a number, in the case the text needs. Every
# noun a message shows after a number comes from here (tests/test_plurals.py sweeps the templates).
_RU_FORMS: dict[str, tuple[str, str, str]] = {
    "questions": ("вопрос", "вопроса", "вопросов"),
    "questions_genitive": ("вопроса", "вопросов", "вопросов"),  # «из 21 вопроса», «из 5 вопросов»
    "tasks": ("практическая задача", "практические задачи", "практических задач"),
    "tasks_short": ("задача", "задачи", "задач"),
    "topics": ("тема", "темы", "тем"),
    "topics_dative": ("теме", "темам", "темам"),  # «по 18 темам», «по 1 теме»
    "terms": ("термин", "термина", "терминов"),
    "terms_genitive": ("термина", "терминов", "терминов"),  # «из 125 терминов», «из 1 термина»
    "problems": ("проблема", "проблемы", "проблем"),
    "chars": ("символ", "символа", "символов"),
    "days": ("день", "дня", "дней"),
    "points": ("балл", "балла", "баллов"),
}
_EN_FORMS: dict[str, tuple[str, str]] = {
    "questions": ("question", "questions"),
    "questions_genitive": ("question", "questions"),
    "tasks": ("practice task", "practice tasks"),
    "tasks_short": ("task", "tasks"),
    "topics": ("topic", "topics"),
    "topics_dative": ("topic", "topics"),
    "terms": ("term", "terms"),
    "terms_genitive": ("term", "terms"),
    "problems": ("problem", "problems"),
    "chars": ("character", "characters"),
    "days": ("day", "days"),
    "points": ("point", "points"),
}
NOUNS: Final = tuple(_RU_FORMS)


def counted(n: int, noun: str, lang: str) -> str:
    """A number with its noun in the right form: «202 вопроса», «41 практическая задача», "1 topic"."""
    if lang == "en":
        one, many = _EN_FORMS[noun]
        return f"{n} {one if n == 1 else many}"
    return f"{n} {plural_ru(n, *_RU_FORMS[noun])}"


def section(lang: str, key: str) -> dict[str, str]:
    """Every string under ``key`` in ``lang`` (Russian where ``lang`` lacks one), flattened to
    dotted keys: what the Mini App's page shows, handed to it in one piece."""
    lang = lang if lang in LANGUAGES else "ru"

    def flat(node: Any, prefix: str) -> dict[str, str]:
        out: dict[str, str] = {}
        if isinstance(node, dict):
            for k, v in node.items():
                out.update(flat(v, f"{prefix}.{k}" if prefix else str(k)))
        elif isinstance(node, str):
            out[prefix] = node
        return out

    base = flat(_catalog("ru").get(key), "")
    return base if lang == "ru" else {**base, **flat(_catalog(lang).get(key), "")}

"""Text normalisation shared by search, glossary lookup and grading.

Every word becomes a *key*: lower-cased, ``ё``→``е``, stemmed (Russian or English Snowball), then
transliterated to a Latin "sound skeleton" so that Russian jargon meets its English original:
``чекпоинтов``, ``чекпоинт``, ``checkpointing`` and ``checkpoints`` all become ``chekpoint``.
Two keys match when they are equal or, for keys of at least :data:`PREFIX_MIN` letters, when one
is a prefix of the other (``kvantiz`` ~ ``kvantizat``).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Final

import snowballstemmer

from bot.core.wordlists import STOP as _STOP

CYRILLIC: Final = re.compile(r"[а-я]")  # in a normalized (lower-case) word

PREFIX_MIN: Final = 5
_WORD = re.compile(r"[0-9a-zа-я]+")
_TRANSLIT: Final = {
    "а": "a", "б": "b", "в": "v", "г": "g", "д": "d", "е": "e", "ж": "zh", "з": "z", "и": "i",
    "й": "i", "к": "k", "л": "l", "м": "m", "н": "n", "о": "o", "п": "p", "р": "r", "с": "s",
    "т": "t", "у": "u", "ф": "f", "х": "h", "ц": "ts", "ч": "ch", "ш": "sh", "щ": "sh", "ъ": "",
    "ы": "i", "ь": "", "э": "e", "ю": "iu", "я": "ia",
}  # fmt: skip
_LATIN_RULES: Final = (
    ("tion", "tsi"),
    ("ck", "k"),
    ("qu", "kv"),
    ("ph", "f"),
    ("th", "t"),
    ("sch", "sh"),
    ("x", "ks"),
    ("w", "v"),
    ("q", "k"),
    ("y", "i"),
    ("j", "dzh"),
)
_SOFT_C = re.compile(r"c(?=[eiy])")
_DOUBLE = re.compile(r"(.)\1+")

# Jargon whose transliteration does not meet the English spelling.
_JARGON: Final = {
    "кэш": "cache", "кеш": "cache", "кэша": "cache", "кеша": "cache", "кэшем": "cache", "кешем": "cache",
    "кэше": "cache", "кеше": "cache", "кэши": "cache", "кеши": "cache", "кэшей": "cache", "кешей": "cache",
    "кэшу": "cache", "кешу": "cache", "кэшами": "cache", "кешами": "cache",
    "аттеншн": "attention", "атеншн": "attention", "аттеншен": "attention",
    "лора": "lora", "лоры": "lora", "лору": "lora", "лорой": "lora",
    "регуляризация": "regularization", "регуляризации": "regularization",
    "фичи": "feature", "фича": "feature", "фичей": "feature",
    "скор": "score", "скоры": "score", "ворклоад": "workload",
}  # fmt: skip

_ru = snowballstemmer.stemmer("russian")
_en = snowballstemmer.stemmer("english")
# PyStemmer's stemmers keep their own cache of up to 10,000 words each (~3 MB with the strings);
# word_key's cache already holds every word it stems, so theirs only held second copies
for _stemmer in (_ru, _en):
    if hasattr(_stemmer, "maxCacheSize"):
        _stemmer.maxCacheSize = 0


def _skeleton(latin: str) -> str:
    s = _SOFT_C.sub("s", latin)
    for old, new in _LATIN_RULES:
        s = s.replace(old, new)
    s = s.replace("c", "k")
    return _DOUBLE.sub(r"\1", s)


# 26,681 words after the warm-up and grading the 2,772 dev answers twice (base_keys caches the
# grader's words itself); bounded so a long run's new words cannot grow it without end
@lru_cache(maxsize=50_000)
def word_key(word: str) -> str:
    """The key of one lower-case word (see the module docstring)."""
    word = _JARGON.get(word, word)
    if CYRILLIC.search(word):
        if len(word) < 3:  # "в", "к", "с" are prepositions, not the letters V, K, S
            return word
        stem = _ru.stemWord(word)
        latin = "".join(_TRANSLIT.get(ch, ch) for ch in stem)
        return _skeleton(_en.stemWord(latin)) if len(latin) > 3 else _skeleton(latin)
    if word.isdigit() or len(word) < 4:  # q, k, v, qk, kv, fp, tp stay themselves ("q" is not "k")
        return word
    key = _skeleton(_en.stemWord(word))
    return key if len(key) > 1 else word  # "zzzz" is not the letter z


def normalize(text: str) -> str:
    return text.lower().replace("ё", "е")


def words(text: str) -> list[str]:
    return _WORD.findall(normalize(text))


def keys(text: str, *, drop_stopwords: bool = True) -> list[str]:
    """Keys of every word in ``text`` in order (stop words dropped unless asked)."""
    return [word_key(w) for w in words(text) if not (drop_stopwords and w in _STOP)]


STOPWORDS: Final = _STOP  # function words of both languages (search drops them; grading counts them)


def is_stopword(word: str) -> bool:
    return word in _STOP


def covers(wanted: str, found: str) -> bool:
    """One-way match (grading): the answer's key ``found`` is ``wanted`` or extends it, so a short
    word in an answer ("батч") does not count as a longer term ("batchnorm")."""
    return found == wanted or (len(wanted) >= PREFIX_MIN and found.startswith(wanted))


SHORT_CHARS: Final = 2
# Whole messages that greet, thank or acknowledge rather than answer, one per line (compared after
# ё→е, without punctuation or emoji). Only the whole message counts: «спасибо, LoRA учит две малые
# матрицы» is an answer, and so is any message with a word not listed here.
_NOT_ANSWERS: Final = frozenset(
    line.strip()
    for line in """
    ok
    ок
    окей
    окэй
    да
    нет
    ага
    угу
    хм
    хмм
    hm
    hmm
    ну
    привет
    приветик
    приветствую
    здравствуй
    здравствуйте
    здрасте
    добрый день
    добрый вечер
    доброе утро
    всем привет
    привет бот
    хай
    салют
    спасибо
    спасибки
    спс
    пасиб
    благодарю
    спасибо большое
    большое спасибо
    ок спасибо
    окей спасибо
    хорошо
    ладно
    понятно
    ясно
    понял
    поняла
    понятно спасибо
    круто
    класс
    отлично
    пока
    hi
    hello
    hey
    hi there
    hello there
    good morning
    good evening
    thanks
    thank you
    thanks a lot
    thank you very much
    thx
    ty
    ok thanks
    okay
    cool
    nice
    great
    got it
    bye
    yes
    no
    """.strip().splitlines()
)
_NOT_WORD: Final = re.compile(r"[^\w\s]+|_")


def looks_like_no_answer(text: str) -> bool:
    """A 1-2 character message, a bare "?" or «…», or a greeting, thanks or «ок» (in Russian or
    English): probably not meant as the answer, so the bot asks «Это ваш ответ?» instead of grading it."""
    stripped = text.strip().casefold()
    if len(stripped) <= SHORT_CHARS:
        return True
    plain = " ".join(_NOT_WORD.sub(" ", stripped.replace("ё", "е")).split())
    return not plain or plain in _NOT_ANSWERS

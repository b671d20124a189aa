"""What the readers (Markdown notes, CSV) hand to the importer: raw items, raw glossary terms,
skipped lines; and the text helpers they share (wikilinks, slugs, key-point derivation)."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Final

from bot.bank.markdown import TELEGRAM_TEXT_LIMIT, escape, to_html, visible_length
from bot.bank.model import KeyPoint, Kind
from bot.bank.rules import MESSAGE_CHROME
from bot.core.text import is_stopword, keys, words

MIN_POINTS, MAX_POINTS = 3, 6
# A new question's answer until someone writes one; the importer reports such questions as
# "needs answer" and `import` keeps a real answer over it when merging.
PLACEHOLDER_PREFIX: Final = "TODO:"
PLACEHOLDER_ANSWER: Final = PLACEHOLDER_PREFIX + " эталонный ответ ещё не написан"
STUB_DEFINITION: Final = PLACEHOLDER_PREFIX + " определение ещё не написано."


def is_placeholder(text: str | None) -> bool:
    return text is None or not text.strip() or text.lstrip().startswith(PLACEHOLDER_PREFIX)


@dataclass(slots=True)
class RawItem:
    """One question or task as read from a note or a CSV row."""

    text: str
    source_file: str
    line: int
    kind: Kind = "question"
    number: int | None = None
    section: str | None = None  # the source section (heading) it was under
    topic: str | None = None  # a topic hint: heading text, topic id or title
    answer: str | None = None
    key_points: list[KeyPoint] | None = None  # explicit (CSV); None: derive
    terms: list[str] = field(default_factory=list)  # term ids or names (wikilinks, CSV)
    difficulty: int | None = None
    id: str | None = None
    notes: list[str] = field(default_factory=list)  # remarks for the report

    @property
    def where(self) -> str:
        return f"{self.source_file}:{self.line}"


@dataclass(slots=True)
class RawTerm:
    """A glossary note: the term, its definition and the items listed under it."""

    name: str
    source_file: str
    line: int
    definition: str | None = None
    aliases: list[str] = field(default_factory=list)
    links: list[RawItem] = field(default_factory=list)

    @property
    def where(self) -> str:
        return f"{self.source_file}:{self.line}"


@dataclass(frozen=True, slots=True)
class Skip:
    where: str
    text: str
    reason: str


@dataclass(slots=True)
class Parsed:
    items: list[RawItem] = field(default_factory=list)
    terms: list[RawTerm] = field(default_factory=list)
    skipped: list[Skip] = field(default_factory=list)
    chrome: Counter[str] = field(default_factory=Counter)  # page chrome removed, by kind
    notes: int = 0  # files read
    kind: str = "notes"  # "notes" | "csv"


# Text helpers ------------------------------------------------------------------------------------

_WIKILINK = re.compile(r"!?\[\[([^\]|#]*)(?:#([^\]|]*))?(?:\|([^\]]*))?\]\]")
_MDLINK = re.compile(r"(?<!!)\[([^\]]+)\]\((?:[^()\s]|\([^()\s]*\))+\)")
_IMAGE = re.compile(r"!\[[^\]]*\]\([^)]*\)")
_EMPHASIS = re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1")
_CHECKBOX = re.compile(r"^\[[ xX]\]\s+")


def strip_links(text: str) -> tuple[str, list[str]]:
    """Replace ``[[target|label]]`` by its label (``[[target]]`` by the target, embeds ``![[..]]``
    by nothing) and ``[text](url)`` by its text; return the text and the wikilink targets."""
    targets: list[str] = []

    def wikilink(m: re.Match[str]) -> str:
        if m.group(0).startswith("!"):
            return ""
        target, heading, label = (m.group(i) or "" for i in (1, 2, 3))
        target = target.strip()
        if target:
            targets.append(target.rsplit("/", 1)[-1])
        return (label or target or heading).strip()

    text = _WIKILINK.sub(wikilink, text)
    text = _IMAGE.sub("", text)
    text = _MDLINK.sub(lambda m: m.group(1), text)
    return text, targets


def clean_question(text: str) -> tuple[str, list[str]]:
    """A question's text as the bank stores it: links resolved, emphasis and checkboxes dropped."""
    text, targets = strip_links(text)
    text = _CHECKBOX.sub("", text.strip())
    text = _EMPHASIS.sub(lambda m: m.group(2), text)
    text = text.replace("`", "")
    return " ".join(text.split()), targets


def norm_text(text: str) -> str:
    """The form in which two question texts count as "the same text"."""
    return " ".join(text.casefold().replace("ё", "е").split()).rstrip(" ?.!:;")


_TRANSLIT: Final = {
    "а": "a", "б": "b", "в": "v", "г": "g", "д": "d", "е": "e", "ё": "e", "ж": "zh", "з": "z",
    "и": "i", "й": "i", "к": "k", "л": "l", "м": "m", "н": "n", "о": "o", "п": "p", "р": "r",
    "с": "s", "т": "t", "у": "u", "ф": "f", "х": "h", "ц": "ts", "ч": "ch", "ш": "sh", "щ": "shch",
    "ъ": "", "ы": "y", "ь": "", "э": "e", "ю": "yu", "я": "ya",
}  # fmt: skip


def slug(text: str, limit: int = 24, fallback: str = "item") -> str:
    """An id-safe form of a title: transliterated, lower-case, ``[a-z0-9-]``, at most ``limit``."""
    latin = "".join(_TRANSLIT.get(ch, ch) for ch in text.casefold())
    s = re.sub(r"[^a-z0-9]+", "-", latin).strip("-")
    if len(s) > limit:
        cut = s[:limit]
        s = cut.rsplit("-", 1)[0] if "-" in cut[limit // 2 :] else cut
        s = s.strip("-")
    return s or fallback


def has_cyrillic(text: str) -> bool:
    return re.search(r"[а-яА-ЯёЁ]", text) is not None


# Key points derived from text -------------------------------------------------------------------

# Words a question is made of that say nothing about its subject.
_FILLER_WORDS: Final = (
    "расскажи расскажите объясни объясните опиши опишите назови назовите приведи приведите "
    "такое такая такой такие это какие какой какая каких каким какую как что чем зачем почему "
    "когда где куда сколько знаешь знаете работает работают нужна нужен нужно нужны "
    "происходит бывает бывают есть можно ли ты вы тебе вам бы ваш ваша ваше ваши свой "
    "используете используешь делаете делаешь основной основные разница отличается отличаются "
    "сделать делать существуют существует помогают помогает случае случаях обычно также "
    "вместо остальные остальных особенно типичное типичный обычный очень сильно других другие другой "
    "каждый каждая всех всё всего который которая которое которые которых поэтому тоже даже "
    "оно они него ней них этот эта эти того этого этой своего свою своей свои свой "
    "explain describe what how why when which does do is are the a an you your tell about"
)
_FILLER: Final = frozenset(_FILLER_WORDS.split(" "))
_TOKEN = re.compile(r"[0-9A-Za-zА-Яа-яЁё][0-9A-Za-zА-Яа-яЁё_.+#-]*[0-9A-Za-zА-Яа-яЁё_+#)]|[0-9A-Za-zА-Яа-яЁё]")
_CLAUSES = re.compile(r"[?!;]+|(?<=[^\d])\.(?=\s|$)|,\s+(?=(?:а|и|или|что|как|какие|какой|зачем|чем)\b)")
_GENERIC: Final = (
    KeyPoint("Когда и зачем это применяют", ("применяют", "используют", "позволяет", "use case")),
    KeyPoint("Ограничения и компромиссы", ("минус", "недостаток", "ограничение", "компромисс", "trade-off")),
    KeyPoint("Пример из практики или цифры", ("например", "на практике", "пример", "for example")),
)


def salient(text: str, limit: int = 4) -> list[str]:
    """The words of ``text`` worth matching in an answer: no stop words, no question words."""
    out: dict[str, None] = {}
    for raw in _TOKEN.findall(text):
        token = raw.strip(".-")
        if token.endswith(")") and "(" not in token:
            token = token.rstrip(")")
        low = token.casefold().replace("ё", "е")
        parts = words(token)
        if not parts or low in _FILLER or all(is_stopword(w) or w in _FILLER for w in parts):
            continue
        if (len(token) < 3 and not (token.isupper() or any(ch.isdigit() for ch in token))) or len(token) < 2:
            continue
        out.setdefault(token, None)
    ranked = sorted(out, key=lambda t: -len(t))[:limit]
    return [t for t in out if t in ranked]


def _point(text: str, limit: int = 160) -> KeyPoint | None:
    text = " ".join(text.split()).strip(" -•*.,;:")
    if len(text) > limit:
        text = text[:limit].rsplit(" ", 1)[0].rstrip(",;:") + "…"
    match = salient(text)
    if not text or not match:
        return None
    return KeyPoint(text[:1].upper() + text[1:], tuple(match))


def _answer_lines(answer: str) -> list[str]:
    """Candidate key points of an answer: its top-level bullets when there are enough, else its
    bullets and the sentences of its paragraphs, in order (code blocks left out)."""
    bullet = re.compile(r"^(?:[-*•]|\d{1,3}[.)])\s+(.+)$")  # top level only
    bullets = [m.group(1) for line in answer.splitlines() if (m := bullet.match(line))]
    if len(bullets) >= MIN_POINTS:
        return bullets
    out: list[str] = []
    prose: list[str] = []
    in_code = False

    def flush() -> None:
        if prose:
            out.extend(s for s in re.split(r"(?<=[.!?])\s+", " ".join(prose)) if s.strip())
            prose.clear()

    for line in answer.splitlines():
        if line.strip().startswith("```"):
            in_code = not in_code
            flush()
        elif in_code:
            continue
        elif m := re.match(r"^\s*(?:[-*•]|\d{1,3}[.)])\s+(.+)$", line):
            flush()
            out.append(m.group(1))
        elif not line.strip():
            flush()
        else:
            prose.append(line.strip())
    flush()
    return out


def derive_key_points(question: str, answer: str | None = None) -> list[KeyPoint]:
    """3 to 6 key points: from the answer's bullets or sentences when there is a real answer,
    else from the parts of the question; topped up with generic interview criteria."""
    points: list[KeyPoint] = []
    seen: set[str] = set()

    def add(kp: KeyPoint | None) -> None:
        if kp is not None and kp.text.casefold() not in seen and len(points) < MAX_POINTS:
            seen.add(kp.text.casefold())
            points.append(kp)

    if answer and not is_placeholder(answer):
        for line in _answer_lines(answer):
            add(_point(line))
    if len(points) < MIN_POINTS:
        for clause in _CLAUSES.split(question):
            add(_point(clause))
    if len(points) < MIN_POINTS:
        taken = {m.casefold() for kp in points for m in kp.match}
        for word in salient(question, limit=MAX_POINTS):
            if len(points) >= MIN_POINTS:
                break
            if word.casefold() not in taken:
                add(KeyPoint(f"Раскрыть: {word}", (word,)))
    for generic in _GENERIC:
        if len(points) >= MIN_POINTS:
            break
        add(generic)
    return points


def fit_key_points(points: list[KeyPoint], question: str, answer: str | None) -> tuple[list[KeyPoint], str]:
    """Bring explicit key points into the 3..6 the bank allows; say what was changed."""
    if len(points) > MAX_POINTS:
        return points[:MAX_POINTS], f"{len(points)} key points, kept the first {MAX_POINTS}"
    if len(points) >= MIN_POINTS:
        return points, ""
    extra = [kp for kp in derive_key_points(question, answer) if kp.text not in {p.text for p in points}]
    fitted = [*points, *extra][:MIN_POINTS] if points else extra
    return fitted, f"{len(points)} key point(s), added {len(fitted) - len(points)} derived"


def fits_message(text: str, answer: str) -> bool:
    """The validator's length rule: question and answer fit one message with room for the chrome."""
    size = visible_length(f"<b>{escape(text)}</b>\n\n{to_html(answer)}") + MESSAGE_CHROME
    return size <= TELEGRAM_TEXT_LIMIT


class NameIndex:
    """Names (of glossary terms) by their keys, to find the ones a text mentions: a name's words in
    a row, each equal to the text's word or (five letters and more) a beginning of it; compared as
    keys (stems, transliteration), so "чекпоинтов" finds "checkpoint" but "batching" does not find
    "батчнорм"."""

    def __init__(self, names: Iterable[tuple[str, str]]) -> None:
        """``names``: (the term's id, one of its names), in the order the matches are listed."""
        self.entries: list[tuple[str, list[str]]] = []
        for tid, name in names:
            name_keys = keys(name, drop_stopwords=False)
            if name_keys:
                self.entries.append((tid, name_keys))

    def find(self, text: str) -> list[str]:
        """The ids whose names occur in ``text``, each once."""
        text_keys = keys(text, drop_stopwords=False)
        firsts = {k[:5] for k in text_keys}
        found: dict[str, None] = {}
        for tid, name_keys in self.entries:
            if tid in found or name_keys[0][:5] not in firsts:
                continue
            n = len(name_keys)
            for i in range(len(text_keys) - n + 1):
                if all(_key_in(name_keys[j], text_keys[i + j]) for j in range(n)):
                    found[tid] = None
                    break
        return list(found)


def _key_in(name_key: str, text_key: str) -> bool:
    return text_key == name_key or (len(name_key) >= 5 and text_key.startswith(name_key))

"""Telegram's formatting as the Bot API checks it: HTML ``parse_mode`` parsed into plain text and
entities (offsets in UTF-16 units), reply markup's limits, and the errors it answers with."""

from __future__ import annotations

import html
import re
from typing import Any

ALLOWED_TAGS = {
    "b", "strong", "i", "em", "u", "ins", "s", "strike", "del", "span", "tg-spoiler", "a",
    "code", "pre", "blockquote", "tg-emoji",
}  # fmt: skip
_TAG_RE = re.compile(r"<(/?)([a-zA-Z][a-zA-Z0-9-]*)((?:\s+[^<>]*)?)\s*(/?)>")
_ENTITY_RE = re.compile(r"&(#[0-9]{1,7}|#x[0-9a-fA-F]{1,6}|lt|gt|amp|quot);")


class ApiError(Exception):
    def __init__(self, code: int, description: str, parameters: dict[str, Any] | None = None):
        super().__init__(description)
        self.code, self.description, self.parameters = code, description, parameters


def utf16_len(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


_ENTITY_TYPES = {
    "b": "bold", "strong": "bold", "i": "italic", "em": "italic", "u": "underline", "ins": "underline",
    "s": "strikethrough", "strike": "strikethrough", "del": "strikethrough", "span": "spoiler",
    "tg-spoiler": "spoiler", "a": "text_link", "code": "code", "pre": "pre", "blockquote": "blockquote",
}  # fmt: skip
_ATTR_RE = re.compile(r'([a-zA-Z-]+)\s*=\s*"([^"]*)"')


def parse_html(text: str) -> str:
    """Validate Telegram HTML; return the plain text. Raises ApiError like Telegram does."""
    return parse_html_entities(text)[0]


def parse_html_entities(text: str) -> tuple[str, list[dict[str, Any]]]:
    """Validate Telegram HTML; return the plain text and its entities (offsets and lengths in UTF-16
    code units, as Telegram gives them). Raises ApiError like Telegram does."""
    out: list[str] = []
    entities: list[dict[str, Any]] = []
    stack: list[tuple[str, str, int]] = []  # open tags: name, attributes, UTF-16 offset of the start
    size = 0  # UTF-16 length of the text so far
    pos = 0
    while pos < len(text):
        ch = text[pos]
        if ch == "<":
            m = _TAG_RE.match(text, pos)
            if not m:
                raise ApiError(400, f"Bad Request: can't parse entities: unexpected '<' at byte offset {pos}")
            closing, name, attrs, _selfclose = m.groups()
            name = name.lower()
            if name not in ALLOWED_TAGS:
                raise ApiError(
                    400, f'Bad Request: can\'t parse entities: unsupported start tag "{name}" at offset {pos}'
                )
            if closing:
                if not stack or stack[-1][0] != name:
                    raise ApiError(
                        400, f'Bad Request: can\'t parse entities: unmatched end tag "{name}" at offset {pos}'
                    )
                _, opened_attrs, begin = stack.pop()
                entity = _entity(name, opened_attrs, begin, size - begin, inside=[n for n, _, _ in stack])
                if entity is not None:
                    entities.append(entity)
            else:
                if name == "span" and 'class="tg-spoiler"' not in attrs:
                    raise ApiError(400, "Bad Request: can't parse entities: span without tg-spoiler class")
                if name == "a" and "href=" not in attrs:
                    raise ApiError(400, "Bad Request: can't parse entities: a without href")
                if any(name == n for n, _, _ in stack) and name not in ("code",):
                    raise ApiError(400, f"Bad Request: can't parse entities: nested {name}")
                stack.append((name, attrs or "", size))
            pos = m.end()
            continue
        if ch == "&":
            m = _ENTITY_RE.match(text, pos)
            if not m:
                raise ApiError(400, f"Bad Request: can't parse entities: unsupported entity at byte offset {pos}")
            ch = html.unescape(m.group(0))
            pos = m.end()
        elif ch == ">":
            raise ApiError(400, f"Bad Request: can't parse entities: unexpected '>' at offset {pos}")
        else:
            pos += 1
        out.append(ch)
        size += utf16_len(ch)
    if stack:
        raise ApiError(
            400, f"Bad Request: can't parse entities: can't find end tag corresponding to \"{stack[-1][0]}\""
        )
    entities.sort(key=lambda e: (e["offset"], -e["length"]))
    return "".join(out), entities


def _entity(name: str, attrs: str, offset: int, length: int, *, inside: list[str]) -> dict[str, Any] | None:
    """The entity a closed tag makes (None for an empty one, a custom emoji, or the ``code`` of a ``pre``)."""
    kind = _ENTITY_TYPES.get(name)
    if kind is None or length <= 0:
        return None
    values = dict(_ATTR_RE.findall(attrs))
    entity: dict[str, Any] = {"type": kind, "offset": offset, "length": length}
    if kind == "text_link":
        entity["url"] = html.unescape(values.get("href", ""))
    elif kind == "code" and "pre" in inside:
        return None  # <pre><code class="language-x">: one pre entity with the language
    elif kind == "blockquote" and re.search(r"\bexpandable\b", attrs):
        entity["type"] = "expandable_blockquote"
    return entity


def check_markup(markup: Any) -> None:
    if markup is None:
        return
    if not isinstance(markup, dict):
        raise ApiError(400, "Bad Request: can't parse reply keyboard markup JSON object")
    rows = markup.get("inline_keyboard")
    if rows is None:
        return
    count = 0
    for row in rows:
        if len(row) > 8:
            raise ApiError(400, "Bad Request: too many buttons in a row")
        for button in row:
            count += 1
            if not button.get("text"):
                raise ApiError(400, "Bad Request: text buttons are unallowed in the inline keyboard")
            data = button.get("callback_data")
            if data is not None and not 1 <= len(data.encode("utf-8")) <= 64:
                raise ApiError(400, "Bad Request: BUTTON_DATA_INVALID")
    if count > 100:
        raise ApiError(400, "Bad Request: reply markup is too long")

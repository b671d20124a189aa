"""The bank's Markdown subset, rendered to Telegram HTML or to plain text.

Supported: paragraphs, line breaks, ``- `` bullets, ``1. `` numbered lines, ``**bold**``,
``_italic_`` (only at word boundaries, so ``d_k`` stays as it is), ```` `code` ```` and fenced code
blocks. Everything else is shown literally; all text is HTML-escaped.

Also here: the length Telegram counts (text after entity parsing, in UTF-16 code units) and packing
rendered blocks into messages without cutting a tag in two.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Iterator

TELEGRAM_TEXT_LIMIT = 4096

_INLINE = re.compile(
    r"(?P<code>`[^`\n]+`)"
    r"|(?P<bold>\*\*(?=\S)(?P<bold_body>.+?)(?<=\S)\*\*)"
    r"|(?P<ital>(?<![\w\\])_(?=[^\s_])(?P<ital_body>.+?)(?<=[^\s_])_(?![\w]))"
)
_FENCE = re.compile(r"^\s*```\s*([\w+#.-]*)\s*$")
_BULLET = re.compile(r"^(\s*)[-•]\s+(.*)$")
_NUMBERED = re.compile(r"^(\s*)(\d{1,3})[.)]\s+(.*)$")
_TAG = re.compile(r"<[^>]*>")


def escape(text: str) -> str:
    """Escape text for Telegram HTML (only &, <, > and " are entities there)."""
    return html.escape(text, quote=False)


def _inline_html(text: str) -> str:
    out: list[str] = []
    pos = 0
    for m in _INLINE.finditer(text):
        out.append(escape(text[pos : m.start()]))
        if m.group("code"):
            out.append(f"<code>{escape(m.group('code')[1:-1])}</code>")
        elif m.group("bold"):
            out.append(f"<b>{_inline_html(m.group('bold_body'))}</b>")
        else:
            out.append(f"<i>{_inline_html(m.group('ital_body'))}</i>")
        pos = m.end()
    out.append(escape(text[pos:]))
    return "".join(out)


def inline_html(text: str) -> str:
    """One line of bank text (a key point, a follow-up, a correction) as Telegram HTML: `code` as
    code, **bold**, _italic_; the rest escaped. An unpaired backtick (a cut line) stays as it is."""
    return _inline_html(text)


def inline_plain(text: str) -> str:
    """One line of bank text with its Markdown marks removed: for polls, the Mini App's text fields,
    a terminal."""
    return _inline_plain(text)


def _inline_plain(text: str) -> str:
    def repl(m: re.Match[str]) -> str:
        if m.group("code"):
            return m.group("code")[1:-1]
        if m.group("bold"):
            return _inline_plain(m.group("bold_body"))
        return _inline_plain(m.group("ital_body"))

    return _INLINE.sub(repl, text)


def _blocks(markdown: str) -> Iterator[tuple[str, str, str]]:
    """Yield (kind, payload, language): kind is 'para' or 'code'."""
    lines = markdown.replace("\r\n", "\n").strip("\n").split("\n")
    para: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        fence = _FENCE.match(line)
        if fence:
            if para:
                yield "para", "\n".join(para), ""
                para = []
            body: list[str] = []
            i += 1
            while i < len(lines) and not _FENCE.match(lines[i]):
                body.append(lines[i])
                i += 1
            i += 1  # closing fence (or end of text)
            yield "code", "\n".join(body), fence.group(1)
            continue
        if line.strip():
            para.append(line.rstrip())
        elif para:
            yield "para", "\n".join(para), ""
            para = []
        i += 1
    if para:
        yield "para", "\n".join(para), ""


def _para_html(text: str) -> str:
    rendered = []
    for line in text.split("\n"):
        bullet = _BULLET.match(line)
        numbered = _NUMBERED.match(line)
        if bullet:
            indent = "  " * (len(bullet.group(1)) // 2)
            rendered.append(f"{indent}• {_inline_html(bullet.group(2))}")
        elif numbered:
            indent = "  " * (len(numbered.group(1)) // 2)
            rendered.append(f"{indent}{numbered.group(2)}. {_inline_html(numbered.group(3))}")
        else:
            rendered.append(_inline_html(line.strip()))
    return "\n".join(rendered)


def _para_plain(text: str) -> str:
    rendered = []
    for line in text.split("\n"):
        bullet = _BULLET.match(line)
        if bullet:
            rendered.append(f"{bullet.group(1)}• {_inline_plain(bullet.group(2))}")
        else:
            rendered.append(_inline_plain(line.rstrip()))
    return "\n".join(rendered)


def render_blocks(markdown: str) -> list[str]:
    """Render to a list of self-contained Telegram HTML blocks (paragraphs and code blocks)."""
    out = []
    for kind, payload, language in _blocks(markdown):
        if kind == "code":
            cls = f' class="language-{escape(language)}"' if language else ""
            out.append(f"<pre><code{cls}>{escape(payload)}</code></pre>")
        else:
            out.append(_para_html(payload))
    return out


def to_html(markdown: str) -> str:
    """Render the Markdown subset to Telegram HTML."""
    return "\n\n".join(render_blocks(markdown))


def to_plain(markdown: str) -> str:
    """Render the Markdown subset to plain text (terminal mode, exports)."""
    out = []
    for kind, payload, _ in _blocks(markdown):
        out.append(payload if kind == "code" else _para_plain(payload))
    return "\n\n".join(out)


def visible_length(telegram_html: str) -> int:
    """Length Telegram counts for a message: text after parsing entities, in UTF-16 code units."""
    text = html.unescape(_TAG.sub("", telegram_html))
    return len(text.encode("utf-16-le")) // 2


def _split_oversized(block: str, limit: int) -> Iterator[str]:
    """Split one block that alone exceeds the limit, keeping every piece well-formed."""
    pre = block.startswith("<pre>")
    if pre:
        open_tag = block[: block.index(">", len("<pre><code")) + 1]
        inner = block[len(open_tag) : -len("</code></pre>")]
        wrap_open, wrap_close = open_tag, "</code></pre>"
    else:
        inner, wrap_open, wrap_close = block, "", ""
    budget = limit - visible_length(wrap_open + wrap_close)
    piece: list[str] = []
    size = 0
    for line in inner.split("\n"):
        n = visible_length(line) + 1
        if piece and size + n > budget:
            yield wrap_open + "\n".join(piece) + wrap_close
            piece, size = [], 0
        if n > budget:  # a single enormous line: cut its plain text (tags dropped)
            text = html.unescape(_TAG.sub("", line))
            for start in range(0, len(text), budget - 1):
                yield wrap_open + escape(text[start : start + budget - 1]) + wrap_close
            continue
        piece.append(line)
        size += n
    if piece:
        yield wrap_open + "\n".join(piece) + wrap_close


def pack(blocks: Iterable[str], limit: int = TELEGRAM_TEXT_LIMIT, sep: str = "\n\n") -> list[str]:
    """Pack HTML blocks into as few messages as possible, each within ``limit`` visible chars."""
    messages: list[str] = []
    current: list[str] = []
    size = 0
    sep_len = visible_length(sep)
    for block in blocks:
        n = visible_length(block)
        if n > limit:
            if current:
                messages.append(sep.join(current))
                current, size = [], 0
            messages.extend(_split_oversized(block, limit))
            continue
        extra = n + (sep_len if current else 0)
        if current and size + extra > limit:
            messages.append(sep.join(current))
            current, size, extra = [], 0, n
        current.append(block)
        size += extra
    if current:
        messages.append(sep.join(current))
    return messages

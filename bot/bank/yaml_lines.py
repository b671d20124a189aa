"""YAML read with the line of every mapping, key and list item (1-based), for ``file:line`` reports;
a large bank file is parsed one entry at a time."""

from __future__ import annotations

import itertools
import re
from typing import Any

import yaml

try:  # the C loader is several times faster; fall back to pure Python where libyaml is missing
    from yaml import CSafeLoader as _BaseLoader
except ImportError:  # pragma: no cover - depends on how PyYAML was built
    from yaml import SafeLoader as _BaseLoader  # type: ignore[assignment]


class LineMap(dict[Any, Any]):
    """A YAML mapping that remembers its own line and the line of each key (1-based)."""

    line: int
    key_lines: dict[Any, int]


class LineLoader(_BaseLoader):
    duplicate_keys: list[tuple[int, str]]
    offset: int = 0  # lines before this loader's text in its file (a chunk of a large file)


def _construct_mapping(loader: LineLoader, node: yaml.MappingNode) -> LineMap:
    loader.flatten_mapping(node)
    result = LineMap()
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


class LineSeq(list[Any]):
    """A YAML sequence that remembers the line of each item (1-based)."""

    item_lines: list[int]


def _construct_sequence(loader: LineLoader, node: yaml.SequenceNode) -> LineSeq:
    result = LineSeq(loader.construct_object(child, deep=True) for child in node.value)
    result.item_lines = [child.start_mark.line + 1 + loader.offset for child in node.value]
    return result


LineLoader.add_constructor("tag:yaml.org,2002:map", _construct_mapping)
LineLoader.add_constructor("tag:yaml.org,2002:seq", _construct_sequence)


CHUNKED_CHARS = 1_000_000  # a larger file is parsed an entry at a time (PyYAML holds a whole document's nodes)
_TOP_KEY = re.compile(r"([a-z_]+):[ \t]*(?:#.*)?")
_ENTRY_START = "  - "


def parse_yaml(text: str, offset: int, duplicates: list[tuple[int, str]]) -> Any:
    loader = LineLoader(text)
    loader.duplicate_keys = duplicates
    loader.offset = offset
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()


def parse_in_chunks(text: str, duplicates: list[tuple[int, str]]) -> LineMap | None:
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
    data = LineMap()
    data.line, data.key_lines = 1, {}
    for n, (key, at, starts) in enumerate(sections):
        end = sections[n + 1][1] if n + 1 < len(sections) else len(lines)
        items = LineSeq()
        items.item_lines = []
        bounds = [*starts, end]
        for a, b in itertools.pairwise(bounds):
            chunk = "\n".join(["_:", *lines[a:b]])
            try:
                parsed = parse_yaml(chunk, a - 1, duplicates)
            except yaml.YAMLError:
                return None
            if not isinstance(parsed, LineMap) or not isinstance(parsed.get("_"), list) or len(parsed["_"]) != 1:
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

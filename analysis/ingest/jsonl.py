"""Strict line readers shared by every file importer: UTF-8 (a leading BOM is allowed), LF or
CRLF, and errors that name the file, the line and the field.

JSON lines are guarded before any parser sees them: a line nested deeper than ``MAX_DEPTH``
would crash a C parser (pyarrow's reader segfaults near 20,000 levels) or raise RecursionError in
Python's, so a cheap scan finds such lines first. A ``\\ud800`` escape without its pair decodes
to a lone surrogate, which is not a character and cannot be stored: it is refused by name.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from decimal import Decimal
from pathlib import Path

import numpy as np

from analysis.core.errors import InputError

BOM = "\ufeff"
MAX_DEPTH = 100  # score and FLASK lines hold flat values and short lists: 3 levels in practice
SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def read_text(path: Path, name: str | None = None) -> str:
    """The file as text; a non-UTF-8 byte is an error naming its line and byte offset."""
    return decode(path.read_bytes(), name or str(path))


def decode(data: bytes, name: str) -> str:
    """UTF-8 bytes as text without a leading BOM; a bad byte names its line and offset."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise InputError(
            name,
            line,
            None,
            f"byte 0x{data[e.start]:02x} at offset {e.start} is not UTF-8; save the file as UTF-8",
        ) from e
    return text[1:] if text.startswith(BOM) else text


def deep_lines(data: bytes) -> dict[int, str | None]:
    """Line number → the top-level field of each line nested deeper than ``MAX_DEPTH``.

    Vectorised bound first: a line with at most MAX_DEPTH opening brackets cannot be deeper, so
    only the rare line with more is scanned character by character (brackets inside strings
    do not count)."""
    b = np.frombuffer(data, dtype=np.uint8)
    opens = np.flatnonzero((b == 91) | (b == 123))  # '[' and '{'
    if len(opens) <= MAX_DEPTH:
        return {}
    breaks = np.flatnonzero(b == 10)
    per_line = np.bincount(np.searchsorted(breaks, opens))  # index i: line i + 1
    out: dict[int, str | None] = {}
    for i in np.flatnonzero(per_line > MAX_DEPTH):
        start = breaks[i - 1] + 1 if i > 0 else 0
        end = breaks[i] if i < len(breaks) else len(b)
        deep, field = _depth_scan(data[start:end].decode("utf-8", errors="replace"))
        if deep:
            out[int(i) + 1] = field
    return out


def _depth_scan(line: str) -> tuple[bool, str | None]:
    """(deeper than MAX_DEPTH, the top-level key holding the deep value)."""
    depth, in_string, escaped, start, key = 0, False, False, 0, None
    for i, ch in enumerate(line):
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
                if depth == 1:  # keys and values alike; the last one before the deep value
                    key = line[start:i]
        elif ch == '"':
            in_string, start = True, i + 1
        elif ch in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                return True, key
        elif ch in "]}":
            depth -= 1
    return False, None


def deep_problem(field: str | None) -> str:
    where = f"the value of '{field}' is" if field else "it is"
    return (
        f"{where} nested more than {MAX_DEPTH} levels deep; a line holds flat values (text, "
        "numbers, short lists), so this file was not written as expected"
    )


def lone_surrogate(obj: object) -> tuple[str | None, str] | None:
    """(top-level field, the text) of the first key or string holding a lone surrogate."""
    stack: list[tuple[str | None, object]] = [(None, obj)]
    while stack:
        field, value = stack.pop()
        if isinstance(value, str):
            if LONE_SURROGATE.search(value):
                return field, value
        elif isinstance(value, dict):
            for k, v in value.items():
                top = k if field is None else field
                stack.append((top, k))
                stack.append((top, v))
        elif isinstance(value, list):
            stack.extend((field, v) for v in value)
    return None


def printable(text: str) -> str:
    """``text`` with any lone surrogate written as its escape, so a message can be printed."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def surrogate_problem(text: str) -> str:
    code = f"\\u{ord(LONE_SURROGATE.search(text)[0]):04x}"  # type: ignore[index]
    return (
        f"the escape {code} is half of a surrogate pair without its other half, which is not a "
        "character; write the character itself (UTF-8) or its complete pair"
    )


def parse_line(
    line: str, no: int, name: str, *, deep: dict[int, str | None], exact: bool = False
) -> dict:
    """One JSON object, or an InputError naming the file, the line and the field. ``exact``:
    decimals are read as Decimal (an id such as 1e30 keeps its value; scores become floats
    later), integers are exact in Python anyway."""
    if no in deep:
        raise InputError(name, no, deep[no], deep_problem(deep[no]))
    try:
        obj = json.loads(line, parse_float=Decimal) if exact else json.loads(line)
    except json.JSONDecodeError as e:
        what = "a BOM in the middle of the file" if line.startswith(BOM) else e.msg
        raise InputError(
            name,
            no,
            None,
            f"not valid JSON ({what} at column {e.colno}); "
            "each line must be one complete JSON object",
        ) from e
    except RecursionError as e:  # the scan bounds depth; this is the last line of defence
        raise InputError(name, no, None, deep_problem(None)) from e
    if not isinstance(obj, dict):
        raise InputError(name, no, None, f"expected a JSON object, got {type(obj).__name__}")
    if SURROGATE_ESCAPE.search(line) and (found := lone_surrogate(obj)):
        field = found[0] and printable(found[0])
        raise InputError(name, no, field, surrogate_problem(found[1]))
    return obj


def iter_jsonl(
    path: Path,
    name: str | None = None,
    *,
    exact: bool = False,
    on_error: Callable[[InputError], None] | None = None,
) -> Iterator[tuple[int, dict]]:
    """(line number, object) for each non-blank line; an empty file is an error. With
    ``on_error``, a bad line is handed to it and skipped instead of stopping the import."""
    name = name or str(path)
    data = path.read_bytes()
    text = decode(data, name)
    deep = deep_lines(data)
    seen = skipped = False
    for no, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
        try:
            obj = parse_line(line, no, name, deep=deep, exact=exact)
        except InputError as e:
            if on_error is None:
                raise
            on_error(e)
            skipped = True
            continue
        seen = True
        yield no, obj
    if not seen and not skipped:
        raise InputError(name, None, None, "the file is empty: expected one JSON object per line")

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
import sys
from collections.abc import Callable, Iterator
from decimal import Decimal
from pathlib import Path

from analysis.core.errors import InputError

BOM = "\ufeff"
MAX_DEPTH = 100  # score and FLASK lines hold flat values and short lists: 3 levels in practice
SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
LONE_SURROGATE = re.compile("[\ud800-\udfff]")
_NOT_OPEN_OR_BREAK = bytes(c for c in range(256) if c not in b"[{\n")  # for deep_lines
# json.loads(line) is scan_once(line, 0) plus checks of the ends: the same object when the
# value spans the whole line. The decoders keep no state between calls (the C scanner clears
# its memo after each).
JSON_SPACE = " \t\n\r"  # what json.loads skips after the value
_SCAN = json.JSONDecoder().scan_once
_SCAN_EXACT = json.JSONDecoder(parse_float=Decimal).scan_once


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

    Cheap bound first: a line with at most MAX_DEPTH opening brackets cannot be deeper, and one
    C pass (``bytes.translate``) keeps only the brackets and line breaks, so the count per line
    is a length; only the rare line with more is scanned character by character (brackets
    inside strings do not count)."""
    opens = data.translate(None, _NOT_OPEN_OR_BREAK).split(b"\n")
    if max(map(len, opens)) <= MAX_DEPTH:
        return {}
    lines = data.split(b"\n")
    out: dict[int, str | None] = {}
    for i, brackets in enumerate(opens):
        if len(brackets) > MAX_DEPTH:
            deep, field = _depth_scan(lines[i].decode("utf-8", errors="replace"))
            if deep:
                out[i + 1] = field
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
    except ValueError as e:  # Python reads at most sys.get_int_max_str_digits() digits
        raise InputError(
            name,
            no,
            None,
            f"a number has more than {sys.get_int_max_str_digits():,} digits, more than a score "
            "or an id holds; write an id this long as text (in quotes)",
        ) from e
    if not isinstance(obj, dict):
        raise InputError(name, no, None, f"expected a JSON object, got {type(obj).__name__}")
    if SURROGATE_ESCAPE.search(line) and (found := lone_surrogate(obj)):
        field = found[0] and printable(found[0])
        raise InputError(name, no, field, surrogate_problem(found[1]))
    return obj


def _surrogate_lines(text: str) -> set[int]:
    """The numbers of the lines holding a ``\\ud800``-``\\udfff`` escape (a pair, as JSON
    writes an emoji, or a lone half), counted in one pass over the text."""
    out: set[int] = set()
    no, last = 1, 0
    for m in SURROGATE_ESCAPE.finditer(text):
        no += text.count("\n", last, m.start())
        last = m.start()
        out.add(no)
    return out


def iter_jsonl(
    path: Path,
    name: str | None = None,
    *,
    exact: bool = False,
    on_error: Callable[[InputError], None] | None = None,
) -> Iterator[tuple[int, dict]]:
    """(line number, object) for each non-blank line; an empty file is an error. With
    ``on_error``, a bad line is handed to it and skipped instead of stopping the import.

    Each line goes to ``json``'s C scanner directly (what ``json.loads`` calls, without its
    per-call work); any line that does not simply yield one object — an error, whitespace
    before the value, a deep line, a line with a surrogate escape — takes ``parse_line``, the
    one careful path, so every object and every message is what ``json.loads`` gives."""
    name = name or str(path)
    data = path.read_bytes()
    text = decode(data, name)
    deep = deep_lines(data)
    careful = deep.keys() | _surrogate_lines(text)
    scan = _SCAN_EXACT if exact else _SCAN
    seen = skipped = False
    for no, line in enumerate(text.split("\n"), 1):
        try:
            obj, end = scan(line, 0)
        except (StopIteration, ValueError, RecursionError):  # json.loads says which, below
            obj, end = None, -1
        # The common line: one object from its first character to its last. Anything else is
        # looked at again: blank lines skipped, the rest (whitespace around the value, extra
        # data, errors, non-objects, deep or surrogate lines) through parse_line.
        if end != len(line) or obj.__class__ is not dict or no in careful:
            if not line or line.isspace():  # what ``not line.strip()`` says, without a copy
                continue
            if obj.__class__ is dict and no not in careful and not line[end:].strip(JSON_SPACE):
                seen = True  # trailing whitespace, a CRLF line's "\r": json.loads allows it
                yield no, obj
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

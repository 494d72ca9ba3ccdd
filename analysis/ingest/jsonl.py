"""Strict line readers shared by every file importer: UTF-8 (a leading BOM is allowed), LF or
CRLF, and errors that name the file, the line and the field."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from analysis.core.errors import InputError

BOM = "\ufeff"


def read_text(path: Path, name: str | None = None) -> str:
    """The file as text; a non-UTF-8 byte is an error naming its line and byte offset."""
    name = name or str(path)
    data = path.read_bytes()
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


def iter_jsonl(path: Path, name: str | None = None) -> Iterator[tuple[int, dict]]:
    """(line number, object) for each non-blank line; an empty file is an error."""
    name = name or str(path)
    text = read_text(path, name)
    seen = False
    loads = json.loads
    for no, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
        try:
            obj = loads(line)
        except json.JSONDecodeError as e:
            what = "a BOM in the middle of the file" if line.startswith(BOM) else e.msg
            raise InputError(
                name,
                no,
                None,
                f"not valid JSON ({what} at column {e.colno}); "
                "each line must be one complete JSON object",
            ) from e
        if not isinstance(obj, dict):
            raise InputError(name, no, None, f"expected a JSON object, got {type(obj).__name__}")
        seen = True
        yield no, obj
    if not seen:
        raise InputError(name, None, None, "the file is empty: expected one JSON object per line")

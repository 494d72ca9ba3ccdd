"""One small error hierarchy. Every error carries a user-facing title and message.

Driver and SDK errors are wrapped at the boundary (``raise StoreBusyError(...) from e``) so pages
and the CLI show one paragraph instead of a stack trace.
"""

from __future__ import annotations

import re

VALUE_LIMIT = 80  # a value echoed in a message is cut to this many characters
_LONG = 120  # ... when longer than this: prose between two quotes is never this long
_QUOTED = re.compile(rf"'[^'\n]{{{_LONG},}}'|\"[^\"\n]{{{_LONG},}}\"")
_RUN = re.compile(rf"\S{{{_LONG},}}")
MESSAGE_LIMIT = 2000  # a paragraph, whatever the values in it


def shorten(text: str, limit: int = VALUE_LIMIT) -> str:
    """``text`` cut to ``limit`` characters, the cut marked with an ellipsis."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def shorten_values(problem: str) -> str:
    """A message with each long quoted value (or long unbroken run) cut to ``VALUE_LIMIT``: a
    200 KB cell echoed in full would bury the one paragraph a user has to read."""
    problem = _QUOTED.sub(lambda m: m[0][0] + shorten(m[0][1:-1]) + m[0][-1], problem)
    problem = _RUN.sub(lambda m: shorten(m[0]), problem)
    return shorten(problem, MESSAGE_LIMIT)


class FinegrainError(Exception):
    """Base class: ``title`` is a few words, ``message`` one paragraph a user can act on."""

    title = "Finegrain error"

    def __init__(self, message: str, *, title: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        if title is not None:
            self.title = title

    def __str__(self) -> str:
        return self.message


class InputError(FinegrainError):
    """Bad input: names the file, the line (1-based) and the field, and what was expected."""

    title = "Bad input"

    def __init__(self, file: str, line: int | None, field: str | None, problem: str) -> None:
        field = shorten(field) if field else field  # a column name comes from the file
        problem = shorten_values(problem)
        self.file, self.line, self.field, self.problem = file, line, field, problem
        where = file if line is None else f"{file}, line {line}"
        if field:
            where += f", field '{field}'"
        super().__init__(f"{where}: {problem}")


class StoreBusyError(FinegrainError):
    """Another process holds the DuckDB file (one writer XOR many readers)."""

    title = "Store busy"


class StoreError(FinegrainError):
    """The store cannot be opened or is not a Finegrain database."""

    title = "Store error"


class FetchError(FinegrainError):
    """A download failed (HTTP error, truncated body, unreachable host)."""

    title = "Download failed"


class NotFoundError(FinegrainError):
    """A named thing (dataset, judge, skill, backend) is unknown; the message lists the known."""

    title = "Not found"


class MissingExtraError(FinegrainError):
    """An optional part of Finegrain is used without its packages installed (an "extra", such as
    torch and transformers for the local judge); the message names the install command."""

    title = "Optional packages missing"

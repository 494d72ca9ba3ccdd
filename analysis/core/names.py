"""The one rule for names people choose: annotators, judges and custom criteria.

A name is compared in its Unicode NFC form, stripped of surrounding spaces, so "é" typed as one
code point or as "e" + a combining accent is one name. A name that holds a character nobody sees
(zero-width space or joiner, byte-order mark, bidi controls, other format or control
characters, unusual spaces) is refused rather than cleaned: two names that look the same must be
the same name, and silently removing characters would merge names behind the user's back.

Scorer names (annotators, judges) starting with ``kind:``, in any case or width, are reserved:
the pickers, the CLI's ``--a/--b/--raters`` and the URL use ``kind:human`` and ``kind:llm`` for
"every scorer of that kind" (analysis/views/scorers.py), so a scorer with such a name would
relabel the group. A dataset's criteria are told apart ignoring case and width (``name_key``,
``case_clash``): "Coherence" next to "coherence" would split one criterion's scores in two.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable
from typing import Any

from analysis.core.errors import InputError

# What each kind of name is called in messages, and its default field.
KINDS = {"annotator": "annotator name", "judge": "judge name", "criterion": "criterion name"}

RESERVED_PREFIX = "kind:"
SCORERS = frozenset({"annotator", "judge"})  # the kinds of name a scorer picker lists

# The Annotate page's text box holds 60 characters; a derived judge name holds a model's name,
# which may be a local folder's path.
MAX_LENGTH = {"annotator": 60, "judge": 500, "criterion": 300}

# Characters that render as nothing (or as a space) but are not control/format characters.
_INVISIBLE = frozenset(
    "\u034f"  # combining grapheme joiner
    "\u115f\u1160\u3164\uffa0"  # Hangul fillers
    "\u17b4\u17b5"  # Khmer inherent vowels
    "\u180b\u180c\u180d\u180f"  # Mongolian variation selectors
)
# Cc control, Cf format (zero-width, BOM, bidi), Cs lone surrogates, Co private use,
# Zl/Zp line and paragraph separators; Zs other than the ordinary space is checked apart.
_REFUSED_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Zl", "Zp"})


def normalise_name(value: str) -> str:
    """The form names are stored and compared in: NFC, without surrounding spaces."""
    return _nfc(value).strip()


def name_key(value: str) -> str:
    """What two names must differ in to be told apart: NFKC and case folded (for criteria,
    where "Coherence" and "coherence" are one name)."""
    return unicodedata.normalize("NFKC", normalise_name(value)).casefold()


def is_reserved(value: str) -> bool:
    """Whether a name is a group's (``kind:…``), in any case, width or surrounding spaces."""
    return name_key(value).startswith(RESERVED_PREFIX)


def name_problem(kind_of_name: str, value: object) -> tuple[str, str | None]:
    """``(normalised name, None)``, or ``(value as given, the problem in words)``.

    The vectorised importers call this once per distinct value; ``check_name`` raises."""
    what = KINDS[kind_of_name]
    if not isinstance(value, str):
        return str(value), f"a {what} must be text, got {type(value).__name__}"
    clean = normalise_name(value)
    if not clean:
        return value, f"a {what} cannot be empty"
    if bad := _invisible(clean):
        return value, (
            f"the {what} {_show(clean)} holds an invisible or control character ({bad}); "
            "names that look alike must be equal, so retype it without that character"
        )
    if len(clean) > MAX_LENGTH[kind_of_name]:
        return value, f"a {what} of at most {MAX_LENGTH[kind_of_name]} characters expected"
    if kind_of_name in SCORERS and is_reserved(clean):
        return value, (
            f"the {what} {_show(clean)} is reserved: names starting with '{RESERVED_PREFIX}' "
            "stand for a group of scorers (kind:human, kind:llm); choose another name"
        )
    return clean, None


def check_name(
    kind_of_name: str,
    value: object,
    *,
    source: str = "input",
    line: int | None = None,
    field: str | None = None,
) -> str:
    """The normalised name; raises InputError naming ``source``, ``line`` and ``field``
    (default: the kind of name) when the name cannot be used."""
    clean, problem = name_problem(kind_of_name, value)
    if problem:
        raise InputError(source, line, field or kind_of_name, problem)
    return clean


def optional_name(kind_of_name: str, value: object, **where: Any) -> str | None:
    """``check_name`` for a name that may be left out: None or blank → None."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    return check_name(kind_of_name, value, **where)


def case_clash(name: str, existing: Iterable[str]) -> str | None:
    """The existing name that ``name`` equals ignoring case and width (but is not), or None."""
    key = name_key(name)
    return next((e for e in existing if e != name and name_key(e) == key), None)


def _nfc(value: str) -> str:
    try:
        return unicodedata.normalize("NFC", value)
    except UnicodeError:  # lone surrogates: left for _invisible to refuse
        return value


def _invisible(text: str) -> str | None:
    """The first refused character, as 'U+200B ZERO WIDTH SPACE', or None."""
    for ch in text:
        cat = unicodedata.category(ch)
        if cat in _REFUSED_CATEGORIES or ch in _INVISIBLE or (cat == "Zs" and ch != " "):
            name = unicodedata.name(ch, "") if cat != "Cs" else "a lone surrogate"
            return f"U+{ord(ch):04X} {name or cat}".strip()
    return None


def _show(text: str, limit: int = 60) -> str:
    """A name for a message: quoted, shortened, with invisible characters escaped."""
    short = text if len(text) <= limit else text[: limit - 3] + "..."
    return ascii(short) if _invisible(short) else repr(short)

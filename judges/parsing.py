"""Read per-skill scores out of an LLM judge's output.

Pure: no I/O, no network, no state; the same text always gives the same result, and nothing
raises on junk. An output that cannot be read is a recorded failure with a reason a person
understands, never a default score (DESIGN §4).

Order of attempts: the whole text as JSON; the LAST balanced ``{...}`` block as JSON, then as a
Python dict (FLASK's GPT-4 reviews end with one); score lines such as ``Readability: 4/5``.
The last block wins because a judge may quote an earlier object from the response it judges.
"""

from __future__ import annotations

import ast
import json
import math
import re
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from analysis.core.taxonomy import normalise_skill

DEFAULT_SCALE = (1.0, 5.0)
METHODS = ("json", "json-field", "last-block", "python-dict", "lines")
FEEDBACK_FIELDS = ("feedback", "rationale", "reasoning", "explanation")
SCORES_FIELDS = ("scores", "score", "ratings")
VALUE_FIELDS = ("score", "rating", "value")
NA_SPELLINGS = frozenset({"n/a", "na", "n.a.", "none", "null", "not applicable", "-", "–", "—"})
_WORDS = "zero one two three four five six seven eight nine ten".split()
_NUM = r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)"
_NUMBER = re.compile(_NUM)
_FRACTION = re.compile(rf"({_NUM})\s*(?:/|out of)\s*({_NUM})")
_NA_TOKEN = r"n/?a|n\.a\.|none|null|not\s+applicable|[-–—]"
_TOKEN = rf"(?:{_NUM}(?:\s*(?:/|out\s+of)\s*{_NUM})?|{_NA_TOKEN}|{'|'.join(_WORDS)})"
# A score line's value: the token alone, or followed by a remark in brackets or after a dash.
_LINE_VALUE = re.compile(rf"(?P<v>{_TOKEN})\s*[.,;]?(?:\s*[(\[].*|\s+[-–—]\s.*)?", re.I)
_LINE = re.compile(
    r"(?:[-+•]\s+|\d+[.)]\s+)?(?P<key>[^\W\d][\w '&()-]*?)\s*(?:[:=|]|\s[-–—]\s)\s*(?P<value>.+)"
)
_MAX_LINE = 200  # longer lines are prose; also keeps the regexes linear on huge inputs
_MAX_GAP = 5  # prose lines allowed between the score lines at the end of an output
_PYTHON_WORDS = {"null": "None", "true": "True", "false": "False", "n/a": "'N/A'", "na": "'N/A'"}
_BARE_WORD = re.compile(r"([:,\[{]\s*)(null|true|false|N/A|n/a|NA)(?=\s*[,}\]])")
_BRACKETS = re.compile(r"[{}\"']")
_STRING_END = {'"': re.compile(r'(?:[^"\\]|\\.)*"', re.S), "'": re.compile(r"(?:[^'\\\n]|\\.)*'")}
_OPENER = re.compile(r"(?:```[\w-]*|<[\w-]+>|\b[A-Za-z_]\w*\s*=)\Z")
_FENCE = re.compile(r"^```[\w-]*\s*\n(?P<body>.*)\n\s*```$", re.S)


@dataclass(frozen=True)
class ParseResult:
    status: str  # "ok" or "failed"
    scores: dict[str, float | None] = field(default_factory=dict)  # skill -> score; None = N/A
    rationale: str | None = None
    error: str | None = None  # one sentence for a user; None when ok
    method: str = ""  # one of METHODS, "" when failed

    @property
    def ok(self) -> bool:
        return self.status == "ok"


class _BadScores(Exception):
    """The scores object was found but is not usable; the message is the user-facing error."""


def parse_judgment(
    text: str | None, skills: Sequence[str], scales: Mapping[str, tuple[float, float]] | None = None
) -> ParseResult:
    """Scores for ``skills`` from a judge's output, or a failure saying why there are none."""
    if not isinstance(text, str) or not text.strip():
        return ParseResult("failed", error="empty output")
    request = _Request.of(skills, scales)
    if not request.skills:
        return ParseResult("failed", error="no skills were requested")
    try:
        return _parse(text, request)
    except _BadScores as e:
        return ParseResult("failed", error=str(e))


@dataclass(frozen=True)
class _Request:
    skills: tuple[str, ...]
    scales: dict[str, tuple[float, ...]]  # (min, max)
    lookup: dict[str, str]  # canonical key spelling -> requested id

    @classmethod
    def of(cls, skills: Sequence[str], scales: Mapping[str, tuple[float, float]] | None):
        lookup: dict[str, str] = {}
        ids: list[str] = []
        for s in skills:
            if not isinstance(s, str) or _identity(s) in lookup:
                continue  # two spellings of one skill are one request
            ids.append(s)
            lookup.setdefault(_canon(s), s)
            lookup.setdefault(_identity(s), s)
        given = scales or {}
        bounds = {s: tuple(map(float, given.get(s, DEFAULT_SCALE))) for s in ids}
        return cls(tuple(ids), bounds, lookup)

    def match(self, key: object) -> str | None:
        """The requested id a key names (FLASK spellings, or case/space-insensitive), or None."""
        if not isinstance(key, str):
            return None
        canon = _canon(key)
        return self.lookup.get(canon) or self.lookup.get(normalise_skill(canon) or "")


def _identity(skill: str) -> str:
    return normalise_skill(skill) or _canon(skill)


def _canon(key: str) -> str:
    """Lower case, one space for any run of space/_/-, no "(1-5)" or "score" decorations."""
    key = re.sub(r"\(.*?\)", " ", key.strip(" \t*`'\"#:").lower())
    key = re.sub(r"[\s_\-]+", " ", key).strip()
    return key.removeprefix("score for ").removesuffix(" score")


def _parse(text: str, request: _Request) -> ParseResult:
    whole = _whole_json(text)
    if isinstance(whole, dict):
        scores, feedback, wrapped = _unwrap(whole)
        method = "json-field" if wrapped else "json"
        return _result(scores, request, method, feedback)
    block, truncated = _last_block(text)
    if truncated:
        raise _BadScores("the output is truncated: it ends inside an unfinished {...} object")
    why_not = "no scores found"
    if block is not None:
        obj, method = _read_block(text[block[0] : block[1]])
        if obj is not None:
            scores, feedback, _ = _unwrap(obj)
            if any(request.match(k) for k in scores):
                return _result(scores, request, method, feedback or _before(text, block[0]))
            why_not = "no scores found (the last {...} object has none of the requested skills)"
        else:
            why_not = "no scores found (the last {...} block is neither JSON nor a Python dict)"
    return _from_lines(text, request, why_not)


def _whole_json(text: str) -> object:
    body = text.strip()
    body = fenced["body"] if (fenced := _FENCE.match(body)) else body
    return _loads(body) if body.startswith("{") else None


def _loads(text: str) -> object:
    try:
        return json.loads(text, strict=False, object_pairs_hook=_Pairs)  # raw newlines allowed
    except (ValueError, RecursionError):
        return None


class _Pairs(dict):
    """A JSON object that remembers repeated keys, which json.loads would silently drop."""

    def __init__(self, pairs: list[tuple[str, object]]):
        super().__init__(pairs)
        self.pairs = pairs


def _read_block(block: str) -> tuple[dict | None, str]:
    obj = _loads(block)
    if isinstance(obj, dict):
        return obj, "last-block"
    python = _BARE_WORD.sub(lambda m: m[1] + _PYTHON_WORDS[m[2].lower()], block)
    try:
        with warnings.catch_warnings():  # "invalid decimal literal" and the like, on junk
            warnings.simplefilter("ignore", SyntaxWarning)
            obj = ast.literal_eval(python)
    except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
        return None, ""
    return (obj, "python-dict") if isinstance(obj, dict) else (None, "")


def _last_block(text: str) -> tuple[tuple[int, int] | None, bool]:
    """(start, end) of the last top-level {...} block, and whether the text ends inside one.

    Braces inside quoted strings do not count. A quote starts a string only where a dict allows
    one (after ``{ [ , :``), so the apostrophe in "{user's name}" is prose; so is a single
    quote whose string would run past the line end (Python strings cannot), as in a quoted
    typo like "{mode: 'strict}".
    """
    last, depth, start, pos = None, 0, 0, 0
    while (m := _BRACKETS.search(text, pos)) is not None:
        i, ch = m.start(), m[0]
        pos = i + 1
        if ch == "{":
            start = i if depth == 0 else start
            depth += 1
        elif ch == "}":
            if depth:  # a stray "}" in prose closes nothing
                depth -= 1
                last = (start, i + 1) if depth == 0 else last
        elif depth and _opens_string(text, i):
            closed = _STRING_END[ch].match(text, pos)
            if closed is None and ch == '"':
                return last, True  # the text ends inside a JSON string
            pos = closed.end() if closed else pos
    return last, depth > 0


def _opens_string(text: str, i: int) -> bool:
    j = i - 1
    while j >= 0 and text[j] in " \t\r\n":
        j -= 1
    return j >= 0 and text[j] in "{[,:"


def _before(text: str, start: int) -> str | None:
    """The feedback before the scores, without the fence, tag or "scores =" that opened them."""
    head = text[:start].rstrip()
    for _ in range(3):  # e.g. "```python\nscores =": at most a fence, a tag and a name
        opener = _OPENER.search(head, max(len(head) - 200, 0))
        head = head[: opener.start()].rstrip() if opener else head
    return head or None


def _unwrap(obj: dict) -> tuple[dict, str | None, bool]:
    """(the skill -> value mapping, the feedback text, whether scores sat under a field)."""
    lower = {k.lower(): v for k, v in obj.items() if isinstance(k, str)}
    texts = (lower[f].strip() for f in FEEDBACK_FIELDS if isinstance(lower.get(f), str))
    feedback = next((t for t in texts if t), None)
    for name in SCORES_FIELDS:
        if isinstance(lower.get(name), dict):
            return lower[name], feedback, True
    return obj, feedback, False


def _result(values: dict, request: _Request, method: str, rationale: str | None) -> ParseResult:
    found: dict[str, float | None] = {}
    for key, value in values.pairs if isinstance(values, _Pairs) else values.items():
        skill = request.match(key)
        if skill is None:
            continue  # keys nobody asked for (a "feedback" field, an extra skill) are ignored
        score = _score(value, skill, request.scales[skill])
        if skill in found and found[skill] != score:
            raise _BadScores(
                f"two different scores for '{skill}' ({_fmt(found[skill])} and {_fmt(score)})"
            )
        found[skill] = score
    missing = [s for s in request.skills if s not in found]
    if missing:
        raise _BadScores("no score for " + ", ".join(f"'{s}'" for s in missing))
    return ParseResult("ok", {s: found[s] for s in request.skills}, rationale, None, method)


def _score(value: object, skill: str, scale: tuple[float, float]) -> float | None:
    if isinstance(value, dict):
        lower = {str(k).lower(): v for k, v in value.items()}
        inner = next((f for f in VALUE_FIELDS if f in lower), None)
        if inner is None:
            raise _BadScores(f"the entry for '{skill}' has no 'score' field: {_show(value)}")
        value = lower[inner]
    if isinstance(value, bool):
        raise _BadScores(f"score {_show(value)} for '{skill}' is a yes/no value, not a score")
    if value is None:
        return None
    if isinstance(value, str):
        return _from_text(value, skill, scale)
    if isinstance(value, int | float):
        return _in_scale(_to_float(value), value, skill, scale)
    raise _BadScores(f"score {_show(value)} for '{skill}' is not a number")


def _from_text(raw: str, skill: str, scale: tuple[float, float]) -> float | None:
    text = " ".join(raw.lower().split())
    if text in NA_SPELLINGS:
        return None
    if text in _WORDS:
        return _in_scale(float(_WORDS.index(text)), raw, skill, scale)
    fraction = _FRACTION.fullmatch(text)
    if fraction:
        top, bottom = _to_float(fraction[1]), _to_float(fraction[2])
        if bottom != scale[1]:
            raise _BadScores(
                f"score {_show(raw)} for '{skill}' is out of {_fmt(bottom)}, "
                f"but the scale is {_fmt(scale[0])}–{_fmt(scale[1])}"
            )
        return _in_scale(top, raw, skill, scale)
    if _NUMBER.fullmatch(text):
        return _in_scale(_to_float(text), raw, skill, scale)
    raise _BadScores(f"score {_show(raw)} for '{skill}' is not a number or N/A")


def _to_float(value: object) -> float:
    try:
        return float(value)  # type: ignore[arg-type]
    except OverflowError:  # an int too large for a float
        return math.inf


def _in_scale(number: float, raw: object, skill: str, scale: tuple[float, float]) -> float:
    lo, hi = scale
    if not math.isfinite(number):
        raise _BadScores(f"score {_show(raw)} for '{skill}' is not a finite number")
    if not lo <= number <= hi:
        raise _BadScores(
            f"score {_fmt(number)} for '{skill}' is outside the scale {_fmt(lo)}–{_fmt(hi)}"
        )
    return number


def _fmt(number: float | None) -> str:
    return "N/A" if number is None else f"{number:g}"


def _show(value: object) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    text = f"'{value}'" if isinstance(value, str) else repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _from_lines(text: str, request: _Request, why_not: str) -> ParseResult:
    """Last resort: "Skill: score" lines at the end of the text, read from the bottom up.

    The last line for a skill wins, and the scan stops after more than _MAX_GAP prose lines in
    a row, so score lines quoted from the judged response higher up are not taken as scores.
    """
    found: dict[str, tuple[str, int]] = {}
    gap, offset = 0, len(text)
    for line in reversed(text.splitlines(keepends=True)):
        offset -= len(line)
        hit = _score_line(line, request)
        if hit and hit[0]:
            found.setdefault(hit[0], (hit[1], offset))
        gap = 0 if hit or not line.strip() else gap + 1
        if gap > _MAX_GAP or len(found) == len(request.skills):
            break
    missing = [s for s in request.skills if s not in found]
    if missing:
        if found:
            have = ", ".join(f"'{s}'" for s in request.skills if s in found)
            lack = ", ".join(f"'{s}'" for s in missing)
            why_not = f"no scores found (score lines at the end for {have} but none for {lack})"
        raise _BadScores(why_not)
    scores = {s: _score(found[s][0], s, request.scales[s]) for s in request.skills}
    first = min(pos for _, pos in found.values())
    return ParseResult("ok", scores, _before(text, first), None, "lines")


def _score_line(line: str, request: _Request) -> tuple[str | None, str] | None:
    """(the requested skill or None, the score text) for a line shaped like "Key: 4/5"."""
    if len(line) > _MAX_LINE:
        return None
    clean = line.replace("*", "").replace("`", "").strip(" \t\r\n#>|")
    m = _LINE.fullmatch(clean)
    value = _LINE_VALUE.fullmatch(m["value"].strip(" |")) if m else None
    return (request.match(m["key"]), value["v"]) if m and value else None

"""Generated inputs for tests/ingest/test_importer_properties.py, each with what is expected of it.

A cell's meaning is written down here, by hand, in tables (a spelling and the score it means, or
INVALID), never computed by the importers' code: a file whose cells are all plausible must import
and store exactly those scores; a file with an invalid cell must fail; a hostile cell or byte
(truncation, NUL, wrong encoding, deep nesting, a FIFO ...) may go either way, but never crash.
"""

from __future__ import annotations

import csv
import io
import json
import os
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from hypothesis import strategies as st

INVALID = object()  # the cell must make the import fail
UNKNOWN = object()  # hostile: either outcome, never a crash
JUDGE = "gpt-4 (FLASK review)"

# CSV text and JSON strings: spelling → score (None = N/A) or INVALID.
TEXT_SCORES = {
    "1": 1.0, "5": 5.0, "3.5": 3.5, " 4 ": 4.0, "4.0": 4.0, "+2": 2.0, "2e0": 2.0, "2.": 2.0,
    "4\n": 4.0, "N/A": None, "NA": None, "": None, "null": None, "none": None, "n/a": None,
    "1_0": INVALID, "0_3": INVALID, "1e309": INVALID, "inf": INVALID, "-inf": INVALID,
    "Infinity": INVALID, "-0": INVALID, "0": INVALID, "6": INVALID, "\u0663": INVALID,
    "3 4": INVALID, "four": INVALID, "0x3": INVALID, "1,5": INVALID, "5.0001": INVALID,
    "\x003": INVALID, '"3"': INVALID,
}  # fmt: skip
# JSON values written raw: text → score or INVALID (NaN is not JSON: either outcome).
JSON_SCORES = {
    "1": 1.0, "5": 5.0, "2.5": 2.5, "5.0": 5.0, "null": None, "0": INVALID, "6": INVALID,
    "-0": INVALID, "1e309": INVALID, "1" + "0" * 30: INVALID, "true": INVALID, "[3]": INVALID,
    '{"v": 3}': INVALID, "NaN": UNKNOWN,
}  # fmt: skip
PLAUSIBLE_IDS = ["1", "2", "3", "4", "7", "q-17", "ÄÖ-1", "00012"]
MODELS = ["alpaca", "vicuna", "gpt-4o", "Llama 3 (8B)", "模型 α", "a,b", 'say "x"']
JUDGES = ["judge-a", "Human 1"]
# JSON-only hostile ids, written raw: a lone surrogate escape, more digits than Python reads,
# an exponent that would expand to a billion digits.
HOSTILE_JSON = {
    "<surrogate>": '"a\\ud800b"',
    "<5000 digits>": "1" + "0" * 5000,
    "<1e999999999>": "1e999999999",
    "<1e30>": "1e30",
}
HOSTILE_NAMES = ["", " ", "x" * 200_000, "a\x00b", "\ufeffa", "a\nb", "a\u200bb", "\U0001f600"]


@dataclass
class Expected:
    label: str
    outcome: str  # "clean", "error" or "any"
    scores: dict[tuple, float | None] = field(default_factory=dict)


@dataclass
class Row:
    key: tuple[str, str, str, str]  # instance_id, model, judge, skill as written
    canonical: tuple[str, str, str, str]  # ... as stored
    score: object  # the cell as written (text, raw JSON text, or a Python value for Parquet)
    means: object  # float, None, INVALID or UNKNOWN


def _unique_rows(skills: list[tuple[str, str]], scores: st.SearchStrategy) -> st.SearchStrategy:
    spelled = [(sid, sid) for sid, _ in skills] + [(lab, sid) for sid, lab in skills]
    spelled += [(lab.lower(), sid) for sid, lab in skills]

    @st.composite
    def row(draw) -> Row:
        iid = draw(st.sampled_from(PLAUSIBLE_IDS))
        model, judge = draw(st.sampled_from(MODELS)), draw(st.sampled_from(JUDGES))
        name, sid = draw(st.sampled_from(spelled))
        written, means = draw(scores)
        return Row((iid, model, judge, name), (iid, model, judge, sid), written, means)

    return st.lists(row(), min_size=1, max_size=12, unique_by=lambda r: r.canonical)


PARQUET_TYPES = {  # type → (Arrow type, [(value, meaning)])
    "string": (pa.string(), list(TEXT_SCORES.items())),
    "int64": (pa.int64(), [(v, float(v)) for v in range(1, 6)] + [(0, INVALID), (-1, INVALID),
                                                                     (None, None)]),
    "float64": (pa.float64(), [(2.5, 2.5), (5.0, 5.0), (float("nan"), None), (-0.0, INVALID),
                               (float("inf"), INVALID), (5.5, INVALID)]),
    "decimal": (pa.decimal128(5, 2), [(Decimal("3.50"), 3.5), (Decimal("1"), 1.0),
                                      (Decimal("7"), INVALID), (None, None)]),
    "dictionary": (pa.dictionary(pa.int32(), pa.string()), [("4", 4.0), ("N/A", None),
                                                            ("1_0", INVALID)]),
    "null": (pa.null(), [(None, None)]),
    "binary": (pa.binary(), [(b"4", INVALID)]),
    "list": (pa.list_(pa.int64()), [([4], INVALID)]),
    "struct": (pa.struct([("v", pa.int64())]), [({"v": 4}, INVALID)]),
    "timestamp": (pa.timestamp("s"), [(1_700_000_000, INVALID)]),
    "bool": (pa.bool_(), [(True, INVALID)]),
}  # fmt: skip


@st.composite
def score_rows(draw, skills: list[tuple[str, str]], fmt: str) -> tuple[str | None, list[Row]]:
    """(Parquet score type or None, rows with unique keys); some names may be hostile."""
    kind = draw(st.sampled_from(sorted(PARQUET_TYPES))) if fmt == "parquet" else None
    if kind:
        table = PARQUET_TYPES[kind][1]
    elif fmt == "csv":
        table = list(TEXT_SCORES.items())
    else:  # text spellings as JSON strings, and raw JSON values
        table = [(json.dumps(k), v) for k, v in TEXT_SCORES.items()] + list(JSON_SCORES.items())
    rows = draw(_unique_rows(skills, st.sampled_from(table)))
    for r in rows:  # a hostile instance id or model name in a few rows: any outcome
        if draw(st.integers(0, 9)) == 0:
            col = draw(st.integers(0, 1))
            key = list(r.key)
            key[col] = draw(
                st.sampled_from(HOSTILE_NAMES + (list(HOSTILE_JSON) if fmt == "jsonl" else []))
            )
            r.key, r.means = tuple(key), UNKNOWN
    return kind, rows


COLUMNS = ["instance_id", "model", "judge", "skill", "score"]
MUTATIONS = {
    "csv": ["none", "bom", "crlf", "extra", "missing", "duplicate", "truncate", "latin1", "nul",
            "bom_middle", "empty", "header_only"],
    "jsonl": ["none", "bom", "crlf", "extra", "missing", "duplicate", "truncate", "latin1", "nul",
              "bom_middle", "empty", "deep"],
    "parquet": ["none", "extra", "missing", "duplicate", "truncate", "empty", "bad_utf8"],
}  # fmt: skip
BENIGN = {"none", "bom", "crlf", "extra"}  # the file means the same
FAILS = {"missing", "empty", "header_only"}  # the file must be refused
EXTRA_TYPES = [
    pa.list_(pa.string()),
    pa.struct([("a", pa.int8())]),
    pa.binary(),
    pa.null(),
    pa.timestamp("ms"),
    pa.decimal128(38, 10),
    pa.dictionary(pa.int8(), pa.string()),
]


def _csv_bytes(header: list[str], lines: list[list], extra: str | None) -> bytes:
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(header + (["notes"] if extra is not None else []))
    for cells in lines:
        w.writerow([*cells, *([extra] if extra is not None else [])])
    return out.getvalue().encode("utf-8", "surrogatepass")


def _jsonl_bytes(header: list[str], lines: list[list], extra: str | None, raw_score: bool) -> bytes:
    text = ""
    for cells in lines:
        parts = []
        for col, cell in zip(header, cells, strict=True):
            if col == "score" and raw_score:
                value = cell
            elif cell in HOSTILE_JSON:
                value = HOSTILE_JSON[cell]
            else:
                value = json.dumps(cell)
            parts.append(f"{json.dumps(col)}: {value}")
        if extra is not None:
            parts.append(f'"notes": {json.dumps(extra)}')
        text += "{" + ", ".join(parts) + "}\n"
    return text.encode()


def _parquet(path: Path, header: list[str], rows: list[Row], kind: str, mutation: str, extra):
    """The judge column dictionary-encoded (as pandas writes a category); with ``bad_utf8`` the
    model column holds bytes that are not UTF-8 under a string type."""
    cols = []
    for col in header:
        names = [r.key[COLUMNS.index(col)] for r in rows] if col != "score" else []
        if col == "score":
            cols.append(pa.array([r.score for r in rows], type=PARQUET_TYPES[kind][0]))
        elif col == "model" and mutation == "bad_utf8":
            raw = [n.encode("utf-8", "surrogatepass") + b"\xff" for n in names]
            cols.append(pa.array(raw, type=pa.binary()).view(pa.string()))
        elif col == "judge":
            cols.append(pa.array(names, type=pa.string()).dictionary_encode())
        else:
            cols.append(pa.array(names, type=pa.string()))
    if extra is not None:
        cols.append(pa.nulls(len(rows), type=extra))
        header = [*header, "notes"]
    with open(path, "wb") as f:  # pyarrow cannot take a path that is not UTF-8; open() can
        pq.write_table(pa.Table.from_arrays(cols, names=header), f)


@st.composite
def score_file(draw, drawn: tuple, fmt: str, path: Path) -> tuple[Path, Expected]:
    kind, rows = drawn
    mutation = draw(st.sampled_from(MUTATIONS[fmt]))
    header = list(COLUMNS)
    if mutation == "missing":
        header.remove(draw(st.sampled_from(COLUMNS)))
    if mutation == "duplicate":
        header.append(draw(st.sampled_from(COLUMNS)))
    lines = [[r.score if c == "score" else r.key[COLUMNS.index(c)] for c in header] for r in rows]
    extra = draw(st.sampled_from(["", "é" * 150_000, 'a\nb, "c"', "\U0001f600"]))
    if fmt == "parquet":
        odd = draw(st.sampled_from(EXTRA_TYPES)) if mutation == "extra" else None
        _parquet(path, header, rows, kind, mutation, odd)
        data = path.read_bytes()
    elif fmt == "csv":
        data = _csv_bytes(header, lines, extra if mutation == "extra" else None)
    else:
        data = _jsonl_bytes(header, lines, extra if mutation == "extra" else None, True)
    data = _mutate_bytes(draw, data, mutation, fmt)
    path.write_bytes(data)
    label = f"{fmt} file ({mutation}): {data[:300]!r}"
    means = [r.means for r in rows]
    if mutation in FAILS or (mutation in BENIGN and any(m is INVALID for m in means)):
        return path, Expected(label, "error" if UNKNOWN not in means else "any")
    want = {r.canonical: r.means for r in rows if r.means is not UNKNOWN and r.means is not INVALID}
    clean = mutation in BENIGN and UNKNOWN not in means
    return path, Expected(label, "clean" if clean else "any", want if mutation in BENIGN else {})


def _mutate_bytes(draw, data: bytes, mutation: str, fmt: str) -> bytes:
    at = draw(st.integers(0, max(len(data) - 1, 0)))
    if mutation == "bom":
        return b"\xef\xbb\xbf" + data
    if mutation == "crlf":
        return data.replace(b"\n", b"\r\n")
    if mutation == "truncate":
        return data[:at]
    if mutation == "latin1":
        return data.decode("utf-8", "surrogatepass").encode("latin-1", "replace")
    if mutation == "nul":
        return data[:at] + b"\x00" + data[at:]
    if mutation == "bom_middle":
        first = data.find(b"\n") + 1
        return data[:first] + b"\xef\xbb\xbf" + data[first:]
    if mutation == "empty":
        return b""
    if mutation == "header_only":
        return data[: data.find(b"\n") + 1]
    if mutation == "deep":
        depth = draw(st.sampled_from([101, 20_000, 100_000]))
        return data + b'{"notes": ' + b"[" * depth + b"]" * depth + b"}\n"
    return data


# FLASK folders. A review's score dict: raw JSON value → score or INVALID (a failed judgment
# is stored, the import goes on).
REVIEW_VALUES = {
    "1": 1.0, "5": 5.0, "2.5": 2.5, '"3"': 3.0, '" 4 "': 4.0, '"N/A"': None, '"n/a"': None,
    '""': None, "0": INVALID, "6": INVALID, "-0": INVALID, '"0_3"': INVALID, '"1_0"': INVALID,
    "1e309": INVALID, "NaN": INVALID, "true": INVALID, "[3]": INVALID, '"\u0663"': INVALID,
    '"inf"': INVALID, "1" + "0" * 30: INVALID,
}  # fmt: skip
REVIEWS = "gpt_review/outputs"
FLASK_FILES = [
    "evaluation_set/flask_evaluation.jsonl",
    "evaluation_set/flask_hard_evaluation.jsonl",
    "model_output/outputs/alpaca.jsonl",
    f"{REVIEWS}/vicuna_review.jsonl",
]


def _review_lines(folder: Path) -> dict[str, list[dict]]:
    return {
        p.name.removesuffix("_review.jsonl"): [
            json.loads(x) for x in p.read_text("utf-8-sig").splitlines()
        ]
        for p in sorted((folder / REVIEWS).glob("*_review.jsonl"))
    }


def _expected_scores(folder: Path, labels: dict[str, str], raw: dict) -> dict[tuple, object]:
    """Scores of every review row whose dict is all valid; ``raw`` overrides (model, line)."""
    out: dict[tuple, object] = {}
    for model, rows in _review_lines(folder).items():
        for no, row in enumerate(rows):
            meant = raw.get((model, no)) or {k: v for k, v in row["score"].items()}
            if any(v is INVALID for v in meant.values()) or any(k not in labels for k in meant):
                continue
            for k, v in meant.items():
                out[(str(row["question_id"]), model, JUDGE, labels[k])] = v
    return out


@st.composite
def _rescore(draw, folder: Path, labels: dict[str, str]) -> Expected:
    """Rewrite some review scores with spellings of known meaning: a clean import."""
    raw: dict = {}
    for model, rows in _review_lines(folder).items():
        lines = []
        for no, row in enumerate(rows):
            parts, meant = [], {}
            for key, value in row["score"].items():
                text, means = draw(
                    st.sampled_from(
                        [(json.dumps(value), float(value))] + list(REVIEW_VALUES.items())
                    )
                )
                parts.append(f"{json.dumps(key)}: {text}")
                meant[key] = means
            raw[(model, no)] = meant
            body = {k: v for k, v in row.items() if k != "score"}
            lines.append(json.dumps(body)[:-1] + ', "score": {' + ", ".join(parts) + "}}")
        (folder / REVIEWS / f"{model}_review.jsonl").write_text("\n".join(lines) + "\n")
    return Expected("rescored reviews", "clean", _expected_scores(folder, labels, raw))


def _replace(folder: Path, rel: str, how: str, draw) -> None:
    path = folder / rel
    data = path.read_bytes()
    path.unlink()
    if how == "directory":
        path.mkdir()
    elif how == "fifo":
        os.mkfifo(path)
    elif how == "loop":
        path.symlink_to(path.name)
    elif how == "dev_zero":
        path.symlink_to("/dev/zero")
    elif how == "dangling":
        path.symlink_to("nowhere.jsonl")
    elif how == "missing":
        pass
    else:
        at = draw(st.integers(0, len(data)))
        path.write_bytes(
            {
                "empty": b"",
                "truncate": data[:at],
                "latin1": data.replace(b"e", b"\xe9", 1),
                "nul": data[:at] + b"\x00" + data[at:],
                "nul_escape": data.replace(b" says", b" \\u0000 says"),
                "surrogate": data.replace(b" says", b" \\ud800 says"),
                "deep": data + b'{"question_id": ' + b"[" * 20_000 + b"]" * 20_000 + b"}\n",
                "huge": data + b'{"question_id": 1, "text": "' + b"x" * 300_000 + b'"}\n',
                "duplicate_key": data.replace(
                    b'"question_id": 1,', b'"question_id": 1, "question_id": 99,'
                ),
                "big_id": data.replace(
                    b'"question_id": 1,', b'"question_id": 1' + b"0" * 30 + b","
                ),
                "huge_id": data.replace(
                    b'"question_id": 1,', b'"question_id": 1' + b"0" * 5000 + b","
                ),
                "exp_id": data.replace(b'"question_id": 1,', b'"question_id": 1e999999999,'),
                "bom": b"\xef\xbb\xbf" + data,
            }[how]
        )


HOW = [
    "directory",
    "fifo",
    "loop",
    "dev_zero",
    "dangling",
    "missing",
    "empty",
    "truncate",
    "latin1",
    "nul",
    "nul_escape",
    "surrogate",
    "deep",
    "huge",
    "duplicate_key",
    "big_id",
    "huge_id",
    "exp_id",
    "bom",
]


def _odd_model_file(folder: Path, name: bytes) -> None:
    """A model output file whose name is not valid UTF-8, or holds odd characters."""
    target = os.fsencode(folder / "model_output/outputs") + b"/" + name + b".jsonl"
    with open(target, "wb") as f:
        f.write(b'{"question_id": 1, "text": "odd"}\n')


@st.composite
def flask_case(draw, folder: Path, labels: dict[str, str]) -> Expected:
    """Mutate a valid FLASK folder; what it must do."""
    what = draw(st.sampled_from(["valid", "rescore", "replace", "odd_name"]))
    if what == "valid":
        return Expected("valid folder", "clean", _expected_scores(folder, labels, {}))
    if what == "rescore":
        return draw(_rescore(folder, labels))
    if what == "odd_name":
        name = draw(
            st.sampled_from(
                [b"\xff\xfe", b"mod\xe9le", "模型\u200b".encode(), b"a\nb", b"kind:llm", b" "]
            )
        )
        _odd_model_file(folder, name)
        try:  # a name that is not UTF-8 cannot name a model: refused
            name.decode()
        except UnicodeDecodeError:
            return Expected(f"model file named {name!r}", "error", {})
        return Expected(f"model file named {name!r}", "any", {})
    rel, how = draw(st.sampled_from(FLASK_FILES)), draw(st.sampled_from(HOW))
    _replace(folder, rel, how, draw)
    if how == "bom":
        return Expected(f"{rel}: {how}", "clean", _expected_scores(folder, labels, {}))
    return Expected(f"{rel}: {how}", "error" if how in MUST_FAIL else "any", {})


MUST_FAIL = {"directory", "fifo", "loop", "dev_zero", "dangling", "empty", "latin1", "deep", "huge"}

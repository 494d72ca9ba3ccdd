"""Read a long-format table (CSV, JSONL/NDJSON, Parquet) into columns and the line of each row.

Only the file's own syntax is checked here; ``score_files`` checks the values. Lines are physical
lines: in a CSV file the header is line 1 and a row whose quoted field spans lines is named by
its first line. Parquet has no lines, so its rows are numbered from 1 and messages say "row".
Column names are matched case-insensitively (stripped, lower-cased).
"""

from __future__ import annotations

import csv
import hashlib
import io
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
from pandas.api.types import is_bool_dtype, is_numeric_dtype

from analysis.core.errors import InputError, shorten_values
from analysis.core.writer import SkippedRow
from analysis.ingest.file_checks import regular_file
from analysis.ingest.jsonl import decode, deep_lines, iter_jsonl, read_text

BOM_BYTES = "\ufeff".encode()
FORMATS = {".csv": "csv", ".jsonl": "jsonl", ".ndjson": "jsonl", ".parquet": "parquet"}
# Ids and names: kept as text exactly as written, so a reader that turns them into doubles
# (pyarrow reads an integer beyond int64 as one: 10**30 became 1000000000000000019884624838656)
# is not used for them.
NAME_COLS = ("instance_id", "model", "skill", "judge", "dataset", "kind")


class RowError(InputError):
    """An InputError for a Parquet file: it names the row (from 1), as the file has no lines."""

    def __init__(self, file: str, line: int | None, field: str | None, problem: str) -> None:
        super().__init__(file, line, field, problem)
        if line is not None:
            self.message = _where(file, "row", line, field) + f": {problem}"
            self.args = (self.message,)


@dataclass
class SkippedParquetRow(SkippedRow):
    def __str__(self) -> str:
        return _where(self.file, "row", self.line, self.field) + f": {self.problem}"


def _where(file: str, unit: str, line: int, field: str | None) -> str:
    return f"{file}, {unit} {line}" + (f", field '{field}'" if field else "")


@dataclass
class Table:
    """The raw columns of one file; ``lines[i]`` is where row ``i`` starts."""

    name: str
    unit: str  # "line", or "row" for Parquet
    columns: dict[str, pd.Series]
    lines: np.ndarray
    header_line: int | None  # where a missing column is reported (CSV: the header)
    digest: str  # sha1 of the file's bytes: imports of the same file are recognised
    problems: list[tuple[int, str | None, str]] = field(default_factory=list)  # (pos, field, why)
    skipped: list[SkippedRow] = field(default_factory=list)

    def error(self, line: int | None, field: str | None, problem: str) -> InputError:
        cls = RowError if self.unit == "row" else InputError
        return cls(self.name, line, field, problem)

    def at(self, line: int, field: str | None, problem: str) -> SkippedRow:
        """A row of this file and what is said about it (a Parquet file names its rows)."""
        cls = SkippedParquetRow if self.unit == "row" else SkippedRow
        return cls(self.name, int(line), field, shorten_values(problem))

    def skip(self, line: int, field: str | None, problem: str) -> None:
        self.skipped.append(self.at(line, field, problem))


def read_table(path: Path, name: str, *, lenient: bool = False) -> Table:
    """The file's columns; a syntax problem is an InputError naming file and line."""
    fmt = FORMATS.get(path.suffix.lower())
    if fmt is None:
        raise InputError(
            name,
            None,
            None,
            f"unknown file type '{path.suffix}'; expected .csv, .jsonl, .ndjson or .parquet",
        )
    regular_file(path, name, expected="a score file", capped=False)
    digest = hashlib.sha1(path.read_bytes()).hexdigest()
    if fmt == "csv":
        return _read_csv(path, name, digest)
    if fmt == "jsonl":
        return _read_jsonl(path, name, digest, lenient)
    return _read_parquet(path, name, digest)


def _canonical(names: list[str], table: Table) -> list[str]:
    out = [str(n).strip().lower() for n in names]
    seen: set[str] = set()
    for n in out:
        if n and n in seen:
            raise table.error(table.header_line, n, "this column appears twice in the header")
        seen.add(n)
    return out


def _read_csv(path: Path, name: str, digest: str) -> Table:
    text = read_text(path, name)
    return _fast_csv(path, name, digest, text) or _csv_rows(name, digest, text)


def _fast_csv(path: Path, name: str, digest: str, text: str) -> Table | None:
    """pyarrow's reader, when every row is one physical line (the usual file); None otherwise,
    and the csv module reads the file (and finds the line of any problem)."""
    import pyarrow as pa
    import pyarrow.csv as pa_csv

    first = text.split("\n", 1)[0].rstrip("\r")
    if "\r" in first:
        return None  # old Mac line ends: the csv module reads them
    header = next(csv.reader([first]), [])
    data = path.read_bytes().removeprefix(BOM_BYTES)
    if len(header) < 2 or not data:
        return None
    names = [f"c{i}" for i in range(len(header))]
    try:
        rows = pa_csv.read_csv(
            pa.py_buffer(data),
            read_options=pa_csv.ReadOptions(column_names=names, skip_rows=1),
            convert_options=pa_csv.ConvertOptions(
                column_types=dict.fromkeys(names, pa.string()),
                null_values=[],
                strings_can_be_null=False,
                quoted_strings_can_be_null=False,
            ),
        )
    except pa.ArrowException:
        return None
    lines = _filled_lines(data)
    if rows.num_rows == 0 or len(lines) != rows.num_rows + 1 or lines[0] != 1:
        return None
    table = Table(name, "line", {}, lines[1:], 1, digest)
    for i, col in enumerate(_canonical(header, table)):
        if col:  # a nameless column (trailing comma in the header) is ignored
            table.columns[col] = _objects(rows.column(i))
    return table


def _filled_lines(data: bytes) -> np.ndarray:
    """The numbers (from 1) of the physical lines that are not empty."""
    b = np.frombuffer(data, dtype=np.uint8)
    breaks = np.flatnonzero(b == 10)
    starts = np.concatenate(([0], breaks + 1))
    length = np.concatenate((breaks, [len(b)])) - starts
    cr_only = (length == 1) & (b[np.minimum(starts, len(b) - 1)] == 13)
    return np.flatnonzero((length > 0) & ~cr_only) + 1


def _csv_rows(name: str, digest: str, text: str) -> Table:
    # No cell is longer than the file, so the csv module's 131,072-character cap is lifted to
    # the file's length; only ever raised (never lowered) so concurrent readers stay safe.
    if csv.field_size_limit() < len(text) + 1:
        csv.field_size_limit(len(text) + 1)
    reader = csv.reader(io.StringIO(text, newline=""))
    rows: list[list[str]] = []
    lines: list[int] = []
    prev = 0
    try:
        for row in reader:
            start, prev = prev + 1, reader.line_num
            if len(row) > 1 or (row and row[0].strip()):  # blank lines are not rows
                rows.append(row)
                lines.append(start)
    except csv.Error as e:
        raise InputError(name, prev + 1, None, f"not valid CSV ({e})") from e
    if not rows:
        raise InputError(
            name,
            None,
            None,
            "the file is empty: expected a header line "
            "(instance_id,model,judge,skill,score,...) and one row per score",
        )
    table = Table(name, "line", {}, np.asarray(lines[1:], dtype=np.int64), lines[0], digest)
    header = _canonical(rows[0], table)
    if len(rows) == 1:
        raise InputError(name, lines[0], None, "the file has a header but no rows")
    data = rows[1:]
    n = len(header)
    for pos, row in enumerate(data):
        if len(row) == n:
            continue
        if len(row) > n and not any(c.strip() for c in row[n:]):
            data[pos] = row[:n]  # trailing empty cells, as spreadsheets write them
            continue
        missing = f"'{header[len(row)]}' and after are missing" if len(row) < n else "extra cells"
        table.problems.append((pos, None, f"has {len(row)} cells, the header has {n}: {missing}"))
        data[pos] = (row + [""] * n)[:n]
    for col, values in zip(header, zip(*data, strict=True), strict=True):
        if col:  # a nameless column (trailing comma in the header) is ignored
            table.columns[col] = pd.Series(values, dtype=object)
    return table


def _fast_jsonl(path: Path, name: str, digest: str) -> Table | None:
    """pyarrow's reader, when each column has one JSON type and no line is blank (the usual
    file); None otherwise, and the file is read line by line (finding any problem's line)."""
    import pyarrow as pa
    import pyarrow.json as pa_json

    data = path.read_bytes()
    decode(data, name)  # pyarrow does not check UTF-8: a bad byte is an error here
    if deep_lines(data):
        return None  # pyarrow's parser would crash on it: the line reader names the line
    data = data.removeprefix(BOM_BYTES)
    try:
        rows = pa_json.read_json(pa.py_buffer(data))
    except pa.ArrowException:
        return None
    if any(pa.types.is_temporal(f.type) for f in rows.schema):
        return None  # pyarrow read an ISO date string as a date: keep the text as written
    lines = _filled_lines(data)
    if rows.num_rows == 0 or len(lines) != rows.num_rows or lines[-1] != len(lines):
        return None
    table = Table(name, "line", {}, lines, 1, digest)
    canonical = [str(n).strip().lower() for n in rows.column_names]
    if len(set(canonical)) < len(canonical):
        return None
    if any(
        pa.types.is_floating(f.type) and c in NAME_COLS
        for c, f in zip(canonical, rows.schema, strict=True)
    ):
        return None  # an id read as a double may have lost digits: read it exactly
    for col, column in zip(canonical, rows.columns, strict=True):
        table.columns[col] = _objects(column)
    return table


def _read_jsonl(path: Path, name: str, digest: str, lenient: bool) -> Table:
    if fast := _fast_jsonl(path, name, digest):
        return fast
    table = Table(name, "line", {}, np.empty(0, np.int64), None, digest)

    def skip(e: InputError) -> None:
        table.skip(e.line or 0, e.field, e.problem)

    pairs = iter_jsonl(path, name, exact=True, on_error=skip if lenient else None)
    lines: list[int] = []
    objs: list[dict] = []
    for no, obj in pairs:
        lines.append(no)
        objs.append(obj)
    if not objs and not table.skipped:
        raise InputError(name, None, None, "the file is empty: expected one JSON object per line")
    table.lines = np.asarray(lines, dtype=np.int64)
    table.header_line = lines[0] if lines else None
    keys: dict[str, list[str]] = {}
    for k in [*objs[0], *sorted(set().union(*objs) - set(objs[0]))] if objs else []:
        keys.setdefault(str(k).strip().lower(), []).append(k)
    for col, originals in keys.items():
        if len(originals) == 1:
            values = [o.get(originals[0]) for o in objs]
        else:  # "Score" and "score" in different rows: the same column
            values = [next((o[k] for k in originals if k in o), None) for o in objs]
        table.columns[col] = pd.Series(values, dtype=object)
    return table


def _objects(column) -> pd.Series:
    """An Arrow column as a pandas Series: numbers stay numeric, the rest become Python objects
    (strings, lists, None), which pandas factorises fastest."""
    s = column.to_pandas(integer_object_nulls=True)
    if is_numeric_dtype(s.dtype) and not is_bool_dtype(s.dtype):
        return s.reset_index(drop=True)
    return pd.Series(s.to_numpy(dtype=object, na_value=None), dtype=object)


def _one_line(error: Exception) -> str:
    """pyarrow's message on one line: some append the schema, a line per field, which would
    break the one-paragraph error in two dozen."""
    return " ".join(str(error).split())


def _read_parquet(path: Path, name: str, digest: str) -> Table:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        # A column twice is named here: pyarrow's reader refuses it with its whole schema.
        _canonical(pq.read_schema(path).names, Table(name, "row", {}, np.empty(0), None, digest))
        data = pq.read_table(path)
    except (pa.ArrowException, OSError) as e:
        raise InputError(name, None, None, f"not a readable Parquet file ({_one_line(e)})") from e
    if data.num_rows == 0:
        raise InputError(name, None, None, "the file has no rows")
    table = Table(name, "row", {}, np.arange(1, data.num_rows + 1), None, digest)
    for col, original in zip(_canonical(data.column_names, table), data.column_names, strict=True):
        column = data.column(original)
        try:  # a string column may hold bytes that are not UTF-8: to_pandas raises on them
            column.validate(full=True)
            table.columns[col] = _objects(column)
        except pa.ArrowException as e:
            raise InputError(name, None, col, f"this column cannot be read ({_one_line(e)})") from e
    return table

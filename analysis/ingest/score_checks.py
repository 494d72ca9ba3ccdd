"""Row checks for score files: collect bad rows per step, then stop at the first or skip them.

``RowChecks.add`` takes a boolean mask over the rows and the problem (text, or a function of the
row position, called only for rows that are reported). ``flush`` raises the earliest problem in
strict mode; in lenient mode it lists every bad row as skipped and drops it.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from analysis.ingest.score_table import Table

Why = str | Callable[[int], str]


def one(n: int, pos: int) -> np.ndarray:
    mask = np.zeros(n, dtype=bool)
    mask[pos] = True
    return mask


class RowChecks:
    def __init__(self, table: Table, lenient: bool) -> None:
        self.table, self.lenient = table, lenient
        self.bad: dict[int, tuple[str | None, str]] = {}

    def add(self, mask: object, field: str | None, why: Why) -> None:
        positions = np.flatnonzero(np.asarray(mask, dtype=bool))
        for p in positions if self.lenient else positions[:1]:
            if int(p) not in self.bad:  # a row's first problem is the one reported
                self.bad[int(p)] = (field, why if isinstance(why, str) else why(int(p)))

    def flush(self, df: pd.DataFrame) -> pd.DataFrame:
        """Strict: raise the problem on the earliest line. Lenient: skip the bad rows."""
        if not self.bad:
            return df
        lines = df["_line"].to_numpy()
        if not self.lenient:
            p = min(self.bad, key=lambda p: lines[p])
            raise self.table.error(int(lines[p]), *self.bad[p])
        for p in sorted(self.bad):
            self.table.skip(int(lines[p]), *self.bad[p])
        keep = np.ones(len(df), dtype=bool)
        keep[list(self.bad)] = False
        self.bad = {}
        return df[keep].reset_index(drop=True)

    def conflicts(
        self,
        df: pd.DataFrame,
        keys: list[str],
        col: str,
        field: str,
        subject: Callable[[int], str],
        show: Callable[[object], str],
    ) -> None:
        """Rows whose ``col`` differs from the first value given for the same key; the message
        names both lines. Vectorised until a clash is found (the usual file has none)."""
        sub = df.loc[df[col].notna(), [*keys, col]]
        uniq = sub.drop_duplicates()
        if not uniq.duplicated(keys).any():
            return
        clash = uniq[uniq.duplicated(keys, keep=False)][keys].drop_duplicates()
        part = sub[pd.MultiIndex.from_frame(sub[keys]).isin(pd.MultiIndex.from_frame(clash))]
        first: dict[tuple, tuple[object, int]] = {}
        bad: dict[int, tuple[object, int]] = {}
        key_rows = part[keys].itertuples(index=False, name=None)
        for pos, key, value in zip(part.index, key_rows, part[col], strict=True):
            if key not in first:
                first[key] = (value, int(pos))
            elif value != first[key][0]:
                bad[int(pos)] = first[key]
        lines, unit, values = df["_line"].to_numpy(), self.table.unit, df[col].to_numpy()

        def why(p: int) -> str:
            there, q = bad[p]
            return (
                f"{subject(p)} is {show(values[p])} here but {show(there)} on {unit} "
                f"{lines[q]}; give one value (or remove the duplicate)"
            )

        self.add(np.isin(np.arange(len(df)), list(bad)), field, why)

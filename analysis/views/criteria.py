"""A dataset's criterion labels, read from the store's ``dataset_skills`` view: the dataset's own
criteria, else FLASK's shared skills. A dataset may give a FLASK name (``correctness``) a meaning
of its own; its rows then show its own label, never FLASK's "Logical Correctness".

Views put the labels in what they return (a ``label`` column beside ``skill``, or a ``labels``
mapping) and charts and tables use those: nothing below the views guesses a label from FLASK's
constants for data that may not be FLASK's.
"""

from __future__ import annotations

from collections.abc import Mapping

import duckdb
import pandas as pd

from analysis.core.store import Store
from analysis.views.tables import skill_label

CRITERION_LABELS = "SELECT skill, label FROM dataset_skills WHERE dataset = ?"


def labels_in(con: duckdb.DuckDBPyConnection, dataset: str) -> dict[str, str]:
    """skill id → label of every criterion a dataset can score, on an open connection."""
    return dict(con.execute(CRITERION_LABELS, [dataset]).fetchall())


def criterion_labels(store: Store, dataset: str) -> dict[str, str]:
    """skill id → label of every criterion a dataset can score (its own, else FLASK's)."""
    with store.read() as con:
        return labels_in(con, dataset)


def with_labels(frame: pd.DataFrame, labels: Mapping[str, str]) -> pd.DataFrame:
    """``frame`` with a ``label`` column after ``skill``: each criterion's label (FLASK's, else
    its id, when the store has none for it)."""
    if "skill" not in frame.columns:
        return frame
    label = [skill_label(s, labels) for s in frame["skill"]]
    out = frame.drop(columns="label", errors="ignore")
    out.insert(out.columns.get_loc("skill") + 1, "label", label)  # by position, any index
    return out


def split_labels(frame: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, str] | None]:
    """(``frame`` without its ``label`` column, skill id → label) for the tables of
    views/tables.py; the labels are None when the frame carries none (then FLASK's apply)."""
    if "label" not in frame.columns or "skill" not in frame.columns:
        return frame, None
    labels = dict(zip(frame["skill"], frame["label"], strict=True))
    return frame.drop(columns="label"), labels

"""What the store keeps of runs sent through the batch service (the ``batches`` and
``batch_requests`` tables, schema v7): each part's file and batch ids, journalled before the run
waits on anything, its state as last read, and the items each request line asks for. This is
what lets a killed process or a restarted app pick a batch up again instead of paying twice."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pandas as pd

from analysis.core.store import Store
from judges.backends.openai_batch import BatchState
from judges.records import journal_dir

BATCH_SOURCE = "batch judge run on {dataset}"  # runs.source of a batch run

INSERT_PART = """
INSERT INTO batches (run_id, part, base_url, key_env, n_requests, n_bytes, status)
VALUES (?, ?, ?, ?, ?, ?, 'planned')
"""

SET_UPLOADED = """
UPDATE batches SET input_file_id = ?, status = 'uploaded', updated_at = current_timestamp
WHERE run_id = ? AND part = ?
"""

UNSTORED_PARTS = "SELECT count(*) FROM batches WHERE run_id = ? AND stored_at IS NULL"


INSERT_REQUESTS = """
INSERT INTO batch_requests (run_id, part, custom_id, instance_id, model, skills)
SELECT run_id, part, custom_id, instance_id, model, skills FROM new_requests
"""

SET_STATE = """
UPDATE batches SET batch_id = ?, status = ?, n_completed = ?, n_failed = ?, output_file_id = ?,
    error_file_id = ?, errors = ?, updated_at = current_timestamp
WHERE run_id = ? AND part = ?
"""

# A part that will never reach the service (cancelled before its batch was made, given up).
SET_LOCAL_STATUS = """
UPDATE batches SET status = ?, errors = ?, updated_at = current_timestamp
WHERE run_id = ? AND part = ?
"""

MARK_STORED = """
UPDATE batches SET stored_at = current_timestamp WHERE run_id = ? AND part = ?
"""

PARTS = """
SELECT run_id, part, base_url, key_env, n_requests, n_bytes, input_file_id, batch_id, status,
       n_completed, n_failed, output_file_id, error_file_id, errors, stored_at
FROM batches WHERE run_id = ? ORDER BY part
"""

REQUESTS = """
SELECT custom_id, instance_id, model, skills FROM batch_requests
WHERE run_id = ? AND part = ?
"""

# Runs with a part whose answers are not stored yet, newest first.
PENDING_RUNS = """
SELECT r.run_id, r.judge, r.dataset, r.started_at, j.model,
       count(*) AS parts, sum(b.n_requests) AS requests,
       sum(b.n_completed) AS completed, sum(b.n_failed) AS failed,
       string_agg(DISTINCT b.status, ', ' ORDER BY b.status) AS statuses,
       (SELECT count(*) FROM batch_requests q JOIN batches u USING (run_id, part)
        WHERE q.run_id = r.run_id AND u.stored_at IS NULL) AS items
FROM batches b JOIN runs r USING (run_id) LEFT JOIN judges j USING (judge)
WHERE b.stored_at IS NULL
  AND (? IS NULL OR r.dataset = ?) AND (? IS NULL OR r.judge = ?) AND (? IS NULL OR r.run_id = ?)
GROUP BY ALL
ORDER BY r.started_at DESC
"""

# Items a pending batch of this judge asks already: a new run does not send them again.
WAITING = """
SELECT q.instance_id, q.model, q.custom_id
FROM batch_requests q JOIN batches b USING (run_id, part) JOIN runs r USING (run_id)
WHERE b.stored_at IS NULL AND r.judge = ? AND r.dataset = ?
"""

# Batch runs that never got a part (killed before the first upload was written down).
EMPTY_RUNS = """
SELECT run_id FROM runs
WHERE status = 'running' AND starts_with(source, ?)
  AND run_id NOT IN (SELECT run_id FROM batches)
"""


@dataclass(frozen=True)
class Part:
    run_id: str
    part: int
    base_url: str
    key_env: str | None
    n_requests: int
    n_bytes: int
    input_file_id: str | None
    batch_id: str | None
    status: str
    n_completed: int
    n_failed: int
    output_file_id: str | None
    error_file_id: str | None
    errors: str | None
    stored_at: Any = None  # when its answers were stored (None: still to store)

    @property
    def stored(self) -> bool:
        return self.stored_at is not None

    def line(self, of: int) -> str:
        """One line for a person: where this part is."""
        where = f"batch {self.batch_id}" if self.batch_id else "not submitted yet"
        done = self.n_completed + self.n_failed
        status = f"{self.status}, stored" if self.stored else self.status
        text = f"part {self.part}/{of} ({where}): {status}, {done:,} of {self.n_requests:,}"
        text += f" answered ({self.n_failed:,} failed)" if self.n_failed else " answered"
        return text + (f"; {self.errors}" if self.errors else "")


@dataclass(frozen=True)
class PendingRun:
    """A batch run with answers still to store: for the page's list and ``judge --resume``."""

    run_id: str
    judge: str
    dataset: str
    started_at: Any
    model: str | None
    parts: int
    requests: int
    completed: int
    failed: int
    statuses: str
    items: int = 0  # the items still to store (items sharing a prompt share a request)


def part_file(store: Store, run_id: str, part: int) -> Path:
    """The local copy of a part's request file, kept until the service has the file."""
    return journal_dir(store) / f"{run_id}.part{part}.jsonl"


def add_part(
    con: Any, run_id: str, part: int, client: Any, requests: pd.DataFrame, n_bytes: int
) -> None:
    """Journal a planned part (in the caller's transaction): where it goes, what it asks."""
    n = int(requests["custom_id"].nunique())
    con.execute(INSERT_PART, [run_id, part, client.base_url, client.key_env, n, n_bytes])
    con.register("new_requests", requests.assign(run_id=run_id, part=part))
    con.execute(INSERT_REQUESTS)
    con.unregister("new_requests")


def set_state(store: Store, p: Part, s: BatchState) -> None:
    with store.write() as con:
        con.execute(
            SET_STATE,
            [
                s.batch_id,
                s.status,
                s.completed,
                s.failed,
                s.output_file_id,
                s.error_file_id,
                s.errors,
                p.run_id,
                p.part,
            ],
        )


def set_uploaded(store: Store, p: Part, file_id: str) -> Part:
    with store.write() as con:
        con.execute(SET_UPLOADED, [file_id, p.run_id, p.part])
    return replace(p, input_file_id=file_id, status="uploaded")


def set_local_status(store: Store, p: Part, status: str, why: str) -> None:
    with store.write() as con:
        con.execute(SET_LOCAL_STATUS, [status, why, p.run_id, p.part])


def parts(store: Store, run_id: str) -> list[Part]:
    with store.read() as con:
        return [Part(*row) for row in con.execute(PARTS, [run_id]).fetchall()]


def requests(store: Store, p: Part) -> dict[str, list[tuple[str, str, tuple[str, ...]]]]:
    """custom_id → the items (instance, model, skills) that request answers for."""
    with store.read() as con:
        rows = con.execute(REQUESTS, [p.run_id, p.part]).fetchall()
    out: dict[str, list[tuple[str, str, tuple[str, ...]]]] = {}
    for cid, instance_id, model, skills in rows:
        out.setdefault(cid, []).append((instance_id, model, tuple(skills)))
    return out


def pending_runs(
    store: Store, dataset: str | None = None, judge: str | None = None, run_id: str | None = None
) -> list[PendingRun]:
    if not store.exists():
        return []
    with store.read() as con:
        rows = con.execute(
            PENDING_RUNS, [dataset, dataset, judge, judge, run_id, run_id]
        ).fetchall()
    return [PendingRun(*r) for r in rows]


def waiting(store: Store, judge: str, dataset: str) -> set[tuple[str, str, str]]:
    """(instance, model, cache key) of the items a pending batch of this judge asks."""
    with store.read() as con:
        return {tuple(r) for r in con.execute(WAITING, [judge, dataset]).fetchall()}


def empty_runs(store: Store) -> list[str]:
    prefix = BATCH_SOURCE.split("{")[0]
    with store.read() as con:
        return [r for (r,) in con.execute(EMPTY_RUNS, [prefix]).fetchall()]

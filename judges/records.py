"""What a judging run writes: one record per item (instance × model), first to an append-only
journal (in the kernel as each answer arrives, so a killed process loses nothing it paid for;
fsync'd before each store write), then to the store in small transactions. Replaying a journal
is idempotent: one judgment per (run, item)."""

from __future__ import annotations

import contextlib
import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
from filelock import FileLock, Timeout

from analysis.core import score_sums
from analysis.core.errors import FinegrainError, StoreBusyError
from analysis.core.store import Store

# A lock file without a journal older than this is left over from a crash (see recover).
ORPHAN_LOCK_AGE_S = 60.0

# The run and judge rows a judging run starts with (the live runner, a batch run, a rewrite).
START_RUN = """
INSERT INTO runs (run_id, judge, dataset, source, status, n_items, repeat_number)
VALUES (?, ?, ?, ?, 'running', ?, ?)
"""

JUDGE_ROW = "SELECT kind, backend FROM judges WHERE judge = ?"

UPSERT_RUN_JUDGE = """
INSERT INTO judges (judge, kind, backend, model, prompt_version, params)
VALUES (?, 'llm', ?, ?, ?, ?)
ON CONFLICT (judge) DO UPDATE SET backend = excluded.backend, model = excluded.model,
    prompt_version = excluded.prompt_version, params = excluded.params
"""

RUNS_IN_PROGRESS = "SELECT run_id, judge, dataset FROM runs WHERE status = 'running'"

# Counters follow what is stored, so they stay right whatever was resumed or replayed.
REFRESH_RUN_COUNTS = """
UPDATE runs SET
    n_ok = (SELECT count(*) FROM judgments j WHERE j.run_id = runs.run_id
            AND j.parse_status = 'ok'),
    n_failed = (SELECT count(*) FROM judgments j WHERE j.run_id = runs.run_id
                AND j.parse_status <> 'ok'),
    n_cached = ?,
    prompt_tokens = (SELECT COALESCE(sum(prompt_tokens), 0) FROM judgments j
                     WHERE j.run_id = runs.run_id),
    completion_tokens = (SELECT COALESCE(sum(completion_tokens), 0) FROM judgments j
                         WHERE j.run_id = runs.run_id),
    cost_usd = ?
WHERE run_id = ?
"""

# One judgment per (run, item): a later answer replaces an earlier failed call of the run.
DROP_FAILED_CALLS = """
DELETE FROM judgments WHERE parse_status = 'error'
  AND EXISTS (SELECT 1 FROM pending_judgments p
              WHERE p.run_id = judgments.run_id AND p.dataset = judgments.dataset
                AND p.instance_id = judgments.instance_id AND p.model = judgments.model)
"""

MARK_INTERRUPTED = """
UPDATE runs SET status = 'interrupted', finished_at = current_timestamp
WHERE run_id = ? AND status = 'running'
"""

INSERT_PENDING_JUDGMENTS = """
INSERT INTO judgments (run_id, dataset, instance_id, model, judge, raw_output, rationale,
                       parse_status, error, latency_ms, prompt_tokens, completion_tokens,
                       cache_key)
SELECT p.run_id, p.dataset, p.instance_id, p.model, p.judge, p.raw_output, p.rationale,
       p.parse_status, p.error, p.latency_ms, p.prompt_tokens, p.completion_tokens, p.cache_key
FROM pending_judgments p
WHERE NOT EXISTS (SELECT 1 FROM judgments j
                  WHERE j.run_id = p.run_id AND j.dataset = p.dataset
                    AND j.instance_id = p.instance_id AND j.model = p.model)
"""

# Answers supersede older runs' scores only: a killed run's journal replayed after a newer run
# of the same judge must not hide the newer answers (runs are ordered by their start).
SUPERSEDE_PENDING_SCORES = """
UPDATE scores SET superseded = true
FROM (SELECT DISTINCT p.dataset, p.instance_id, p.model, p.judge, p.skill, r.started_at
      FROM pending_scores p JOIN runs r USING (run_id)
      WHERE r.repeat_number IS NULL) b  -- a repeat run's answers are history: they hide nothing
WHERE NOT scores.superseded
  AND scores.dataset = b.dataset AND scores.instance_id = b.instance_id
  AND scores.model = b.model AND scores.judge = b.judge AND scores.skill = b.skill
  AND COALESCE((SELECT started_at FROM runs x WHERE x.run_id = scores.run_id), b.started_at)
      <= b.started_at
"""

INSERT_PENDING_SCORES = """
INSERT INTO scores (dataset, instance_id, model, judge, skill, score, judgment_id, run_id,
                    superseded)
SELECT s.dataset, s.instance_id, s.model, s.judge, s.skill, s.score::DOUBLE, j.judgment_id,
       s.run_id,
       -- still current: a newer run's score for the same key (left by the update above);
       -- or a repeat run's answer, history from the start (schema.sql, v6)
       EXISTS (SELECT 1 FROM scores x
               WHERE NOT x.superseded AND x.dataset = s.dataset
                 AND x.instance_id = s.instance_id AND x.model = s.model
                 AND x.judge = s.judge AND x.skill = s.skill)
       OR s.run_id IN (SELECT run_id FROM runs WHERE repeat_number IS NOT NULL)
FROM pending_scores s
JOIN judgments j ON j.run_id = s.run_id AND j.dataset = s.dataset
 AND j.instance_id = s.instance_id AND j.model = s.model
"""

STORED_ITEMS = """
SELECT dataset, instance_id, model FROM judgments
WHERE run_id = ? AND parse_status <> 'error'
"""


@dataclass(frozen=True)
class CallRecord:
    run_id: str
    dataset: str
    instance_id: str
    model: str
    judge: str
    cache_key: str
    raw_output: str | None
    rationale: str | None
    parse_status: str  # ok, failed (unparseable answer), error (the call failed)
    error: str | None
    latency_ms: float | None
    prompt_tokens: int
    completion_tokens: int
    scores: dict[str, float | None] = field(default_factory=dict)  # skill → score, None = N/A
    cached: bool = False  # reused from an earlier call: no tokens paid in this run

    @property
    def item(self) -> tuple[str, str, str]:
        return (self.dataset, self.instance_id, self.model)


def journal_dir(store: Store) -> Path:
    return store.path.with_name(store.path.name + ".journal")


def journal_lock(journal: Path) -> FileLock:
    """The lock a live run holds on its journal: a sibling ``<run_id>.jsonl.lock`` (filelock locks
    a file of its own and may truncate or delete it, so never the journal itself). Non-blocking:
    a held lock means a live run. Not thread-local: the lock belongs to the run, not a thread."""
    return FileLock(journal.with_name(journal.name + ".lock"), thread_local=False, blocking=False)


def _release(lock: FileLock, journal: Path) -> None:
    """Release; once the journal is gone, delete its lock file too, while still holding it (a
    prober that opened the old file then sees it unlinked and does not count it as a lock). On
    Windows the unlink fails while the file is open, and filelock deletes it on release."""
    try:
        if not journal.exists():
            with contextlib.suppress(OSError):
                Path(lock.lock_file).unlink()
    finally:
        lock.release()


class JournalError(FinegrainError):
    """The journal cannot be written (a full disk, a size limit, a read-only folder): the run
    stops calling at once, since an answer that cannot be journalled may be lost."""

    title = "Journal not writable"


def _write_all(fd: int, data: bytes) -> None:
    """One whole line (write() may take part of it)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _open_append(path: Path) -> int:
    return os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)


class Journal:
    """``<db>.journal/<run_id>.jsonl``, locked (``<run_id>.jsonl.lock``) while its run is alive;
    a killed process's lock goes with it, so its journal is then recoverable."""

    def __init__(self, store: Store, run_id: str) -> None:
        self.path = journal_dir(store) / f"{run_id}.jsonl"
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise _unwritable(self.path, e) from e
        self.lock = journal_lock(self.path)
        try:
            self.lock.acquire()
        except Timeout as e:
            raise StoreBusyError(
                f"Judging run {run_id} is being written by another process ({self.path}); "
                "wait for it or cancel it first."
            ) from e
        except OSError as e:
            raise _unwritable(self.path, e) from e
        try:
            # Unbuffered: a failed write leaves no half line in a buffer to be written later.
            self.fd = _open_append(self.path)
            self.size = os.fstat(self.fd).st_size
        except OSError as e:
            self.lock.release()
            raise _unwritable(self.path, e) from e
        except BaseException:
            self.lock.release()
            raise

    def append(self, rec: CallRecord) -> None:
        """In the kernel at once (a killed process loses nothing); on disk at the next sync. A
        failed write is cut back to the last whole line and raises ``JournalError``."""
        # vars(): the fields in order, as asdict() gives them without its deep copy (the line
        # is the same; this runs on the event loop once per answer).
        line = (json.dumps(vars(rec), ensure_ascii=False) + "\n").encode("utf-8")
        try:
            _write_all(self.fd, line)
        except OSError as e:
            with contextlib.suppress(OSError):  # a torn line would hide the next one
                os.ftruncate(self.fd, self.size)
            raise _unwritable(self.path, e) from e
        self.size += len(line)

    def sync(self) -> None:
        """fsync (against a machine crash); the runner calls it off the event loop."""
        try:
            os.fsync(self.fd)
        except OSError as e:
            raise _unwritable(self.path, e) from e

    def close(self, *, remove: bool) -> None:
        """Close and unlock; ``remove`` deletes the journal (and its lock file) as well. A kept
        journal keeps its lock file until ``recover`` replays it."""
        try:
            with contextlib.suppress(OSError):
                os.close(self.fd)
            if remove:
                self.path.unlink(missing_ok=True)
        finally:
            _release(self.lock, self.path)


def _unwritable(path: Path, e: OSError) -> JournalError:
    reason = e.strerror or type(e).__name__
    return JournalError(
        f"The judging journal {path} cannot be written ({reason}). Answers are journalled "
        "before anything else so that none paid for is lost, so no further calls are made; "
        "free space (or fix the folder's permissions) and run the same command again."
    )


def read_journal(path: Path) -> list[CallRecord]:
    """Every complete line (a torn last line from a kill is ignored)."""
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            out.append(CallRecord(**json.loads(line)))
        except (json.JSONDecodeError, TypeError):
            continue
    return out


def is_abandoned(path: Path) -> bool:
    """True when no live process holds the journal's lock (its run was killed or has ended)."""
    lock = journal_lock(path)
    try:
        lock.acquire()
    except Timeout:
        # Held, unless its run ended just now and removed the journal along with the lock.
        return not path.exists()
    _release(lock, path)
    return True


def write_records(store: Store, records: list[CallRecord]) -> int:
    """Store a batch in one transaction; returns how many were new. Safe to repeat."""
    if not records:
        return 0
    by_run: dict[str, list[CallRecord]] = {}
    for r in records:
        by_run.setdefault(r.run_id, []).append(r)
    with store.write() as con:
        return write_records_in(con, by_run)


def write_records_in(con, by_run: dict[str, list[CallRecord]]) -> int:
    """``write_records`` inside the caller's transaction (a batch's answers are stored with the
    row that says so: judges/batch_run.py)."""
    new = 0
    for run_id, recs in by_run.items():
        stored = {tuple(r) for r in con.execute(STORED_ITEMS, [run_id]).fetchall()}
        fresh = {r.item: r for r in recs if r.item not in stored}  # last answer wins
        if not fresh:
            continue
        new += len(fresh)
        _insert(con, list(fresh.values()))
    return new


def _insert(con, recs: list[CallRecord]) -> None:
    cols = [
        "run_id", "dataset", "instance_id", "model", "judge", "raw_output", "rationale",
        "parse_status", "error", "latency_ms", "prompt_tokens", "completion_tokens", "cache_key",
    ]  # fmt: skip
    judgments = pd.DataFrame([{c: getattr(r, c) for c in cols} for r in recs], columns=cols)
    score_rows = [
        (r.run_id, r.dataset, r.instance_id, r.model, r.judge, r.cache_key, skill, value)
        for r in recs
        if r.parse_status == "ok"
        for skill, value in r.scores.items()
    ]
    scores = pd.DataFrame(
        score_rows,
        columns=[
            "run_id",
            "dataset",
            "instance_id",
            "model",
            "judge",
            "cache_key",
            "skill",
            "score",
        ],
    ).astype({"score": "float64"})
    con.register("pending_judgments", judgments)
    con.register("pending_scores", scores)
    con.execute(DROP_FAILED_CALLS)
    con.execute(INSERT_PENDING_JUDGMENTS)
    if len(scores):
        con.execute(SUPERSEDE_PENDING_SCORES)
        con.execute(INSERT_PENDING_SCORES)
        score_sums.refresh(con, "SELECT * FROM pending_scores")  # same transaction
    con.unregister("pending_judgments")
    con.unregister("pending_scores")


def recover(store: Store) -> int:
    """Replay the journals of killed runs into the store and mark those runs interrupted.
    Returns the number of calls recovered."""
    folder = journal_dir(store)
    if not folder.exists():
        return 0
    recovered = 0
    for path in sorted(folder.glob("*.jsonl")):
        lock = journal_lock(path)
        try:
            lock.acquire()  # held while replaying: a concurrent recover skips this journal
        except Timeout:
            continue  # a live run (or another recover) owns it
        try:
            if path.exists():  # its run may have ended between the glob and the lock
                recovered += _replay(store, path)
        finally:
            _release(lock, path)
    _drop_orphan_locks(folder)
    return recovered


def _replay(store: Store, path: Path) -> int:
    recovered = write_records(store, read_journal(path))
    with store.write() as con:
        con.execute(REFRESH_RUN_COUNTS, [0, None, path.stem])
        con.execute(MARK_INTERRUPTED, [path.stem])
    path.unlink()
    return recovered


def _drop_orphan_locks(folder: Path) -> None:
    """Lock files whose journal is gone (a crash between the two deletions) are removed, so
    the folder holds nothing but live or recoverable runs. Young ones are left alone: a new run
    takes its lock just before it creates its journal."""
    now = time.time()
    for lock_path in folder.glob("*.jsonl.lock"):
        journal = lock_path.with_name(lock_path.name.removesuffix(".lock"))
        with contextlib.suppress(OSError):
            if not journal.exists() and now - lock_path.stat().st_mtime > ORPHAN_LOCK_AGE_S:
                is_abandoned(journal)  # takes the free lock and deletes it, journal-less


def live_runs(store: Store, judge: str, dataset: str) -> list[str]:
    """Runs of this judge on this dataset that a live process is writing now."""
    with store.read() as con:
        rows = con.execute(RUNS_IN_PROGRESS).fetchall()
    folder = journal_dir(store)
    return [
        run_id
        for run_id, j, d in rows
        if j == judge and d == dataset
        and (folder / f"{run_id}.jsonl").exists()
        and not is_abandoned(folder / f"{run_id}.jsonl")
    ]  # fmt: skip

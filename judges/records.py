"""What a judging run writes: one record per item (instance × model), first to an append-only
journal (in the kernel as each answer arrives, so a killed process loses nothing it paid for;
fsync'd before each store write), then to the store in small transactions. Replaying a journal
is idempotent: one judgment per (run, item)."""

from __future__ import annotations

import fcntl
import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path

import pandas as pd

from analysis import queries
from analysis.store import Store


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


class Journal:
    """``<db>.journal/<run_id>.jsonl``, locked while its run is alive."""

    def __init__(self, store: Store, run_id: str) -> None:
        self.path = journal_dir(store) / f"{run_id}.jsonl"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.file = open(self.path, "a", encoding="utf-8")  # noqa: SIM115 - lives with the run
        fcntl.flock(self.file, fcntl.LOCK_EX | fcntl.LOCK_NB)

    def append(self, rec: CallRecord) -> None:
        """In the kernel at once (a killed process loses nothing); on disk at the next sync."""
        self.file.write(json.dumps(asdict(rec), ensure_ascii=False) + "\n")
        self.file.flush()

    def sync(self) -> None:
        """fsync (against a machine crash); the runner calls it off the event loop."""
        os.fsync(self.file.fileno())

    def close(self, *, remove: bool) -> None:
        self.file.close()
        if remove:
            self.path.unlink(missing_ok=True)


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
    """True when no live process holds the journal's lock (its run was killed)."""
    with open(path, "a", encoding="utf-8") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        fcntl.flock(f, fcntl.LOCK_UN)
        return True


def write_records(store: Store, records: list[CallRecord]) -> int:
    """Store a batch in one transaction; returns how many were new. Safe to repeat."""
    if not records:
        return 0
    by_run: dict[str, list[CallRecord]] = {}
    for r in records:
        by_run.setdefault(r.run_id, []).append(r)
    new = 0
    with store.write() as con:
        for run_id, recs in by_run.items():
            stored = {tuple(r) for r in con.execute(queries.STORED_ITEMS, [run_id]).fetchall()}
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
    con.execute(queries.DROP_FAILED_CALLS)
    con.execute(queries.INSERT_PENDING_JUDGMENTS)
    if len(scores):
        con.execute(queries.SUPERSEDE_PENDING_SCORES)
        con.execute(queries.INSERT_PENDING_SCORES)
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
        if not is_abandoned(path):
            continue  # a live run owns it
        recovered += write_records(store, read_journal(path))
        with store.write() as con:
            con.execute(queries.REFRESH_RUN_COUNTS, [0, None, path.stem])
            con.execute(queries.MARK_INTERRUPTED, [path.stem])
        path.unlink()
    return recovered


def live_runs(store: Store, judge: str, dataset: str) -> list[str]:
    """Runs of this judge on this dataset that a live process is writing now."""
    with store.read() as con:
        rows = con.execute(queries.RUNS_IN_PROGRESS).fetchall()
    folder = journal_dir(store)
    return [
        run_id
        for run_id, j, d in rows
        if j == judge and d == dataset
        and (folder / f"{run_id}.jsonl").exists()
        and not is_abandoned(folder / f"{run_id}.jsonl")
    ]  # fmt: skip

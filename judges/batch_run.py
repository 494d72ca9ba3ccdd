"""Judging through the OpenAI Batch API (``--backend openai-batch``): the live run's plan (cache
hits skipped, one request per distinct prompt, the same prompt bytes and parser) written as
request files split at the service's limits, uploaded, and sent as batches; then tended: polled
until done, their output and error files downloaded and stored exactly as live answers are.

Durable across restarts: each part is journalled in the store (judges/batch_store.py) as soon
as its file is uploaded, and its batch id as soon as the service gives it; a part whose batch id
was never written down is looked up by its file before a batch is made for it. A killed process,
or the app restarted, picks the batches up again (``resume``, ``finegrain judge --resume``, the
Re-judge page) and never submits them twice. A process that stops waiting (``wait=False``, a
cancel, Ctrl-C) leaves its batches running at the service. A part's answers and its "stored"
mark are written in one transaction, so a kill while storing stores them again, never twice.
Failed requests are stored as failed calls with the service's reason, so running the same
selection again sends a new batch of only those."""

from __future__ import annotations

import threading
import uuid
from typing import Any

import pandas as pd
from filelock import FileLock, Timeout

from analysis.core.errors import FinegrainError, InputError, StoreBusyError
from analysis.core.store import Store
from judges import batch_store
from judges.backends.openai_batch import BatchClient
from judges.backends.openai_compat import chat_body
from judges.batch_files import request_line, split
from judges.batch_tend import (
    FINISH,
    RESUME_HINT,
    client_for,
    create_batch,
    finish,
    record,
    retry,
    tend,
)
from judges.config import SAME_JUDGE_AS
from judges.outcome import Progress, RunOptions, RunSummary
from judges.plan import Plan
from judges.records import JUDGE_ROW, START_RUN, UPSERT_RUN_JUDGE, journal_dir, write_records_in

SET_CACHED = "UPDATE runs SET n_cached = ? WHERE run_id = ?"
DEFAULT_OPTIONS = RunOptions()


def submit(
    store: Store,
    plan: Plan,
    options: RunOptions,
    *,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
) -> RunSummary:
    """Send a plan's calls as batches (answers the cache holds are stored at once), then tend
    them (``options.wait``) until every answer is stored. Pending batch runs of the same judge
    and dataset are tended first; the plan already leaves out what they ask."""
    cancel = cancel or threading.Event()
    cfg, dataset = plan.config, plan.selection.dataset
    earlier = resume(store, dataset=dataset, judge=cfg.judge, options=options, cancel=cancel)
    if not plan.calls and earlier:  # all of it was waiting in those batches
        return earlier[-1]
    client = BatchClient(cfg)  # no key, say: nothing is written
    run_id = uuid.uuid4().hex[:16]
    summary = RunSummary(run_id, cfg.judge, len(plan.calls))
    summary.cache_hits = sum(1 for c in plan.calls if plan.is_done(c))
    summary.notes = [line for s in earlier for line in s.lines()[:1] + s.batches]
    with _tending(store, run_id):  # a new run's lock: nobody else has it
        _start(store, plan, run_id, summary)
        if not plan.to_call:  # the cache (or a pending batch) answers everything
            finish(store, run_id, [], options.prices)
            return summary
        try:
            _upload_all(store, plan, client, run_id, options, summary, cancel)
        except FinegrainError as e:
            summary.halted = f"{e.message} ({RESUME_HINT})"
        return tend(store, run_id, options, summary, progress, cancel, {client.base_url: client})


def resume(
    store: Store,
    *,
    dataset: str | None = None,
    judge: str | None = None,
    options: RunOptions = DEFAULT_OPTIONS,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
    run_id: str | None = None,
) -> list[RunSummary]:
    """Tend every batch run with answers still to store (of this dataset and judge, or this
    run, if given): one summary per run. A run another process is tending is left to it (its
    summary says so)."""
    if not store.exists():
        return []
    store.ensure()
    _close_empty_runs(store)
    out = []
    for pending in batch_store.pending_runs(store, dataset, judge):
        if run_id is not None and pending.run_id != run_id:
            continue
        with _tending(store, pending.run_id) as held:
            summary = RunSummary(pending.run_id, pending.judge, pending.items)
            if not held:
                summary.notes.append(
                    f"batch run {pending.run_id} is being tended by another "
                    "process (the app, or another judge command)"
                )
                out.append(summary)
                continue
            out.append(tend(store, pending.run_id, options, summary, progress, cancel, {}))
    return out


def cancel_run(store: Store, run_id: str) -> list[str]:
    """Ask the service to cancel a run's unfinished batches (what they answered before is
    stored by the next tend); a part not yet submitted is cancelled here. Lines for a person."""
    out = []
    clients: dict[str, BatchClient] = {}
    for p in batch_store.parts(store, run_id):
        if p.stored or p.status in ("completed", "failed", "expired", "cancelled"):
            continue
        if p.batch_id is None:
            batch_store.set_local_status(store, p, "cancelled", "cancelled before submission")
            out.append(f"part {p.part}: cancelled before submission")
            continue
        state = client_for(store, p, clients).cancel(p.batch_id)
        batch_store.set_state(store, p, state)
        out.append(f"part {p.part} (batch {p.batch_id}): {state.status}")
    for c in clients.values():
        c.close()
    return out or [f"batch run {run_id} has nothing left to cancel"]


# --- submitting -----------------------------------------------------------------------------


def _start(store: Store, plan: Plan, run_id: str, summary: RunSummary) -> None:
    """The judge and run rows, and the answers the cache holds (stored now, no request)."""
    cfg, sel = plan.config, plan.selection
    backend = SAME_JUDGE_AS.get(cfg.backend, cfg.backend)
    reused = [
        record(
            run_id,
            sel.dataset,
            cfg.judge,
            c.item.instance_id,
            c.item.model,
            c.item.skills,
            c.cache_key,
            plan.reuse[c.cache_key][0],
            plan.scales,
            cached=True,
        )
        for c in plan.to_reuse
    ]
    with store.write() as con:
        row = con.execute(JUDGE_ROW, [cfg.judge]).fetchone()
        if row and row[0] != "llm":
            raise InputError(
                "judge name",
                None,
                None,
                f"'{cfg.judge}' already names a {row[0]} "
                "scorer; its scores would be replaced. Choose another name.",
            )
        con.execute(
            UPSERT_RUN_JUDGE, [cfg.judge, backend, cfg.model, cfg.prompt_version, cfg.params_json()]
        )
        source = batch_store.BATCH_SOURCE.format(dataset=sel.dataset)
        con.execute(START_RUN, [run_id, cfg.judge, sel.dataset, source, len(plan.calls), None])
        write_records_in(con, {run_id: reused})
        con.execute(SET_CACHED, [len(reused) + summary.cache_hits, run_id])
    summary.cache_hits += len(reused)


def _upload_all(
    store: Store,
    plan: Plan,
    client: BatchClient,
    run_id: str,
    options: RunOptions,
    summary: RunSummary,
    cancel: threading.Event,
) -> None:
    calls = plan.to_call
    lines = [request_line(c.cache_key, chat_body(plan.config, c.messages)) for c in calls]
    ranges = split(
        lines, max_requests=options.batch_max_requests, max_bytes=options.batch_max_bytes
    )
    for k, rng in enumerate(ranges, start=1):
        if cancel.is_set():  # never sent: the next run of the same selection sends them
            summary.notes.append(
                f"{len(ranges) - k + 1} request file(s) not submitted "
                "(cancelled); run the same selection again to send them"
            )
            return
        data = b"".join(lines[i] for i in rng)
        name = f"finegrain-{run_id}-part{k}.jsonl"
        file_id = retry(lambda d=data, n=name: client.upload(n, d), options, cancel)
        items = pd.DataFrame(
            [
                (calls[i].cache_key, s.item.instance_id, s.item.model, list(s.item.skills))
                for i in rng
                for s in plan.sharing(calls[i])
            ],
            columns=["custom_id", "instance_id", "model", "skills"],
        )
        with store.write() as con:
            batch_store.add_part(con, run_id, k, client, items, len(data), file_id)
        part = next(p for p in batch_store.parts(store, run_id) if p.part == k)
        create_batch(store, part, client, options, cancel, fresh=True)
        summary.calls += len(rng)  # requests sent (a resubmission is a new run's)


class _tending:
    """Holds ``<db>.journal/<run_id>.batch.lock`` while this process tends the run: the app and a
    judge command never both poll and store one run. ``as held``: False when another has it."""

    def __init__(self, store: Store, run_id: str) -> None:
        folder = journal_dir(store)
        folder.mkdir(parents=True, exist_ok=True)
        self.store, self.run_id = store, run_id
        self.path = folder / f"{run_id}.batch.lock"
        self.lock = FileLock(self.path, thread_local=False, blocking=False)

    def __enter__(self) -> bool:
        try:
            self.lock.acquire()
        except Timeout:
            return False
        return True

    def __exit__(self, *exc: Any) -> None:
        if not self.lock.is_locked:
            return
        try:  # a run with nothing left to store needs no lock file any more (deleted while held)
            if not batch_store.pending_runs(self.store, run_id=self.run_id):
                self.path.unlink(missing_ok=True)
        except (FinegrainError, OSError):
            pass  # kept: harmless, and reused by the run's next tend
        finally:
            self.lock.release()


def _close_empty_runs(store: Store) -> None:
    """A batch run killed before its first part was written down has nothing at the service to
    wait for: it is marked interrupted (its items are asked again by the next run)."""
    for run_id in batch_store.empty_runs(store):
        with _tending(store, run_id) as held:
            if held:
                try:
                    with store.write() as con:
                        con.execute(FINISH, ["interrupted", run_id])
                except StoreBusyError:
                    return

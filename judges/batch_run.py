"""Judging through the OpenAI Batch API (``--backend openai-batch``): the live run's plan (cache
hits skipped, one request per distinct prompt, the same prompt bytes and parser) written as
request files split at the service's limits, uploaded and sent as batches, then tended
(judges/batch_tend.py): polled until done, their output and error files stored exactly as live
answers are.

Durable across restarts: every part and the items it asks are written to the store with the run
row, before anything is sent (judges/batch_store.py; a local copy of each file waits in the
journal folder until the service has it), and each part's file and batch ids as soon as the
service gives them; a part whose batch id was never written down is looked up by its file before
a batch is made for it. So a killed process, or the app restarted, sends what was not sent and
picks the batches up again (``resume``, ``finegrain judge --resume``, the Re-judge page, or the
same command again) without submitting anything twice, and a plan made meanwhile (live or batch)
leaves out what the pending parts ask. A process that stops waiting (``wait=False``, a cancel,
Ctrl-C) leaves its batches running at the service. Failed requests are stored as failed calls
with the service's reason, so running the same selection again sends a batch of only those."""

from __future__ import annotations

import contextlib
import os
import threading
import uuid
from dataclasses import replace
from typing import Any

import pandas as pd
from filelock import FileLock, Timeout

from analysis.core.errors import FinegrainError, InputError, StoreBusyError
from analysis.core.store import Store
from judges import batch_store
from judges.backends.openai_batch import TERMINAL, BatchClient, BatchError, BatchState
from judges.backends.openai_compat import chat_body
from judges.batch_files import Where, record, request_line, split
from judges.batch_tend import (
    FINISH,
    RESUME_HINT,
    Tender,
    client_for,
    finish_in,
    retry,
    stored_before,
    wait,
)
from judges.config import SAME_JUDGE_AS
from judges.outcome import Progress, RunOptions, RunSummary
from judges.plan import Plan
from judges.prices import load_prices, price_of
from judges.records import JUDGE_ROW, START_RUN, UPSERT_RUN_JUDGE, journal_dir, write_records_in

SET_CACHED = "UPDATE runs SET n_cached = ? WHERE run_id = ?"
DEFAULT_OPTIONS = RunOptions()


class BatchRunBusy(FinegrainError):
    title = "Batch run in use"


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
    and dataset get one look first (the plan already leaves out what they ask)."""
    cancel = cancel or threading.Event()
    cfg, dataset = plan.config, plan.selection.dataset
    earlier = resume(
        store, dataset=dataset, judge=cfg.judge, options=replace(options, wait=False), cancel=cancel
    )
    if not plan.calls and earlier:  # all of it was waiting in those batches
        return earlier[-1]
    client = BatchClient(cfg)  # no key, say: nothing is written
    lines = [request_line(c.cache_key, chat_body(cfg, c.messages)) for c in plan.to_call]
    # An oversized request is refused here, before anything is written.
    ranges = split(
        lines, max_requests=options.batch_max_requests, max_bytes=options.batch_max_bytes
    )
    run_id = uuid.uuid4().hex[:16]
    summary = RunSummary(run_id, cfg.judge, len(plan.calls))
    summary.cache_hits = sum(1 for c in plan.calls if plan.is_done(c))
    summary.notes = [line for s in earlier for line in s.lines()[:1] + s.batches]
    with _tending(store, run_id):  # a new run's lock: nobody else has it
        try:
            _write_files(store, run_id, lines, ranges)
            _start(store, plan, run_id, summary, client, ranges, lines, options.prices)
        except BaseException:
            for k in range(1, len(ranges) + 1):
                batch_store.part_file(store, run_id, k).unlink(missing_ok=True)
            raise
        if not ranges:  # the cache answered everything: the run is closed already
            return summary
        tender = Tender(
            store, run_id, options, summary, progress, cancel, {client.base_url: client}
        )
        try:  # every part sent before any is waited on
            for p in batch_store.parts(store, run_id):
                if cancel.is_set():
                    break
                tender.send(p)
        except FinegrainError as e:
            summary.halted = f"{e.message} ({RESUME_HINT})"
            tender.finished = True
        except KeyboardInterrupt:  # the rest waits, planned, for the next tend
            cancel.set()
        return wait([tender], options)[0]


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
    """Tend every batch run with answers still to store (of this dataset and judge, or this run,
    if given), all at once: one summary per run, counting what this call stores. A run another
    process is tending is left to it (its summary says so)."""
    if not store.exists():
        return []
    store.ensure()
    _close_empty_runs(store)
    cancel = cancel or threading.Event()
    out, tenders = [], []
    with contextlib.ExitStack() as held:
        for pending in batch_store.pending_runs(store, dataset, judge, run_id):
            summary = RunSummary(pending.run_id, pending.judge, pending.items)
            if not held.enter_context(_tending(store, pending.run_id)):
                summary.notes.append(
                    f"batch run {pending.run_id} is being tended by another "
                    "process (the app, or another judge command)"
                )
                summary.pending = pending.requests
                out.append(summary)
                continue
            before = stored_before(store, pending.run_id)
            if before:
                summary.notes.append(f"{before:,} answers of this run were stored before")
            tenders.append(Tender(store, pending.run_id, options, summary, progress, cancel))
        out += wait(tenders, options)
    return out


def cancel_run(store: Store, run_id: str) -> list[str]:
    """Ask the service to cancel a run's unfinished batches (what they answered is stored by the
    next tend); a part not yet sent is cancelled here. Lines for a person. Refused while another
    process tends the run (it would send or store meanwhile): stop it first."""
    with _tending(store, run_id) as held:
        if not held:
            raise BatchRunBusy(
                f"Batch run {run_id} is being tended by another process (a judge command, or the "
                "app's Re-judge page): stop it first (Ctrl-C, or Stop waiting), then cancel."
            )
        clients: dict[str, BatchClient] = {}
        try:
            out = [
                line
                for p in batch_store.parts(store, run_id)
                if not p.stored
                for line in _cancel_part(store, p, clients)
            ]
        finally:
            for c in clients.values():
                c.close()
    return out or [f"batch run {run_id} has nothing left to cancel"]


def _cancel_part(store: Store, p: batch_store.Part, clients: dict) -> list[str]:
    if p.status in TERMINAL or p.status == "forgotten":
        return []
    if p.status == "planned":  # never sent: nothing at the service
        batch_store.set_local_status(store, p, "cancelled", "cancelled before submission")
        batch_store.part_file(store, p.run_id, p.part).unlink(missing_ok=True)
        return [f"part {p.part}: cancelled before submission"]
    client = client_for(store, p, clients)
    batch_id = p.batch_id
    if batch_id is None:  # uploaded: the service may have made its batch all the same
        found = retry(lambda: client.find(p.input_file_id), DEFAULT_OPTIONS, None)
        if found is None:
            batch_store.set_local_status(store, p, "cancelled", "cancelled before submission")
            return [f"part {p.part}: cancelled before submission"]
        batch_store.set_state(store, p, found)
        if found.finished:
            return [f"part {p.part} (batch {found.batch_id}): already {found.status}"]
        batch_id = found.batch_id
    try:
        state = client.cancel(batch_id)
    except BatchError as e:  # e.g. it finished meanwhile: the other parts are still cancelled
        return [f"part {p.part} (batch {batch_id}): not cancelled: {e.message}"]
    batch_store.set_state(store, p, state)
    return [f"part {p.part} (batch {batch_id}): {state.status}"]


def forget_run(store: Store, run_id: str) -> list[str]:
    """Give up a run's unfinished parts (a service gone, a key revoked): their requests are
    stored as failed, here, asking the service nothing, so the items can be judged again."""
    with _tending(store, run_id) as held:
        if not held:
            raise BatchRunBusy(
                f"Batch run {run_id} is being tended by another process: stop it "
                "first (Ctrl-C, or Stop waiting), then give it up."
            )
        parts = [p for p in batch_store.parts(store, run_id) if not p.stored]
        if not parts:
            return [f"batch run {run_id} has nothing left to give up"]
        tender = Tender(store, run_id, DEFAULT_OPTIONS, RunSummary(run_id, "", 0))
        why = "given up with finegrain batches --forget"
        for p in parts:
            batch_store.set_local_status(store, p, "forgotten", why)
            state = BatchState(p.batch_id or "", "forgotten", p.input_file_id or "")
            tender.store_part(replace(p, status="forgotten"), state)
        return [
            f"part {p.part}: given up, {p.n_requests:,} requests recorded as failed" for p in parts
        ]


# --- submitting -----------------------------------------------------------------------------


def _write_files(store: Store, run_id: str, lines: list[bytes], ranges: list[range]) -> None:
    """Each part's request file, on disk before the store says the part exists."""
    journal_dir(store).mkdir(parents=True, exist_ok=True)
    for k, rng in enumerate(ranges, start=1):
        path = batch_store.part_file(store, run_id, k)
        with open(path, "wb") as f:
            f.writelines(lines[i] for i in rng)
            f.flush()
            os.fsync(f.fileno())


def _start(
    store: Store,
    plan: Plan,
    run_id: str,
    summary: RunSummary,
    client: BatchClient,
    ranges: list[range],
    lines: list[bytes],
    prices: str | None,
) -> None:
    """In one transaction: the judge and run rows, the answers the cache holds (stored now, no
    request), and every part with the items it asks (closing the run if there is none)."""
    cfg, sel, calls = plan.config, plan.selection, plan.to_call
    where = Where(run_id, cfg.judge, sel.dataset, plan.scales)
    reused = [record(where, c.item.instance_id, c.item.model, c.item.skills, c.cache_key,
                     plan.reuse[c.cache_key][0], cached=True) for c in plan.to_reuse]  # fmt: skip
    shared = sum(len(plan.sharing(c)) - 1 for c in calls)  # asked once, stored for each item
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
            UPSERT_RUN_JUDGE,
            [
                cfg.judge,
                SAME_JUDGE_AS.get(cfg.backend, cfg.backend),
                cfg.model,
                cfg.prompt_version,
                cfg.params_json(),
            ],
        )
        source = batch_store.BATCH_SOURCE.format(dataset=sel.dataset)
        con.execute(START_RUN, [run_id, cfg.judge, sel.dataset, source, len(plan.calls), None])
        write_records_in(con, {run_id: reused})
        con.execute(SET_CACHED, [summary.cache_hits + len(reused) + shared, run_id])
        for k, rng in enumerate(ranges, start=1):
            items = pd.DataFrame(
                [
                    (calls[i].cache_key, s.item.instance_id, s.item.model, list(s.item.skills))
                    for i in rng
                    for s in plan.sharing(calls[i])
                ],
                columns=["custom_id", "instance_id", "model", "skills"],
            )
            n_bytes = sum(len(lines[i]) for i in rng)
            batch_store.add_part(con, run_id, k, client, items, n_bytes)
        if not ranges:
            finish_in(con, run_id, price_of(cfg.model, load_prices(prices), batch=True))
    summary.cache_hits += len(reused)


class _tending:
    """Holds ``<db>.journal/<run_id>.batch.lock`` while this process tends the run: the app and a
    judge command never both send, poll or store one run. ``as held``: False when another has
    it. A run with nothing left to store leaves no lock file behind."""

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
        try:  # deleted while held, as the journal's lock files are (judges/records.py)
            if not batch_store.pending_runs(self.store, run_id=self.run_id):
                self.path.unlink(missing_ok=True)
        except (FinegrainError, OSError):
            pass  # kept: harmless, and reused by the run's next tend
        finally:
            self.lock.release()


def _close_empty_runs(store: Store) -> None:
    """A batch run killed before its parts were written has nothing to send or wait for: it is
    marked interrupted (its items are asked again by the next run)."""
    for run_id in batch_store.empty_runs(store):
        with _tending(store, run_id) as held:
            if held:
                try:
                    with store.write() as con:
                        con.execute(FINISH, ["interrupted", run_id])
                except StoreBusyError:
                    return

"""Tending a batch run (judges/batch_run.py): each part looked at until the service has
finished it (submitted first if it never was: the batch the service already has for its file,
else a new one), then its output and error files downloaded and every request stored, answered
or failed with the service's reason, with the part's "stored" mark in one transaction; the run
row closed once every part is stored. Answers are read and parsed exactly as live ones."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from analysis.core.errors import FinegrainError, InputError
from analysis.core.store import Store
from judges import batch_store
from judges.backends.openai_batch import BatchClient, BatchError, BatchState
from judges.batch_files import read_results
from judges.config import JudgeConfig, default
from judges.outcome import Progress, RunOptions, RunSummary
from judges.parsing import parse_judgment
from judges.prices import Price, load_prices, price_of
from judges.prompts import rubrics_from_store
from judges.records import REFRESH_RUN_COUNTS, CallRecord, write_records_in

FINISH = "UPDATE runs SET status = ?, finished_at = current_timestamp WHERE run_id = ?"
RUN_ROW = "SELECT judge, dataset, n_cached FROM runs WHERE run_id = ?"
MODEL_OF = "SELECT model FROM judges WHERE judge = ?"
SET_COST = """
UPDATE runs SET cost_usd = (prompt_tokens * ? + completion_tokens * ?) / 1e6 WHERE run_id = ?
"""
UNKNOWN_COST = "UPDATE runs SET cost_usd = NULL WHERE run_id = ?"
RESUME_HINT = (
    "the batches go on at the service; `finegrain judge --resume` or Resume on the Re-judge "
    "page stores their answers later, submitting nothing twice"
)

# Why a request has no line in a finished batch's files, by the batch's status.
UNANSWERED = {
    "cancelled": "not run: the batch was cancelled",
    "expired": "batch_expired: not run within the batch service's 24 h window",
}


def create_batch(
    store: Store,
    p: batch_store.Part,
    client: BatchClient,
    options: RunOptions,
    cancel: threading.Event | None,
    *,
    fresh: bool = False,
) -> BatchState:
    """The part's batch: the one the service already has for its file, else a new one.
    ``fresh``: the file was uploaded just now, so no batch can have it yet."""
    assert p.input_file_id is not None
    state = None if fresh else retry(lambda: client.find(p.input_file_id), options, cancel)
    if state is None:
        metadata = {"finegrain_run": p.run_id, "part": str(p.part)}
        try:
            state = client.create(p.input_file_id, metadata)
        except BatchError as e:
            if e.retryable:  # it may exist all the same: the next tend looks for it again
                raise
            batch_store.set_local_status(store, p, "failed", e.message)
            return BatchState("", "failed", p.input_file_id, errors=e.message)
    batch_store.set_state(store, p, state)
    return state


# --- tending --------------------------------------------------------------------------------


def tend(
    store: Store,
    run_id: str,
    options: RunOptions,
    summary: RunSummary,
    progress: Progress | None,
    cancel: threading.Event | None,
    clients: dict[str, BatchClient],
) -> RunSummary:
    """Poll the run's parts until each is finished and stored (or, without ``options.wait``,
    once); then close the run row. The run's batches are left running when the process stops
    waiting; a service that cannot be reached stops the tend with the reason (``halted``)."""
    cancel = cancel or threading.Event()
    judge, dataset, _ = run_row(store, run_id)
    scales = {s: (r.scale_min, r.scale_max) for s, r in rubrics_from_store(store, dataset).items()}
    started = time.perf_counter()
    try:
        while summary.halted is None:
            parts = batch_store.parts(store, run_id)
            for p in parts:
                if not p.stored:
                    _step(store, p, clients, options, cancel, summary, (judge, dataset, scales))
            parts = batch_store.parts(store, run_id)
            _show(summary, parts, progress)
            if all(p.stored for p in parts) or not options.wait or cancel.is_set():
                break
            cancel.wait(options.poll_s)
    except KeyboardInterrupt:  # Ctrl-C: stop waiting; the batches go on at the service
        summary.cancelled = True
    except FinegrainError as e:  # the service unreachable, the store held by an import …
        summary.halted = f"{e.message} ({RESUME_HINT})"
    finally:
        for c in clients.values():
            c.close()
    summary.seconds = time.perf_counter() - started
    summary.cancelled = summary.cancelled or cancel.is_set()  # stopped waiting (not the batches)
    parts = batch_store.parts(store, run_id)
    _show(summary, parts, None)
    price = batch_price(store, judge, options.prices)
    summary.cost_usd = (
        price.cost(summary.prompt_tokens, summary.completion_tokens) if price else None
    )
    if parts and all(p.stored for p in parts):
        finish(store, run_id, parts, options.prices)
    return summary


def _step(store, p, clients, options, cancel, summary, where) -> None:
    """One look at a part: submit it if it never was, read its state, store it once finished."""
    client = client_for(store, p, clients)
    if p.status == "uploaded":
        state = create_batch(store, p, client, options, cancel)
    elif p.batch_id and p.status not in ("completed", "failed", "expired", "cancelled"):
        state = retry(lambda: client.get(p.batch_id), options, cancel)
        if (state.status, state.completed, state.failed) != (p.status, p.n_completed, p.n_failed):
            batch_store.set_state(store, p, state)
    else:  # finished (by the service, or cancelled or failed before it had the batch)
        state = BatchState(
            p.batch_id or "",
            p.status,
            p.input_file_id or "",
            p.output_file_id,
            p.error_file_id,
            p.n_requests,
            p.n_completed,
            p.n_failed,
            p.errors,
        )
    if state.finished:
        _store_part(store, p, client, state, options, cancel, summary, where)


def _store_part(store, p, client, state: BatchState, options, cancel, summary, where) -> None:
    """Every request of a finished part, answered or failed with its reason, stored with the
    part's "stored" mark in one transaction."""
    judge, dataset, scales = where
    answers: dict[str, Any] = {}
    for file_id in (state.output_file_id, state.error_file_id):
        if file_id:
            data = retry(lambda f=file_id: client.download(f), options, cancel)
            found, problems = read_results(data)
            for a in found:
                answers.setdefault(a.custom_id, a)
            summary.failures += [f"file {file_id}: {m}" for m in problems[:5]]
    missing = UNANSWERED.get(state.status) or (
        f"the batch failed: {state.errors}"
        if state.status == "failed"
        else "no answer in the batch's files"
    )
    records = []
    for cid, items in batch_store.requests(store, p).items():
        a = answers.get(cid)
        for i, (instance_id, model, skills) in enumerate(items):
            if a is None or a.text is None:  # an empty answer's tokens are paid all the same
                error, pt, ct = (
                    (a.error, a.prompt_tokens, a.completion_tokens) if a else (missing, 0, 0)
                )
                pt, ct = (pt, ct) if i == 0 else (0, 0)
                row = (p.run_id, dataset, instance_id, model, judge, cid, None, None, "error")
                records.append(CallRecord(*row, error, None, pt, ct))
            else:
                tokens = (a.prompt_tokens, a.completion_tokens) if i == 0 else (0, 0)
                records.append(
                    record(
                        p.run_id,
                        dataset,
                        judge,
                        instance_id,
                        model,
                        skills,
                        cid,
                        a.text,
                        scales,
                        tokens=tokens,
                        cached=i > 0,
                    )
                )
    with store.write() as con:
        write_records_in(con, {p.run_id: records})
        con.execute(batch_store.MARK_STORED, [p.run_id, p.part])
    _tally(summary, records)


def record(
    run_id,
    dataset,
    judge,
    instance_id,
    model,
    skills,
    cid,
    text,
    scales,
    *,
    tokens=(0, 0),
    cached=False,
) -> CallRecord:
    parsed = parse_judgment(text, skills, scales)
    return CallRecord(
        run_id,
        dataset,
        instance_id,
        model,
        judge,
        cid,
        text,
        parsed.rationale,
        parsed.status,
        parsed.error,
        None,
        int(tokens[0]),
        int(tokens[1]),
        parsed.scores,
        cached,
    )


def _tally(s: RunSummary, records: list[CallRecord]) -> None:
    for r in records:
        if r.parse_status == "error":
            s.errors += 1
            if len(s.failures) < 20:
                s.failures.append(f"{r.instance_id}/{r.model}: {r.error}")
        elif r.cached:
            s.cache_hits += 1
        elif r.parse_status == "ok":
            s.ok += 1
        else:
            s.failed += 1
        s.prompt_tokens += r.prompt_tokens
        s.completion_tokens += r.completion_tokens


def _show(summary: RunSummary, parts: list[batch_store.Part], progress: Progress | None) -> None:
    summary.batches = [p.line(len(parts)) for p in parts]
    waiting = [p for p in parts if not p.stored]
    summary.at_service = sum(p.n_completed + p.n_failed for p in waiting)
    summary.pending = sum(p.n_requests for p in waiting)
    if progress:
        progress(summary)


def batch_price(store: Store, judge: str, prices: str | None) -> Price | None:
    with store.read() as con:
        model = (con.execute(MODEL_OF, [judge]).fetchone() or [""])[0]
    return price_of(model or "", load_prices(prices), batch=True)


def finish(store: Store, run_id: str, parts: list[batch_store.Part], prices: str | None) -> None:
    """Counts, tokens and cost from what is stored; the status from how the parts ended."""
    judge, _, n_cached = run_row(store, run_id)
    ended = [p.status for p in parts]
    status = "cancelled" if "cancelled" in ended else "complete"
    status = "failed" if ended and all(s == "failed" for s in ended) else status
    price = batch_price(store, judge, prices)
    with store.write() as con:
        con.execute(REFRESH_RUN_COUNTS, [n_cached or 0, None, run_id])
        if price is None:
            con.execute(UNKNOWN_COST, [run_id])
        else:
            con.execute(SET_COST, [price.input_per_m, price.output_per_m, run_id])
        con.execute(FINISH, [status, run_id])


# --- plumbing -------------------------------------------------------------------------------


def run_row(store: Store, run_id: str) -> tuple[str, str, int | None]:
    with store.read() as con:
        row = con.execute(RUN_ROW, [run_id]).fetchone()
    if row is None:
        raise InputError("batch run", None, None, f"no run {run_id} in the store")
    return row


def client_for(store: Store, p: batch_store.Part, clients: dict[str, BatchClient]) -> BatchClient:
    """The service a part was sent to, with the key it was given then (none if none was)."""
    if p.base_url not in clients:
        judge = run_row(store, p.run_id)[0]
        with store.read() as con:
            model = (con.execute(MODEL_OF, [judge]).fetchone() or ["unknown"])[0]
        config = JudgeConfig(
            backend="openai-batch",
            model=model,
            base_url=p.base_url,
            trust_base_url=p.key_env is not None,
            api_key_env=p.key_env or default("api_key_env"),
        )
        clients[p.base_url] = BatchClient(config)
    return clients[p.base_url]


def retry(call: Callable[[], Any], options: RunOptions, cancel: threading.Event | None) -> Any:
    """A read (or an upload) tried again with backoff while the service's error is transient."""
    attempt = 0
    while True:
        try:
            return call()
        except BatchError as e:
            if not e.retryable or attempt >= options.max_retries:
                raise
        wait = min(options.backoff_cap_s, options.backoff_s * 2**attempt)
        if cancel is not None and cancel.wait(wait):
            raise BatchError("stopped while the batch service was not answering", retryable=False)
        if cancel is None:
            time.sleep(wait)
        attempt += 1

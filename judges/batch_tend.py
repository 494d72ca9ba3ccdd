"""Tending a batch run (judges/batch_run.py): each part looked at until the service has finished
it (sent first if it never was: uploaded from its local copy, then the batch the service already
has for its file, else a new one), then its output and error files downloaded and every request
stored, answered or failed with the service's reason, with the part's "stored" mark in one
transaction; the last part's transaction also closes the run row. Answers are read and parsed
exactly as live ones."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable
from typing import Any

from analysis.core.errors import FinegrainError, InputError
from analysis.core.store import Store
from judges import batch_store
from judges.backends.openai_batch import TERMINAL, BatchClient, BatchError, BatchState
from judges.batch_files import UNANSWERED, Where, read_results, records, tally
from judges.config import JudgeConfig, default
from judges.outcome import Progress, RunOptions, RunSummary
from judges.prices import Price, load_prices, price_of
from judges.prompts import rubrics_from_store
from judges.records import REFRESH_RUN_COUNTS, write_records_in

FINISH = "UPDATE runs SET status = ?, finished_at = current_timestamp WHERE run_id = ?"
RUN_ROW = "SELECT judge, dataset, n_cached FROM runs WHERE run_id = ?"
MODEL_OF = "SELECT model FROM judges WHERE judge = ?"
PART_STATUSES = "SELECT status FROM batches WHERE run_id = ?"
SET_COST = """
UPDATE runs SET cost_usd = (prompt_tokens * ? + completion_tokens * ?) / 1e6 WHERE run_id = ?
"""
UNKNOWN_COST = "UPDATE runs SET cost_usd = NULL WHERE run_id = ?"
STORED_BEFORE = "SELECT count(*) FROM judgments WHERE run_id = ?"

RESUME_HINT = (
    "what was sent goes on at the service; `finegrain judge --resume` or Resume on the Re-judge "
    "page sends the rest and stores the answers, submitting nothing twice"
)
TOKEN_LIMIT_HINT = (
    "the service refused a batch over the organisation's queued-token limit for this model: "
    "send fewer requests per batch (--max-batch-requests) or wait for other batches to end"
)


class Tender:
    """One batch run looked after by this process: its parts looked at, finished ones stored."""

    def __init__(
        self,
        store: Store,
        run_id: str,
        options: RunOptions,
        summary: RunSummary,
        progress: Progress | None = None,
        cancel: threading.Event | None = None,
        clients: dict[str, BatchClient] | None = None,
    ) -> None:
        self.store, self.run_id, self.options, self.summary = store, run_id, options, summary
        self.progress, self.cancel = progress, cancel or threading.Event()
        self.clients = clients if clients is not None else {}
        judge, dataset, _ = run_row(store, run_id)
        rubrics = rubrics_from_store(store, dataset)
        scales = {s: (r.scale_min, r.scale_max) for s, r in rubrics.items()}
        self.where = Where(run_id, judge, dataset, scales)
        self.price = batch_price(store, judge, options.prices)
        self.finished = False
        self.started = time.perf_counter()

    def look(self) -> bool:
        """One look at every part not stored yet; True when the run needs no more looks (all
        stored, or the tend halted: ``summary.halted`` says why)."""
        if self.finished:
            return True
        try:
            for p in batch_store.parts(self.store, self.run_id):
                if not p.stored:
                    self._step(p)
            parts = batch_store.parts(self.store, self.run_id)
        except FinegrainError as e:  # the service unreachable, the store held by an import …
            self.summary.halted = f"{e.message} ({RESUME_HINT})"
            self.finished = True
            return True
        show(self.summary, parts, self.progress)
        self.finished = all(p.stored for p in parts)
        return self.finished

    def send(self, p: batch_store.Part) -> BatchState:
        """A part never sent: uploaded from its local copy, then its batch made."""
        fresh = False
        if p.status == "planned":
            path = batch_store.part_file(self.store, p.run_id, p.part)
            try:
                data = path.read_bytes()
            except OSError:
                why = f"its request file {path} is gone: run the same selection again to send it"
                batch_store.set_local_status(self.store, p, "failed", why)
                return BatchState("", "failed", "", errors=why)
            client = client_for(self.store, p, self.clients)
            file_id = retry(lambda: client.upload(path.name, data), self.options, self.cancel)
            p, fresh = batch_store.set_uploaded(self.store, p, file_id), True
        state = create_batch(
            self.store,
            p,
            client_for(self.store, p, self.clients),
            self.options,
            self.cancel,
            fresh=fresh,
        )
        if state.batch_id:  # the service has the file: the local copy is not needed any more
            batch_store.part_file(self.store, p.run_id, p.part).unlink(missing_ok=True)
            self.summary.calls += p.n_requests
        return state

    def _step(self, p: batch_store.Part) -> None:
        """One look at a part: send it if it never was, read its state, store it once finished."""
        if p.status in ("planned", "uploaded"):
            if self.cancel.is_set():  # stopped: the next tend sends it
                return
            state = self.send(p)
        elif p.status not in TERMINAL and p.status not in UNANSWERED:
            client = client_for(self.store, p, self.clients)
            state = retry(lambda: client.get(p.batch_id), self.options, self.cancel)
            if (state.status, state.completed, state.failed) != (
                p.status,
                p.n_completed,
                p.n_failed,
            ):
                batch_store.set_state(self.store, p, state)
        else:  # finished (by the service, or cancelled, failed or given up before it had it)
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
        if state.finished or state.status in UNANSWERED:
            self.store_part(p, state)

    def store_part(self, p: batch_store.Part, state: BatchState) -> None:
        """Every request of a finished part, answered or failed with its reason, stored with the
        part's "stored" mark (and, for the run's last part, the run's close) in one transaction."""
        answers, problems = self._answers(p, state)
        requests = batch_store.requests(self.store, p)
        recs = [r for cid, items in requests.items()
                for r in records(self.where, cid, items, answers.get(cid), state.status,
                                 state.errors)]  # fmt: skip
        unknown = len(set(answers) - set(requests))
        notes = []
        if problems:
            notes.append(
                f"part {p.part}: {len(problems)} unreadable line(s) in the service's "
                f"files ({problems[0]}); their requests are recorded as failed"
            )
        if unknown:
            notes.append(f"part {p.part}: {unknown} answer(s) to requests it did not send, ignored")
        notes += [TOKEN_LIMIT_HINT] if "token_limit_exceeded" in (state.errors or "") else []
        with self.store.write() as con:
            write_records_in(con, {p.run_id: recs})
            con.execute(batch_store.MARK_STORED, [p.run_id, p.part])
            if con.execute(batch_store.UNSTORED_PARTS, [p.run_id]).fetchone()[0] == 0:
                finish_in(con, p.run_id, self.price)
        batch_store.part_file(self.store, p.run_id, p.part).unlink(missing_ok=True)
        self.summary.notes += notes
        tally(self.summary, recs)

    def _answers(self, p: batch_store.Part, state: BatchState) -> tuple[dict[str, Any], list]:
        answers: dict[str, Any] = {}
        problems: list[str] = []
        client = None
        for file_id in (state.output_file_id, state.error_file_id):
            if file_id:
                client = client or client_for(self.store, p, self.clients)
                data = retry(lambda f=file_id, c=client: c.download(f), self.options, self.cancel)
                found, bad = read_results(data)
                for a in found:
                    answers.setdefault(a.custom_id, a)
                problems += bad
        return answers, problems

    def close(self) -> RunSummary:
        for c in self.clients.values():
            c.close()
        s = self.summary
        s.seconds = time.perf_counter() - self.started
        s.cancelled = s.cancelled or self.cancel.is_set()  # stopped waiting (not the batches)
        s.cost_usd = self.price.cost(s.prompt_tokens, s.completion_tokens) if self.price else None
        with contextlib.suppress(FinegrainError):  # a busy store: the last look's lines stay
            parts = batch_store.parts(self.store, self.run_id)
            show(s, parts, None)
            unsent = sum(p.n_requests for p in parts if p.status in ("planned", "uploaded"))
            if unsent:
                s.notes.append(
                    f"{unsent:,} requests are not sent yet: `finegrain judge --resume` "
                    "(or Resume on the Re-judge page) sends them"
                )
        return s


def wait(tenders: list[Tender], options: RunOptions) -> list[RunSummary]:
    """Look at every run in turn (none waits for another), every ``poll_s``, until each is
    stored or has halted (or once, without ``options.wait``, or until the cancel event)."""
    cancel = tenders[0].cancel if tenders else threading.Event()
    try:
        while not all([t.look() for t in tenders]) and options.wait and not cancel.is_set():
            cancel.wait(options.poll_s)
    except KeyboardInterrupt:  # Ctrl-C: stop waiting; the batches go on at the service
        for t in tenders:
            t.summary.cancelled = True
    return [t.close() for t in tenders]


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


def show(summary: RunSummary, parts: list[batch_store.Part], progress: Progress | None) -> None:
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


def finish_in(con: Any, run_id: str, price: Price | None) -> None:
    """Close the run row in the caller's transaction: counts, tokens and cost from what is
    stored, the status from how its parts ended."""
    n_cached = con.execute(RUN_ROW, [run_id]).fetchone()[2]
    ended = [s for (s,) in con.execute(PART_STATUSES, [run_id]).fetchall()]
    con.execute(REFRESH_RUN_COUNTS, [n_cached or 0, None, run_id])
    if price is None:
        con.execute(UNKNOWN_COST, [run_id])
    else:
        con.execute(SET_COST, [price.input_per_m, price.output_per_m, run_id])
    con.execute(FINISH, [run_status(ended), run_id])


def run_status(ended: list[str]) -> str:
    """A finished batch run's status from its parts': failed when every part failed; cancelled
    (or given up) or expired when one was; else complete."""
    if ended and all(s == "failed" for s in ended):
        return "failed"
    if any(s in ("cancelled", "forgotten") for s in ended):
        return "cancelled"
    return "expired" if "expired" in ended else "complete"


# --- plumbing -------------------------------------------------------------------------------


def run_row(store: Store, run_id: str) -> tuple[str, str, int | None]:
    with store.read() as con:
        row = con.execute(RUN_ROW, [run_id]).fetchone()
    if row is None:
        raise InputError("batch run", None, None, f"no run {run_id} in the store")
    return row


def stored_before(store: Store, run_id: str) -> int:
    with store.read() as con:
        return con.execute(STORED_BEFORE, [run_id]).fetchone()[0]


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
        wait_s = min(options.backoff_cap_s, options.backoff_s * 2**attempt)
        if cancel is not None and cancel.wait(wait_s):
            raise BatchError("stopped while the batch service was not answering", retryable=False)
        if cancel is None:
            time.sleep(wait_s)
        attempt += 1

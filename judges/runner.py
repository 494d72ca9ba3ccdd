"""The judging runner: bounded concurrency, rate limits, retries with backoff that honour
Retry-After, cancellation, a content cache, and progress. Every answer is journalled as it
arrives and stored in small transactions; a killed run is recovered and resumed by running the
same selection again (only calls without a stored answer are made). A journal that cannot be
written stops the run at once (marked failed; what was answered is stored directly); a store
another process holds is waited for (``RunOptions.store_wait_s``), and what it still refuses stays
in the journal, counted in the summary (``RunSummary.incomplete``) for the caller to report."""

from __future__ import annotations

import asyncio
import contextlib
import random
import threading
import time
import uuid

from analysis.core.errors import FinegrainError, InputError, StoreBusyError
from analysis.core.store import Store
from judges import backends, endpoints
from judges.config import JudgeConfig
from judges.limits import RateLimiter
from judges.outcome import Progress, RunOptions, RunSummary
from judges.parsing import parse_judgment
from judges.plan import BATCH_BACKEND, Call, Plan, Selection, plan_run
from judges.prices import load_prices, price_of
from judges.records import (
    JUDGE_ROW,
    REFRESH_RUN_COUNTS,
    START_RUN,
    UPSERT_RUN_JUDGE,
    CallRecord,
    Journal,
    JournalError,
    live_runs,
    recover,
    write_records,
)
from judges.repeat import repeat_source

FINISH_RUN = """
UPDATE runs SET status = ?, finished_at = current_timestamp WHERE run_id = ?
"""

DEFAULT_OPTIONS = RunOptions()


def run(
    store: Store,
    config: JudgeConfig,
    selection: Selection,
    options: RunOptions = DEFAULT_OPTIONS,
    *,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
) -> RunSummary:
    """Plan and run (blocking). Recovers killed runs first, so a rerun resumes them."""
    endpoints.check(config, options.endpoints)
    backends.check(config)
    store.ensure()
    recovered = recover(store)
    live = live_runs(store, config.judge, selection.dataset)
    if live:
        raise InputError(
            "judge run", None, None,
            f"judge '{config.judge}' is already running on '{selection.dataset}' (run "
            f"{', '.join(live)}); wait for it or cancel it first.",
        )  # fmt: skip
    plan = plan_run(
        store, config, selection, concurrency=options.concurrency, prices=options.prices
    )
    if config.backend == BATCH_BACKEND:
        from judges.batch_run import submit

        summary = submit(store, plan, options, progress=progress, cancel=cancel)
    else:
        summary = asyncio.run(execute(store, plan, options, progress=progress, cancel=cancel))
    summary.recovered = recovered
    return summary


async def execute(
    store: Store,
    plan: Plan,
    options: RunOptions,
    *,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
) -> RunSummary:
    return await _Run(store, plan, options, progress, cancel or threading.Event()).go()


class _Run:
    def __init__(self, store, plan: Plan, options: RunOptions, progress, cancel) -> None:
        self.store, self.plan, self.opt = store, plan, options
        self.progress, self.cancel = progress, cancel
        cfg = plan.config
        self.run_id = uuid.uuid4().hex[:16]
        self.summary = RunSummary(self.run_id, cfg.judge, len(plan.calls))
        self.summary.cache_hits = sum(1 for c in plan.calls if plan.is_done(c))
        self.pending: list[CallRecord] = []
        self.recorded: set[tuple[str, str]] = set()
        self.price = (
            None
            if cfg.backend == "transformers"
            else price_of(cfg.model, load_prices(options.prices))
        )
        self.limiter = RateLimiter(options.rpm, options.tpm)
        self.flush_lock = asyncio.Lock()
        self.busy_only = True  # the last failed store write was a busy store (worth a wait)
        self.tasks: list[asyncio.Task] = []
        self.halt = threading.Event()  # the journal failed: stop calling (not a user's cancel)
        self.unjournalled: list[CallRecord] = []  # answered, in memory only until stored

    async def go(self) -> RunSummary:
        started = time.perf_counter()
        # The journal first: a run that cannot journal makes no call and writes no run row.
        self.journal = Journal(self.store, self.run_id)
        self.summary.journal = str(self.journal.path)
        try:
            self._start()
        except BaseException:
            self.journal.close(remove=True)
            raise
        status, stored = "failed", False
        try:
            self._reuse_cached()
            await self._call_all()
            status = "cancelled" if self.cancel.is_set() else "complete"
        except asyncio.CancelledError:  # Ctrl-C in the CLI: keep what arrived
            self.cancel.set()
            status = "cancelled"
            raise
        finally:
            if self.summary.halted:
                status = "failed"
            self.summary.cancelled = self.cancel.is_set() and not self.summary.halted
            try:
                stored = await self._store_the_rest() and self._finish(status)
            finally:
                self.summary.seconds = time.perf_counter() - started
                # Unstored answers stay in the journal; the next run recovers them.
                self.journal.close(remove=stored)
        return self.summary

    def _stopped(self) -> bool:
        return self.cancel.is_set() or self.halt.is_set()

    def _start(self) -> None:
        cfg, sel = self.plan.config, self.plan.selection
        with self.store.write() as con:
            row = con.execute(JUDGE_ROW, [cfg.judge]).fetchone()
            if row and (row[0] != "llm" or row[1] not in backends.BACKENDS):
                raise InputError(
                    "judge name", None, None,
                    f"'{cfg.judge}' already names a {row[0]} scorer ({row[1]}); its scores would "
                    "be replaced. Choose another name.",
                )  # fmt: skip
            if sel.repeat is None:  # a repeat keeps the judge's stored configuration as it is
                con.execute(
                    UPSERT_RUN_JUDGE,
                    [cfg.judge, cfg.backend, cfg.model, cfg.prompt_version, cfg.params_json()],
                )
                source = f"judge run on {sel.dataset}"
            else:
                source = repeat_source(sel.dataset, sel.repeat, cfg.temperature)
            con.execute(
                START_RUN,
                [self.run_id, cfg.judge, sel.dataset, source, len(self.plan.calls), sel.repeat],
            )

    def _reuse_cached(self) -> None:
        """A prompt answered before (another item, another judge name): stored again, no call."""
        for call in self.plan.to_reuse:
            raw, _pt, _ct = self.plan.reuse[call.cache_key]
            self._record(call, raw, None, 0.0, 0, 0, cached=True)

    async def _call_all(self) -> None:
        todo = self.plan.to_call
        if not todo:
            self._tick()
            return
        backend, slots = self._backend()
        sem = asyncio.Semaphore(max(1, slots))
        started = time.perf_counter()
        stop = asyncio.Event()
        flusher = asyncio.create_task(self._flush_loop(stop))
        watcher = asyncio.create_task(self._watch_cancel())
        try:
            self.tasks = [asyncio.create_task(self._one(backend, sem, c)) for c in todo]
            await asyncio.gather(*self.tasks, return_exceptions=True)
            self.summary.call_seconds = time.perf_counter() - started
        finally:
            watcher.cancel()
            stop.set()  # never cancel a flush half-way: its batch would be dropped
            await flusher
            if isinstance(backend, endpoints.PoolBackend):
                self.summary.endpoint_status = backend.status()
            await backend.aclose()

    def _backend(self) -> tuple[backends.Backend, int]:
        """The judge's backend and how many calls it takes at once: a pool of endpoints
        (judges/endpoints.py) when the run has several: their concurrencies added up."""
        if not self.opt.endpoints:
            c = self.opt.concurrency
            return backends.create(self.plan.config, concurrency=c), c
        pool = endpoints.create(self.plan.config, self.opt.endpoints, probe_s=self.opt.probe_s,
                                notes=self.summary.endpoints)  # fmt: skip
        return pool, pool.concurrency

    async def _watch_cancel(self) -> None:
        while not self._stopped():
            await asyncio.sleep(0.05)
        for t in self.tasks:
            t.cancel()  # in-flight requests are aborted; nothing half-done is stored

    async def _one(self, backend, sem: asyncio.Semaphore, call: Call) -> None:
        try:
            await self._ask(backend, sem, call)
        except asyncio.CancelledError:
            raise
        except Exception as e:  # noqa: BLE001 - a bug or a surprise: recorded, never dropped
            for c in self.plan.sharing(call):
                if not self._recorded(c):
                    self._record(c, None, f"unexpected {type(e).__name__}", None, 0, 0)

    async def _ask(self, backend, sem: asyncio.Semaphore, call: Call) -> None:
        async with sem:
            error, attempt = None, 0
            while not self._stopped():
                await self.limiter.acquire(call.est_prompt_tokens + call.est_completion_tokens)
                if self._stopped():  # stopped while waiting for the rate limit: send nothing
                    break
                self.summary.calls += 1
                try:
                    done = await backend.complete(call.messages)
                    if not done.text.strip():  # a glitch, not an answer: ask again
                        raise backends.CallError("empty output", retryable=True)
                except backends.CallError as e:
                    error = e
                    if not e.retryable or attempt >= self.opt.max_retries:
                        break
                    if e.retry_after:
                        self.limiter.pause(e.retry_after)
                    await asyncio.sleep(self._backoff(attempt, e.retry_after))
                    attempt += 1
                    continue
                for i, c in enumerate(self.plan.sharing(call)):  # tokens paid once
                    pt, ct = (done.prompt_tokens, done.completion_tokens) if i == 0 else (0, 0)
                    self._record(c, done.text, None, done.latency_ms, pt, ct, cached=i > 0)
                return
            if error is not None and not self._stopped():
                for c in self.plan.sharing(call):
                    self._record(c, None, error.message, None, 0, 0)

    def _backoff(self, attempt: int, retry_after: float | None) -> float:
        wait = min(self.opt.backoff_cap_s, self.opt.backoff_s * 2**attempt)
        wait *= random.uniform(0.5, 1.0)  # jitter: concurrent retries do not stampede
        # A server's Retry-After wins over a shorter backoff (a longer one than the backend
        # accepts has failed the item already).
        return max(wait, retry_after or 0.0)

    def _recorded(self, call: Call) -> bool:
        return (call.item.instance_id, call.item.model) in self.recorded

    def _record(self, call: Call, text, error, latency, pt, ct, *, cached: bool = False) -> None:
        """Journal one item's outcome first (it was paid for), then count it."""
        item, s = call.item, self.summary
        pt, ct = int(pt or 0), int(ct or 0)  # a server may send null usage
        status, scores, rationale = "error", {}, None
        if error is None:
            status, scores, rationale, error = self._outcome(call, text)
        rec = CallRecord(
            self.run_id, item.dataset, item.instance_id, item.model, self.plan.config.judge,
            call.cache_key, text, rationale, status, error, latency, pt, ct, scores, cached,
        )  # fmt: skip
        self._journal(rec)
        self.pending.append(rec)
        self.recorded.add((item.instance_id, item.model))
        if status == "error":
            s.errors += 1
            if len(s.failures) < 20:
                s.failures.append(f"{item.instance_id}/{item.model}: {error}")
        elif cached:
            s.cache_hits += 1
        elif status == "ok":
            s.ok += 1
        else:
            s.failed += 1
        s.prompt_tokens += pt
        s.completion_tokens += ct
        if self.price is not None:
            s.cost_usd = self.price.cost(s.prompt_tokens, s.completion_tokens)
        elif self.plan.config.backend != "transformers":
            s.cost_usd = None  # not in the price table: unknown, not free
        self._tick()

    def _outcome(self, call: Call, text: str) -> tuple[str, dict, str | None, str | None]:
        """(status, scores, rationale, error) of an answer: a judgment, parsed. A run of another
        kind of call (judges/rewrite.py) reads its answers its own way here."""
        p = parse_judgment(text, call.item.skills, self.plan.scales)
        return p.status, p.scores, p.rationale, p.error

    def _journal(self, rec: CallRecord) -> None:
        """Journal one answer; if the journal cannot be written, stop calling at once and keep
        the answer in memory to be stored directly (or journalled again at the end)."""
        if self.halt.is_set():
            self.unjournalled.append(rec)
            return
        try:
            self.journal.append(rec)
        except JournalError as e:
            self.unjournalled.append(rec)
            self.summary.halted = e.message
            self.halt.set()

    def _tick(self) -> None:
        if self.progress:
            self.progress(self.summary)

    async def _flush_loop(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), self.opt.flush_s)
            await self._flush()

    async def _flush(self) -> bool:
        async with self.flush_lock:  # one writer at a time, in order
            batch, self.pending = self.pending, []
            if not batch:
                return True
            try:
                await asyncio.to_thread(self._store_batch, batch)
            except Exception as e:  # noqa: BLE001 - e.g. the app reading: keep them for next time
                self.pending = batch + self.pending
                # Only a busy store is worth waiting for; a full disk or a broken file is not.
                self.busy_only = isinstance(e, StoreBusyError)
                self.summary.store_busy = (
                    e.message if isinstance(e, FinegrainError) else (f"{type(e).__name__}: {e}")
                )
                return False
            return True

    def _store_batch(self, batch: list[CallRecord]) -> None:
        try:
            self.journal.sync()  # on disk before the store says it has them
        except JournalError as e:  # the store becomes their only copy: stop calling
            self.summary.halted = self.summary.halted or e.message
            self.halt.set()
        write_records(self.store, batch)

    async def _store_the_rest(self) -> bool:
        """Store what is still pending, waiting (bounded) for a store another process holds.
        What cannot be stored stays in the journal (journalled again if it was never there);
        the summary says how many, and False keeps the journal for the next run to recover."""
        # A user's cancel waits only for answers the journal does not hold.
        patience = self.opt.store_wait_s if self.unjournalled or not self.cancel.is_set() else 0
        start = time.monotonic()
        self.deadline = start + patience
        while not await self._flush() and self.busy_only and time.monotonic() < self.deadline:
            await asyncio.sleep(min(1.0, max(0.0, self.deadline - time.monotonic())))
        if self.summary.store_busy:
            self.summary.waited_s = time.monotonic() - start
        if not self.pending:
            return True
        self._keep(self.pending)
        return False

    def _keep(self, batch: list[CallRecord]) -> None:
        memory_only = {id(r) for r in self.unjournalled}
        lost = 0
        for rec in batch:
            if id(rec) in memory_only:
                try:
                    self.journal.append(rec)
                except JournalError:
                    lost += 1
        self.summary.unstored, self.summary.lost = len(batch) - lost, lost

    def _finish(self, status: str) -> bool:
        """Close the run row; False (journal kept) when the store stayed busy."""
        s = self.summary
        while True:
            try:
                with self.store.write() as con:
                    con.execute(REFRESH_RUN_COUNTS, [s.cache_hits, s.cost_usd, self.run_id])
                    con.execute(FINISH_RUN, [status, self.run_id])
            except FinegrainError as e:
                if isinstance(e, StoreBusyError) and time.monotonic() < self.deadline:
                    time.sleep(min(1.0, max(0.0, self.deadline - time.monotonic())))
                    continue
                s.store_busy = e.message
                return False
            return True

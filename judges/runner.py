"""The judging runner: bounded concurrency, rate limits, retries with backoff that honour
Retry-After, cancellation, a content cache, and progress. Every answer is journalled as it
arrives and stored in small transactions; a killed run is recovered and resumed by running the
same selection again (only calls without a stored answer are made)."""

from __future__ import annotations

import asyncio
import contextlib
import random
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field

from analysis.core.errors import FinegrainError, InputError
from analysis.core.store import Store
from judges import backends
from judges.config import JudgeConfig
from judges.limits import RateLimiter
from judges.parsing import parse_judgment
from judges.plan import Call, Plan, Selection, plan_run
from judges.prices import load_prices, price_of
from judges.records import (
    REFRESH_RUN_COUNTS,
    CallRecord,
    Journal,
    live_runs,
    recover,
    write_records,
)

START_RUN = """
INSERT INTO runs (run_id, judge, dataset, source, status, n_items)
VALUES (?, ?, ?, ?, 'running', ?)
"""

FINISH_RUN = """
UPDATE runs SET status = ?, finished_at = current_timestamp WHERE run_id = ?
"""

JUDGE_ROW = "SELECT kind, backend FROM judges WHERE judge = ?"

UPSERT_RUN_JUDGE = """
INSERT INTO judges (judge, kind, backend, model, prompt_version, params)
VALUES (?, 'llm', ?, ?, ?, ?)
ON CONFLICT (judge) DO UPDATE SET backend = excluded.backend, model = excluded.model,
    prompt_version = excluded.prompt_version, params = excluded.params
"""


Progress = Callable[["RunSummary"], None]


@dataclass(frozen=True)
class RunOptions:
    concurrency: int = 8
    rpm: float | None = None  # requests per minute
    tpm: float | None = None  # tokens per minute (prompt + expected completion)
    max_retries: int = 4
    backoff_s: float = 0.5  # first retry waits about this long, doubling each time
    backoff_cap_s: float = 30.0
    flush_s: float = 2.0  # how often answers move from the journal into the store
    prices: str | None = None  # a price table file (default judges/data/prices.json)


@dataclass
class RunSummary:
    run_id: str
    judge: str
    items: int
    calls: int = 0  # HTTP or generate calls made, retries included
    cache_hits: int = 0
    ok: int = 0
    failed: int = 0  # answers that could not be parsed (kept, counted)
    errors: int = 0  # calls that failed after every retry
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = 0.0
    seconds: float = 0.0
    call_seconds: float = 0.0  # from the first call sent to the last answer (no setup)
    cancelled: bool = False
    recovered: int = 0  # answers of a killed earlier run stored before this one started
    failures: list[str] = field(default_factory=list)  # the first few error messages

    @property
    def done(self) -> int:
        return self.cache_hits + self.ok + self.failed + self.errors

    def lines(self) -> list[str]:
        cost = "unknown" if self.cost_usd is None else f"${self.cost_usd:,.4f}"
        out = [
            f"run {self.run_id} · judge {self.judge}",
            f"{self.items:,} items: {self.ok:,} scored, {self.failed:,} unparseable (kept), "
            f"{self.errors:,} failed calls, {self.cache_hits:,} from the cache",
            f"{self.calls:,} calls · {self.prompt_tokens:,} prompt + "
            f"{self.completion_tokens:,} completion tokens · cost {cost} · {self.seconds:,.1f} s",
        ]
        if self.recovered:
            out.append(f"{self.recovered:,} answers of an interrupted run recovered first")
        if self.cancelled:
            out.append("cancelled: run the same command again to finish (answers so far are kept)")
        return out + [f"failure: {m}" for m in self.failures[:5]]


def run(
    store: Store,
    config: JudgeConfig,
    selection: Selection,
    options: RunOptions = RunOptions(),
    *,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
) -> RunSummary:
    """Plan and run (blocking). Recovers killed runs first, so a rerun resumes them."""
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
        self.tasks: list[asyncio.Task] = []

    async def go(self) -> RunSummary:
        started = time.perf_counter()
        self._start()
        self.journal = Journal(self.store, self.run_id)
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
            self.summary.cancelled = self.cancel.is_set()
            self.summary.seconds = time.perf_counter() - started
            try:
                stored = await self._flush() and self._finish(status)
            finally:
                # Unstored answers stay in the journal; the next run recovers them.
                self.journal.close(remove=stored)
        return self.summary

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
            con.execute(
                UPSERT_RUN_JUDGE,
                [cfg.judge, cfg.backend, cfg.model, cfg.prompt_version, cfg.params_json()],
            )
            source = f"judge run on {sel.dataset}"
            con.execute(
                START_RUN, [self.run_id, cfg.judge, sel.dataset, source, len(self.plan.calls)]
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
        backend = backends.create(self.plan.config)
        sem = asyncio.Semaphore(max(1, self.opt.concurrency))
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
            await backend.aclose()

    async def _watch_cancel(self) -> None:
        while not self.cancel.is_set():
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
            while not self.cancel.is_set():
                await self.limiter.acquire(call.est_prompt_tokens + call.est_completion_tokens)
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
            if error is not None and not self.cancel.is_set():
                for c in self.plan.sharing(call):
                    self._record(c, None, error.message, None, 0, 0)

    def _backoff(self, attempt: int, retry_after: float | None) -> float:
        wait = min(self.opt.backoff_cap_s, self.opt.backoff_s * 2**attempt)
        wait *= random.uniform(0.5, 1.0)  # jitter: concurrent retries do not stampede
        # The backend caps Retry-After (at 2 minutes); it wins over a shorter backoff.
        return max(wait, retry_after or 0.0)

    def _recorded(self, call: Call) -> bool:
        return (call.item.instance_id, call.item.model) in self.recorded

    def _record(self, call: Call, text, error, latency, pt, ct, *, cached: bool = False) -> None:
        """Journal one item's outcome first (it was paid for), then count it."""
        item, s = call.item, self.summary
        pt, ct = int(pt or 0), int(ct or 0)  # a server may send null usage
        status, scores, rationale = "error", {}, None
        if error is None:
            parsed = parse_judgment(text, item.skills, self.plan.scales)
            status, scores, rationale, error = (
                parsed.status, parsed.scores, parsed.rationale, parsed.error
            )  # fmt: skip
        rec = CallRecord(
            self.run_id, item.dataset, item.instance_id, item.model, self.plan.config.judge,
            call.cache_key, text, rationale, status, error, latency, pt, ct, scores, cached,
        )  # fmt: skip
        self.journal.append(rec)
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
            except Exception:  # noqa: BLE001 - e.g. the app reading: keep them for next time
                self.pending = batch + self.pending
                return False
            return True

    def _store_batch(self, batch: list[CallRecord]) -> None:
        self.journal.sync()  # on disk before the store says it has them
        write_records(self.store, batch)

    def _finish(self, status: str) -> bool:
        """Close the run row; False (journal kept) when the store stayed busy."""
        s = self.summary
        try:
            with self.store.write() as con:
                con.execute(REFRESH_RUN_COUNTS, [s.cache_hits, s.cost_usd, self.run_id])
                con.execute(FINISH_RUN, [status, self.run_id])
        except FinegrainError:
            return False
        return True

"""What a judging run is asked to do (``RunOptions``) and what it reports (``RunSummary``): the
counts, and the truth about where every paid answer is (stored, waiting in the journal, or
lost), so the command line and the page never report success while answers are missing."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

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
    # How long the end of a run waits for a store another process holds (a long import) before
    # leaving the answers in the journal and saying so.
    store_wait_s: float = 60.0
    # A pool of servers (judges/endpoints.py: ``Endpoint``s, each with its own concurrency and
    # limits; ``rpm`` and ``tpm`` above then bound the whole run, and ``concurrency`` is not
    # used: the endpoints' concurrencies add up). Empty: the judge's own base URL.
    endpoints: tuple[Any, ...] = ()
    probe_s: float = 5.0  # how long a taken-out endpoint waits before it is tried again
    # The batch service (judges/batch_run.py): wait until every answer is stored (else submit,
    # look once, and leave the batches running), how often to look, and its limits per batch
    # (the OpenAI Batch API's: judges/batch_files.py).
    wait: bool = True
    poll_s: float = 30.0
    batch_max_requests: int = 50_000
    batch_max_bytes: int = 200 * 2**20


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
    halted: str | None = None  # why the run stopped calling (the journal could not be written)
    unstored: int = 0  # answers kept in the journal, not yet in the store
    lost: int = 0  # answers neither stored nor journalled (the journal and the store failed)
    store_busy: str | None = None  # why the store could not take the answers
    waited_s: float = 0.0  # how long the run waited for a busy store
    journal: str = ""  # the journal's path (where unstored answers wait)
    endpoints: list[str] = field(default_factory=list)  # a pool's endpoints taken out and back
    endpoint_status: list[str] = field(default_factory=list)  # a pool's endpoints at the end
    batches: list[str] = field(default_factory=list)  # a batch run's parts, where each is
    at_service: int = 0  # requests the batch service has answered, not yet stored
    pending: int = 0  # requests in batches whose answers are not stored yet
    notes: list[str] = field(default_factory=list)  # e.g. earlier batch runs tended first

    @property
    def done(self) -> int:
        return self.cache_hits + self.ok + self.failed + self.errors

    @property
    def incomplete(self) -> bool:
        """True when the run failed or some answers are not in the store: not a success."""
        return bool(self.halted or self.unstored or self.lost)

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
        out += [f"endpoint {line}" for line in self.endpoint_status] + self.endpoints
        out += self.batches + self.notes
        if self.pending:
            out.append(
                f"{self.pending:,} requests are still at the batch service; `finegrain judge "
                "--resume` (or Resume on the Re-judge page) stores their answers once they are "
                "done, and never sends them again"
            )
        elif self.cancelled:
            out.append("cancelled: run the same command again to finish (answers so far are kept)")
        if self.batches and self.errors and not self.pending:
            out.append(
                f"{self.errors:,} requests failed (reasons below): run the same selection again "
                "to send only those, as a new batch"
            )
        return out + self.problems() + [f"failure: {m}" for m in self.failures[:5]]

    def problems(self) -> list[str]:
        """What went wrong with storing, in words a user can act on (empty: nothing)."""
        out = []
        if self.halted:
            out.append(f"run failed: {self.halted}")
        if self.waited_s >= 1 and not self.unstored:
            out.append(f"the store was busy; waited {self.waited_s:,.0f} s to store the answers")
        if self.unstored:
            out.append(
                f"{self.unstored:,} answers are NOT yet in the store ({self.store_busy}); they "
                f"are kept in the journal {self.journal} and are stored before anything else by "
                "the next judge command or Re-judge run on this store (none is paid again)"
            )
        if self.lost:
            out.append(
                f"{self.lost:,} answers could be neither journalled nor stored and are lost; "
                "the next run asks for them again"
            )
        return out

"""A judging run in a background thread, for the app: a progress snapshot, cancel, result.

The page starts a job, then reruns to show its progress; the thread owns the run (its event
loop, its backend) and the page only reads ``progress`` and sets ``cancel``. A job either runs
a judge on a selection (``JudgeJob(...)``), or tends one batch run already at the batch service
until its answers are stored (``JudgeJob.resuming``: after a restart, nothing is sent again).
"""

from __future__ import annotations

import copy
import threading

from analysis.core.errors import FinegrainError
from analysis.core.store import Store
from judges.config import JudgeConfig
from judges.plan import BATCH_BACKEND, Selection
from judges.runner import RunOptions, RunSummary, run

# What a batch run asks (its items), to show a resumed run's progress and
# compare its answers with the judge they replace.
BATCH_ITEMS = """
SELECT DISTINCT instance_id, model FROM batch_requests WHERE run_id = ?
ORDER BY TRY_CAST(instance_id AS BIGINT) NULLS LAST, instance_id, model
"""


class JudgeJob:
    def __init__(
        self,
        store: Store,
        config: JudgeConfig | None,
        selection: Selection,
        options: RunOptions,
        *,
        resume_run: str | None = None,
        judge: str | None = None,
    ) -> None:
        """``config`` runs that judge on ``selection``; ``resume_run`` (with ``config`` None,
        see ``resuming``) tends that batch run instead."""
        self.store, self.config, self.selection, self.options = store, config, selection, options
        self.resume_run = resume_run
        self.judge: str = judge or (config.judge if config is not None else "")
        self.cancel = threading.Event()
        self.progress: RunSummary | None = None  # a copy, updated as answers arrive
        self.summary: RunSummary | None = None
        self.error: FinegrainError | None = None
        self._thread = threading.Thread(target=self._work, name="judge-job", daemon=True)

    @classmethod
    def resuming(cls, store: Store, run_id: str, options: RunOptions) -> JudgeJob:
        """A job that tends the batch run ``run_id`` (judges/batch_run.py ``resume``) until
        its answers are stored, or once (``options.wait`` False); its selection is what the
        run asks."""
        from judges.batch_tend import run_row

        judge, dataset, _ = run_row(store, run_id)  # an unknown run: an InputError
        with store.read() as con:
            items = con.execute(BATCH_ITEMS, [run_id]).fetchall()
        selection = Selection(dataset, items=tuple((i, m) for i, m in items))
        return cls(store, None, selection, options, resume_run=run_id, judge=judge)

    @property
    def batch(self) -> bool:
        """True when the job waits on the batch service (a batch run, or a resumed one)."""
        return self.resume_run is not None or (
            self.config is not None and self.config.backend == BATCH_BACKEND
        )

    @property
    def run_id(self) -> str | None:
        """The run's id: a resumed run's at once, a new run's once its first progress came."""
        if self.resume_run is not None:
            return self.resume_run
        return self.progress.run_id if self.progress is not None else None

    def start(self) -> JudgeJob:
        self._thread.start()
        return self

    @property
    def done(self) -> bool:
        return not self._thread.is_alive() and (self.summary is not None or self.error is not None)

    def wait(self, timeout: float | None = None) -> bool:
        self._thread.join(timeout)
        return self.done

    def _work(self) -> None:
        try:
            self.summary = self._run() if self.resume_run is None else self._resume()
        except FinegrainError as e:
            # Keep the message only: a traceback would keep the run (and its journal's lock)
            # alive, and the next run would not recover that journal.
            self.error = FinegrainError(e.message, title=e.title)
        except Exception as e:  # noqa: BLE001 - shown on the page, never a dead thread
            self.error = FinegrainError(f"{type(e).__name__}: {e}", title="Judging failed")

    def _run(self) -> RunSummary:
        assert self.config is not None
        return run(
            self.store, self.config, self.selection, self.options,
            progress=self._on_progress, cancel=self.cancel,
        )  # fmt: skip

    def _resume(self) -> RunSummary:
        from judges.batch_run import resume  # the batch client (openai SDK) only when used

        assert self.resume_run is not None
        summaries = resume(
            self.store, dataset=self.selection.dataset, options=self.options,
            progress=self._on_progress, cancel=self.cancel, run_id=self.resume_run,
        )  # fmt: skip
        if summaries:
            return summaries[0]
        # Stored meanwhile (by a judge command, or another session's Resume): nothing to do.
        summary = RunSummary(self.resume_run, self.judge, len(self.selection.items))
        summary.notes.append(f"batch run {self.resume_run} has no answers left to store")
        return summary

    def _on_progress(self, summary: RunSummary) -> None:
        self.progress = copy.copy(summary)

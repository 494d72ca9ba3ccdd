"""A judging run in a background thread, for the app: a progress snapshot, cancel, result.

The page starts a job, then reruns to show its progress; the thread owns the run (its event
loop, its backend) and the page only reads ``progress`` and sets ``cancel``.
"""

from __future__ import annotations

import copy
import threading

from analysis.core.errors import FinegrainError
from analysis.core.store import Store
from judges.config import JudgeConfig
from judges.plan import Selection
from judges.runner import RunOptions, RunSummary, run


class JudgeJob:
    def __init__(
        self, store: Store, config: JudgeConfig, selection: Selection, options: RunOptions
    ) -> None:
        self.store, self.config, self.selection, self.options = store, config, selection, options
        self.cancel = threading.Event()
        self.progress: RunSummary | None = None  # a copy, updated as answers arrive
        self.summary: RunSummary | None = None
        self.error: FinegrainError | None = None
        self._thread = threading.Thread(target=self._work, name="judge-job", daemon=True)

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
            self.summary = run(
                self.store, self.config, self.selection, self.options,
                progress=self._on_progress, cancel=self.cancel,
            )  # fmt: skip
        except FinegrainError as e:
            # Keep the message only: a traceback would keep the run (and its journal's lock)
            # alive, and the next run would not recover that journal.
            self.error = FinegrainError(e.message, title=e.title)
        except Exception as e:  # noqa: BLE001 - shown on the page, never a dead thread
            self.error = FinegrainError(f"{type(e).__name__}: {e}", title="Judging failed")

    def _on_progress(self, summary: RunSummary) -> None:
        self.progress = copy.copy(summary)

"""The verbosity check, end to end: rewrite chosen responses to be wordier (judges/rewrite.py),
then judge both versions with one judge through the ordinary runner: the originals the judge
has not scored yet, and the rewrites (in their derived dataset). Answers already paid for are
reused (the runner's content cache), so running the same check again makes no call.

A judge to check is either one stored in this store and runnable here (an LLM judge run by
``finegrain judge`` or Re-judge: its configuration is rebuilt from its ``judges`` row, so its
cached answers on the originals are reused) or a judge configuration given in full.
``VerbosityJob`` runs a check in a background thread for the app (progress, cancel, result).
"""

from __future__ import annotations

import copy
import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from analysis.core.errors import FinegrainError, InputError, NotFoundError
from analysis.core.store import Store
from judges import backends
from judges.config import JudgeConfig
from judges.outcome import RunOptions, RunSummary
from judges.plan import Selection, plan_run
from judges.rewrite import derived_name, plan_rewrites, rewrite
from judges.runner import run

JUDGE_ROW = "SELECT kind, backend, params FROM judges WHERE judge = ?"

# LLM judges with scores on a dataset whose backend can be asked again here.
RUNNABLE_JUDGES = """
SELECT j.judge FROM judges j
WHERE j.kind = 'llm' AND list_contains(?::VARCHAR[], j.backend)
  AND EXISTS (SELECT 1 FROM latest_scores s WHERE s.dataset = ? AND s.judge = j.judge)
ORDER BY j.judge
"""

# Responses of the selection the judge already scored (any skill): not judged again.
SCORED_ITEMS = """
SELECT DISTINCT instance_id, model FROM latest_scores WHERE dataset = ? AND judge = ?
"""

REWRITTEN_ITEMS = "SELECT instance_id, model FROM responses WHERE dataset = ?"

PHASES = ("rewrite", "judge originals", "judge rewrites")


def runnable_judges(store: Store, dataset: str) -> list[str]:
    with store.read() as con:
        rows = con.execute(RUNNABLE_JUDGES, [list(backends.BACKENDS), dataset]).fetchall()
    return [r[0] for r in rows]


def stored_judge(
    store: Store, name: str, *, base_url: str | None = None, trust_base_url: bool = True
) -> JudgeConfig:
    """A stored LLM judge's configuration, rebuilt from what its run stored (the settings that
    change its answers), with the server to ask now (``trust_base_url``: see JudgeConfig)."""
    with store.read() as con:
        row = con.execute(JUDGE_ROW, [name]).fetchone()
    if row is None:
        raise NotFoundError(f"No judge named '{name}' in this store.")
    kind, backend, params = row
    if kind != "llm" or backend not in backends.BACKENDS:
        raise InputError(
            "judge", None, None,
            f"'{name}' is a {kind} scorer ({backend}): it cannot be asked again. Pick an LLM "
            "judge run by `finegrain judge` or Re-judge, or give a judge file.",
        )  # fmt: skip
    try:
        settings = json.loads(params or "{}")
        settings.pop("name", None)
        config = JudgeConfig(**settings, base_url=base_url or None, name=name)
    except (TypeError, ValueError) as e:
        raise InputError("judge", None, None, f"'{name}' has unreadable settings ({e})") from e
    return replace(config, trust_base_url=trust_base_url)


@dataclass(frozen=True)
class CheckRequest:
    dataset: str
    judge: JudgeConfig
    rewriter: JudgeConfig
    items: tuple[tuple[str, str], ...]  # (instance_id, model) of the original dataset
    options: RunOptions = RunOptions()

    @property
    def derived(self) -> str:
        return derived_name(self.dataset, self.rewriter)


@dataclass
class CheckResult:
    derived: str
    runs: dict[str, RunSummary | None] = field(default_factory=dict)  # phase → its run

    @property
    def incomplete(self) -> bool:
        return any(s is not None and (s.incomplete or s.cancelled) for s in self.runs.values())

    def lines(self) -> list[str]:
        out = [f"rewrites in dataset '{self.derived}'"]
        for phase in PHASES:
            s = self.runs.get(phase)
            if s is None:
                out.append(f"{phase}: nothing to do (all stored)")
                continue
            out.append(
                f"{phase}: {s.items:,} items, {s.ok:,} new, {s.cache_hits:,} stored before, "
                f"{s.failed:,} {'not wordier' if phase == 'rewrite' else 'unparseable'}, "
                f"{s.errors:,} failed calls ({s.calls:,} calls)"
            )
            if s.recovered:
                out.append(f"  {s.recovered:,} answers of an interrupted run recovered first")
            out += [f"  {line}" for line in s.problems()]
            out += [f"  failure: {m}" for m in s.failures[:5]]
        return out


def _scored(store: Store, dataset: str, judge: str) -> set[tuple[str, str]]:
    with store.read() as con:
        return {tuple(r) for r in con.execute(SCORED_ITEMS, [dataset, judge]).fetchall()}


def _rewritten(store: Store, derived: str, items) -> tuple[tuple[str, str], ...]:
    with store.read() as con:
        have = {tuple(r) for r in con.execute(REWRITTEN_ITEMS, [derived]).fetchall()}
    return tuple(i for i in items if i in have)


def judge_selection(store: Store, req: CheckRequest, phase: str) -> Selection | None:
    """What a judging phase asks: the originals without a score of this judge, or the stored
    rewrites; None when there is nothing to judge (an empty ``items`` would mean all)."""
    if phase == "judge originals":
        scored = _scored(store, req.dataset, req.judge.judge)
        items = tuple(i for i in req.items if i not in scored)
        return Selection(req.dataset, items=items) if items else None
    items = _rewritten(store, req.derived, req.items)
    return Selection(req.derived, items=items) if items else None


def _judge(store, req: CheckRequest, phase: str, progress, cancel) -> RunSummary | None:
    sel = judge_selection(store, req, phase)
    if sel is None:
        return None
    plan = plan_run(store, req.judge, sel, concurrency=req.options.concurrency)
    if not plan.to_call and not plan.to_reuse:  # all answered already: no call, no run row
        return None
    return run(store, req.judge, sel, req.options, progress=progress, cancel=cancel)


def run_check(
    store: Store,
    req: CheckRequest,
    *,
    progress: Callable[[str, RunSummary], None] | None = None,
    cancel: threading.Event | None = None,
) -> CheckResult:
    """Rewrite, then judge the originals and the rewrites (blocking). ``progress(phase,
    summary)`` is called as answers arrive. A cancel stops after the running phase's answers
    are stored; running the same check again finishes it without paying twice."""
    backends.check(req.judge)
    cancel = cancel or threading.Event()
    result = CheckResult(req.derived)

    def report(phase: str):
        return None if progress is None else (lambda s: progress(phase, s))

    result.runs["rewrite"] = rewrite(
        store, req.rewriter, req.dataset, req.items, req.options,
        progress=report("rewrite"), cancel=cancel,
    )  # fmt: skip
    for phase in PHASES[1:]:
        if cancel.is_set():
            break
        result.runs[phase] = _judge(store, req, phase, report(phase), cancel)
    return result


def estimate_lines(store: Store, req: CheckRequest) -> list[str]:
    """What the check will ask before it runs: the rewrites (cache counted), and the judge calls
    at most (the originals not scored yet, and one per rewrite not judged yet)."""
    plan = plan_rewrites(store, req.rewriter, req.dataset, req.items)
    originals = judge_selection(store, req, "judge originals")
    n_orig = len(originals.items) if originals else 0
    judged = _scored(store, req.derived, req.judge.judge)
    n_rewrites = sum(1 for i in req.items if i not in judged)
    lines = [f"Rewrites by {req.rewriter.model}: {line}" for line in plan.estimate.lines()]
    return lines + [
        f"Judge {req.judge.judge}: at most {n_orig:,} originals without its score and "
        f"{n_rewrites:,} rewrites to judge (answers already stored are reused)"
    ]


class VerbosityJob:
    """A check in a background thread: ``progress`` (phase, a copy of the run's summary),
    ``cancel``, and the result or the error once done."""

    def __init__(self, store: Store, req: CheckRequest) -> None:
        self.store, self.req = store, req
        self.cancel = threading.Event()
        self.progress: tuple[str, RunSummary] | None = None
        self.result: CheckResult | None = None
        self.error: FinegrainError | None = None
        self._thread = threading.Thread(target=self._work, name="verbosity-job", daemon=True)

    def start(self) -> VerbosityJob:
        self._thread.start()
        return self

    @property
    def done(self) -> bool:
        return not self._thread.is_alive() and (self.result is not None or self.error is not None)

    def wait(self, timeout: float | None = None) -> bool:
        self._thread.join(timeout)
        return self.done

    def _work(self) -> None:
        try:
            self.result = run_check(
                self.store, self.req, progress=self._on_progress, cancel=self.cancel
            )
        except FinegrainError as e:  # the message only: a traceback would keep the run alive
            self.error = FinegrainError(e.message, title=e.title)
        except Exception as e:  # noqa: BLE001 - shown on the page, never a dead thread
            self.error = FinegrainError(f"{type(e).__name__}: {e}", title="Verbosity check failed")

    def _on_progress(self, phase: str, summary: RunSummary) -> None:
        self.progress = (phase, copy.copy(summary))

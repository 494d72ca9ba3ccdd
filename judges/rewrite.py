"""Rewriting responses to be wordier with the same content (the verbosity check).

Where rewrites live: a derived dataset, ``"<dataset> · verbose (<rewriter model>)"``, flagged in
``datasets`` by its source (``"verbosity rewrite of <dataset> by <backend>/<model>"``), holding a
copy of the rewritten responses' instances and, as its responses, the rewrites under the same
model names. So the rewrites are read in Samples like any response (next to the originals,
which stay in their own dataset), any judge scores them through the ordinary runner, and no
page of the original dataset ever sees them (every page reads one dataset). No schema change.

Each rewrite is one call made through the judging runner's call path (``runner._Run``: bounded
concurrency, rate limits, retries with backoff, cancellation, the journal, small store writes),
recorded as a judgment of the rewriter on the derived dataset: raw output, status, error,
latency, tokens and content key. So a killed run's paid answers are recovered from the journal
like any judge's, a rerun asks only for rewrites not stored yet (the content key), and a failed
rewrite (a failed call, or an answer that is not longer than the original) stays recorded with
its error. The rewriter has no ``judges`` row and no scores: it is never listed as a judge.
``materialise`` copies the accepted rewrites into the derived dataset's responses, before and
after each run (so rewrites a killed run left in its journal become responses too).
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
from dataclasses import dataclass, replace
from pathlib import Path

import pandas as pd

from analysis.core.errors import InputError, NotFoundError
from analysis.core.store import Store
from judges import backends
from judges.config import JudgeConfig, cache_key
from judges.outcome import Progress, RunOptions, RunSummary
from judges.plan import (
    API_SECONDS_PER_CALL,
    CACHED_JUDGMENTS,
    CHARS_PER_TOKEN,
    Call,
    Estimate,
    Plan,
    Selection,
)
from judges.prices import load_prices, price_of
from judges.prompts import TEMPLATES, Item
from judges.records import START_RUN, live_runs, recover
from judges.runner import DEFAULT_OPTIONS, _Run

REWRITE_PROMPT = "verbose-v1"
REWRITE_TEMPLATES = TEMPLATES / "rewrites"
# A wordier answer is up to about twice as long as the original: room for that, and more.
REWRITE_MAX_TOKENS = 4096
VERBOSE_TAG = " · verbose"
SOURCE_PREFIX = "verbosity rewrite of "
REWRITER_PREFIX = "rewriter "  # a rewriter's name in runs and judgments (it has no judges row)

# The responses to rewrite, with their instance (for the prompt's instruction).
ORIGINALS = """
SELECT r.instance_id, r.model, i.instruction, i.reference, i.skills, r.text
FROM responses r JOIN instances i USING (dataset, instance_id)
WHERE r.dataset = ? AND r.text IS NOT NULL
ORDER BY TRY_CAST(r.instance_id AS BIGINT) NULLS LAST, r.instance_id, r.model
"""

# The derived dataset: the source's flags, a source naming the rewriter, a description.
ENSURE_DATASET = """
INSERT INTO datasets (dataset, title, source, simulated, seed, description)
SELECT ?, ?, ?, simulated, seed, ? FROM datasets WHERE dataset = ?
ON CONFLICT DO NOTHING
"""

# The source's own criteria (scales, labels, rubrics) belong to the derived dataset too.
COPY_CRITERIA = """
INSERT INTO criteria BY NAME
SELECT ? AS dataset, * EXCLUDE (dataset) FROM criteria WHERE dataset = ?
ON CONFLICT DO NOTHING
"""

COPY_INSTANCES = """
INSERT INTO instances BY NAME
SELECT ? AS dataset, * EXCLUDE (dataset) FROM instances
WHERE dataset = ? AND list_contains(?::VARCHAR[], instance_id)
ON CONFLICT DO NOTHING
"""

# Accepted rewrites not yet in the derived dataset's responses (the first one per response).
NEW_REWRITES = """
SELECT j.instance_id, j.model, j.raw_output
FROM judgments j
WHERE j.dataset = ? AND j.judge = ? AND j.parse_status = 'ok'
  AND NOT EXISTS (SELECT 1 FROM responses r WHERE r.dataset = j.dataset
                  AND r.instance_id = j.instance_id AND r.model = j.model)
ORDER BY j.judgment_id
"""

INSERT_REWRITES = """
INSERT INTO responses (dataset, instance_id, model, text, length)
SELECT ?, instance_id, model, text, length(text) FROM new_rewrites
ON CONFLICT DO NOTHING
"""

# An end mark inside the texts (any case or spacing) cannot close its block.
_END = re.compile(r"\[\s*end\s+of\s+(response|instruction)\s*\]", re.IGNORECASE)
_FIELD = re.compile(r"\{(instruction|response)\}")


@dataclass(frozen=True)
class RewriteTemplate:
    version: str
    system: str
    user: str  # fields: instruction, response


def available_rewrite_templates() -> list[str]:
    return sorted(p.stem for p in REWRITE_TEMPLATES.glob("*.json"))


def load_rewrite_template(version: str = REWRITE_PROMPT) -> RewriteTemplate:
    path = REWRITE_TEMPLATES / f"{Path(version).name}.json"
    if not path.is_file():
        known = ", ".join(available_rewrite_templates())
        raise NotFoundError(f"Unknown rewrite prompt '{version}'. Known: {known}.")
    d = json.loads(path.read_text(encoding="utf-8"))
    return RewriteTemplate(d["version"], d["system"], d["user"])


def rewriter_config(values: dict, source: str, *, visitor: bool = False) -> JudgeConfig:
    """The rewriting model as a judge configuration (backend, model, server, key rules:
    ``visitor`` sends the key only to $OPENAI_BASE_URL, as on Re-judge), with our rewrite
    prompt, room for long answers and a name that says what it does."""
    values = {k: v for k, v in values.items() if v not in (None, "")}
    base = JudgeConfig.from_mapping(values, source, visitor=visitor)
    name = f"{REWRITER_PREFIX}{base.model} ({base.backend}, {REWRITE_PROMPT})"
    return replace(base, prompt_version=REWRITE_PROMPT, max_tokens=REWRITE_MAX_TOKENS, name=name)


def derived_name(dataset: str, rewriter: JudgeConfig) -> str:
    """The rewrites' dataset: one per rewriting model, so two rewriters never mix (a local
    model of the same name as an API model is another rewriter: its backend is named)."""
    who = rewriter.model if rewriter.backend == "openai" else f"{rewriter.backend}/{rewriter.model}"
    return f"{dataset}{VERBOSE_TAG} ({who})"


def source_text(dataset: str, rewriter: JudgeConfig) -> str:
    return f"{SOURCE_PREFIX}{dataset} by {rewriter.backend}/{rewriter.model}"


def build_messages(t: RewriteTemplate, instruction: str, response: str) -> list[dict]:
    """One pass over the template: braces in the texts are never read as fields."""
    fields = {"instruction": _defuse(instruction), "response": _defuse(response)}
    user = _FIELD.sub(lambda m: fields[m.group(1)], t.user)
    return [{"role": "system", "content": t.system}, {"role": "user", "content": user}]


def _defuse(text: str) -> str:
    return _END.sub(lambda m: m.group(0)[:-1].rstrip() + " (quoted)]", text)


def clean(raw: str) -> str:
    """The rewrite a raw answer holds: without surrounding blank space."""
    return raw.strip()


def plan_rewrites(
    store: Store,
    rewriter: JudgeConfig,
    dataset: str,
    items: tuple[tuple[str, str], ...],
    *,
    concurrency: int = 8,
    prices: str | None = None,
) -> Plan:
    """The rewrite calls of ``items`` (instance_id, model) of ``dataset``: their prompts and
    content keys, what is already stored (no call), and the estimate."""
    store.ensure()
    template = load_rewrite_template(rewriter.prompt_version)
    derived = derived_name(dataset, rewriter)
    wanted = set(items)
    with store.read() as con:
        rows = con.execute(ORIGINALS, [dataset]).fetchall()
    calls = []
    for iid, model, instruction, reference, skills, text in rows:
        if (iid, model) not in wanted:
            continue
        messages = build_messages(template, instruction or "", text)
        item = Item(derived, iid, model, instruction or "", reference, text, tuple(skills))
        chars = sum(len(m["content"]) for m in messages)
        completion = min(rewriter.max_tokens, 2 * len(text) // CHARS_PER_TOKEN + 20)
        key = cache_key(rewriter, messages)
        calls.append(Call(item, messages, key, chars // CHARS_PER_TOKEN, completion))
    if not calls:
        raise InputError(
            "selection", None, None, f"no responses to rewrite in '{dataset}' in this selection"
        )
    with store.read() as con:
        cached = con.execute(CACHED_JUDGMENTS, [[c.cache_key for c in calls]]).fetchall()
    done = frozenset((d, i, m, k) for k, j, d, i, m, *_ in cached if j == rewriter.judge)
    reuse = {k: (raw, pt or 0, ct or 0) for k, _j, _d, _i, _m, raw, pt, ct in cached}
    sel = Selection(derived, items=tuple(sorted(wanted)))
    blank = Estimate(0, 0, 0, 0, None, 0)
    plan = Plan(rewriter, sel, tuple(calls), done, reuse, {}, blank)
    return replace(plan, estimate=_estimate(plan, concurrency, prices))


def _estimate(plan: Plan, concurrency: int, prices: str | None) -> Estimate:
    todo = plan.to_call
    pt = sum(c.est_prompt_tokens for c in todo)
    ct = sum(c.est_completion_tokens for c in todo)
    price = price_of(plan.config.model, load_prices(prices))
    cost = 0.0 if plan.config.backend == "transformers" else price.cost(pt, ct) if price else None
    hits = len(plan.calls) - sum(len(plan.sharing(c)) for c in todo)
    return Estimate(len(todo), hits, pt, ct, cost, len(todo) * API_SECONDS_PER_CALL / concurrency)


class _RewriteRun(_Run):
    """The runner's call path with a rewrite's bookkeeping: the run row opens the derived
    dataset (no judge row: a rewriter is not a judge), and an answer is a rewrite, not a
    judgment to parse."""

    def __init__(self, store, plan, options, progress, cancel, source: str) -> None:
        super().__init__(store, plan, options, progress, cancel)
        self.source = source

    def _start(self) -> None:
        cfg, derived = self.plan.config, self.plan.selection.dataset
        instances = sorted({c.item.instance_id for c in self.plan.calls})
        title = f"{self.source} rewritten to be wordier ({cfg.model})"
        about = (
            f"Responses of '{self.source}' rewritten to be wordier with the same content by "
            f"{cfg.judge}, for the verbosity check (Judges page). Not a benchmark of its own."
        )
        with self.store.write() as con:
            con.execute(
                ENSURE_DATASET, [derived, title, source_text(self.source, cfg), about, self.source]
            )
            con.execute(COPY_CRITERIA, [derived, self.source])
            con.execute(COPY_INSTANCES, [derived, self.source, instances])
            run_source = f"verbosity rewrite of {self.source}"
            con.execute(
                START_RUN, [self.run_id, cfg.judge, derived, run_source, len(self.plan.calls), None]
            )

    def _outcome(self, call: Call, text: str) -> tuple[str, dict, str | None, str | None]:
        rewrite, original = clean(text), call.item.response.strip()
        if len(rewrite) <= len(original):
            return "failed", {}, None, (
                f"not a wordier rewrite: {len(rewrite):,} characters, the original "
                f"{len(original):,}"
            )  # fmt: skip
        return "ok", {}, None, None


def rewrite(
    store: Store,
    rewriter: JudgeConfig,
    dataset: str,
    items: tuple[tuple[str, str], ...],
    options: RunOptions = DEFAULT_OPTIONS,
    *,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
) -> RunSummary:
    """Rewrite ``items`` of ``dataset`` (blocking); stored rewrites are not asked again. Returns
    the run's summary (``ok``: accepted rewrites, ``failed``: answers not wordier, ``errors``:
    failed calls, ``cache_hits``: rewrites already stored)."""
    backends.check(rewriter)
    store.ensure()
    recovered = recover(store)
    derived = derived_name(dataset, rewriter)
    materialise(store, dataset, rewriter)  # what a killed run left, recovered just now
    if live_runs(store, rewriter.judge, derived):
        raise InputError(
            "verbosity check", None, None,
            f"a rewrite of '{dataset}' by {rewriter.model} is already running; wait for it",
        )  # fmt: skip
    plan = plan_rewrites(
        store, rewriter, dataset, items, concurrency=options.concurrency, prices=options.prices
    )
    if not plan.to_call and not plan.to_reuse:  # every rewrite stored: no call, no run row
        summary = RunSummary("", rewriter.judge, len(plan.calls), cache_hits=len(plan.calls))
    else:
        run = _RewriteRun(store, plan, options, progress, cancel or threading.Event(), dataset)
        summary = asyncio.run(run.go())
    summary.recovered = recovered
    materialise(store, dataset, rewriter)
    return summary


def materialise(store: Store, dataset: str, rewriter: JudgeConfig) -> int:
    """Copy accepted rewrites into the derived dataset's responses; returns how many."""
    derived = derived_name(dataset, rewriter)
    with store.read() as con:
        rows = con.execute(NEW_REWRITES, [derived, rewriter.judge]).fetchall()
    if not rows:
        return 0
    frame = pd.DataFrame(rows, columns=["instance_id", "model", "raw"])
    frame = frame.drop_duplicates(["instance_id", "model"])
    frame = frame.assign(text=frame["raw"].map(clean))[["instance_id", "model", "text"]]
    with store.write() as con:
        con.register("new_rewrites", frame)
        con.execute(INSERT_REWRITES, [derived])
        con.unregister("new_rewrites")
    return len(frame)

"""What a judging run will do, before any call: the items, their prompts and content keys,
what the cache already answers, and the estimated tokens, cost and time."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from analysis.core.errors import InputError
from analysis.core.store import Store
from judges.config import JudgeConfig, cache_key
from judges.prices import load_prices, price_of
from judges.prompts import (
    Item,
    Rubric,
    build_messages,
    load_flask_rubrics,
    load_template,
    rubrics_from_store,
)

# Responses to judge, with their instance (skills, reference); the model list may be empty (all).
JUDGE_ITEMS = """
SELECT r.instance_id, r.model, i.instruction, i.reference, i.skills, r.text
FROM responses r JOIN instances i USING (dataset, instance_id)
WHERE r.dataset = ? AND r.text IS NOT NULL
  AND (len(?::VARCHAR[]) = 0 OR list_contains(?::VARCHAR[], r.model))
ORDER BY TRY_CAST(r.instance_id AS BIGINT) NULLS LAST, r.instance_id, r.model
LIMIT ?
"""

# Answered calls with these content keys (any judge, any run): a cache hit costs nothing.
# Unparseable answers are kept but not reused, so a rerun asks again.
CACHED_JUDGMENTS = """
SELECT cache_key, judge, dataset, instance_id, model, raw_output, prompt_tokens,
       completion_tokens
FROM judgments
WHERE list_contains(?::VARCHAR[], cache_key) AND parse_status = 'ok'
"""


# Rough sizes for the estimate: ~4 characters per token; feedback of ~60 tokens per skill.
CHARS_PER_TOKEN = 4
ANSWER_TOKENS = 40
FEEDBACK_TOKENS_PER_SKILL = 60
LOCAL_TOKENS_PER_S = {"cpu": 15.0, "cuda": 400.0}  # generated tokens per second, per batch
API_SECONDS_PER_CALL = 6.0
BATCH_BACKEND = "openai-batch"  # judges/batch_run.py: the OpenAI Batch API
BATCH_WINDOW_H = 24  # the only completion window the Batch API offers


@dataclass(frozen=True)
class Selection:
    """Which responses to judge: a dataset, optionally some models, skills, explicit items."""

    dataset: str
    models: tuple[str, ...] = ()
    skills: tuple[str, ...] = ()  # judge only these of each instance's skills (empty: all)
    items: tuple[tuple[str, str], ...] = ()  # explicit (instance_id, model) pairs
    limit: int | None = None
    # A repeat run's number (judges/repeat.py): the same prompts asked again for a fresh sample,
    # under cache keys of their own (config.cache_key), so nothing earlier answers them.
    repeat: int | None = None


@dataclass(frozen=True)
class Call:
    item: Item
    messages: list[dict]
    cache_key: str
    est_prompt_tokens: int
    est_completion_tokens: int


@dataclass(frozen=True)
class Estimate:
    calls: int
    cache_hits: int
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float | None  # None: the model is not in the price table
    seconds: float
    window_h: float | None = None  # the batch service's completion window (the time is its)
    waiting: int = 0  # items a pending batch of the judge asks already (not asked again)

    def lines(self) -> list[str]:
        cost = (
            "unknown (add the model to the price table)"
            if self.cost_usd is None
            else (f"≈ ${self.cost_usd:,.2f}")
        )
        time = (
            f"time ≈ {self.seconds / 60:,.1f} min (rough)"
            if self.window_h is None
            else f"time: within {self.window_h:g} h (the batch service's window; often much less)"
        )
        wait = f", {self.waiting:,} waiting in a pending batch" if self.waiting else ""
        return [
            f"{self.calls:,} calls to make, {self.cache_hits:,} answered by the cache (free)"
            + wait,
            f"≈ {self.prompt_tokens:,} prompt + {self.completion_tokens:,} completion tokens",
            f"cost {cost}"
            + (" at batch prices" if self.window_h is not None and self.cost_usd else ""),
            time,
        ]


@dataclass(frozen=True)
class Plan:
    config: JudgeConfig
    selection: Selection
    calls: tuple[Call, ...]  # every item of the selection
    done: frozenset[tuple[str, str, str, str]]  # (dataset, instance, model, key) answered
    reuse: dict  # key → (raw_output, prompt_tokens, completion_tokens) of an earlier answer
    scales: dict[str, tuple[float, float]]
    estimate: Estimate

    def is_done(self, c: Call) -> bool:
        return (c.item.dataset, c.item.instance_id, c.item.model, c.cache_key) in self.done

    @property
    def to_reuse(self) -> list[Call]:
        """Items whose prompt was answered before (for another item or judge name): no call."""
        return [c for c in self.calls if not self.is_done(c) and c.cache_key in self.reuse]

    @property
    def to_call(self) -> list[Call]:
        """Items to ask, one call per distinct prompt (items with the same prompt share it)."""
        seen: set[str] = set()
        out = []
        for c in self.calls:
            if self.is_done(c) or c.cache_key in self.reuse or c.cache_key in seen:
                continue
            seen.add(c.cache_key)
            out.append(c)
        return out

    @cached_property
    def _by_key(self) -> dict[str, list[Call]]:
        out: dict[str, list[Call]] = {}
        for c in self.calls:
            if not self.is_done(c):
                out.setdefault(c.cache_key, []).append(c)
        return out

    def sharing(self, call: Call) -> list[Call]:
        """The not-yet-done items asking exactly this prompt (the call itself included)."""
        return self._by_key.get(call.cache_key, [])


def load_rubrics(
    store: Store, config: JudgeConfig, dataset: str | None = None
) -> dict[str, Rubric]:
    ours = rubrics_from_store(store, dataset)
    if config.rubric == "store":
        return ours
    if not config.rubric.startswith("file:"):
        raise InputError("rubric", None, None, "use 'store' or file:PATH")
    theirs = load_flask_rubrics(config.rubric[5:])
    # FLASK's texts replace the shared 1-5 skills, never a dataset's own criterion of that
    # name on its own scale (HelpSteer's correctness 0-4).
    return ours | {
        s: r
        for s, r in theirs.items()
        if s not in ours or (ours[s].scale_min, ours[s].scale_max) == (r.scale_min, r.scale_max)
    }


def _items(store: Store, sel: Selection) -> list[Item]:
    models = list(sel.models)
    # The limit goes to SQL when nothing else is filtered here (one call reads 14k texts).
    cap = sel.limit if sel.limit and not sel.items and not sel.skills else None
    with store.read() as con:
        rows = con.execute(JUDGE_ITEMS, [sel.dataset, models, models, cap]).fetchall()
    wanted = set(sel.items)
    out = []
    for instance_id, model, instruction, reference, skills, text in rows:
        if wanted and (instance_id, model) not in wanted:
            continue
        chosen = tuple(s for s in skills if not sel.skills or s in sel.skills)
        if chosen:
            out.append(
                Item(sel.dataset, instance_id, model, instruction or "", reference, text, chosen)
            )
    if not out:
        raise InputError(
            "selection", None, None,
            f"no responses to judge in '{sel.dataset}' with these models, skills and items",
        )  # fmt: skip
    return out[: sel.limit] if sel.limit else out


def plan_run(
    store: Store, config: JudgeConfig, sel: Selection, *, concurrency: int = 8, prices=None
) -> Plan:
    store.ensure()  # a store from an older version gets the judging columns first
    template = load_template(config.prompt_version)
    rubrics = load_rubrics(store, config, sel.dataset)
    calls = []
    for item in _items(store, sel):
        messages = build_messages(template, item, rubrics, config.use_reference)
        chars = sum(len(m["content"]) for m in messages)
        completion = min(
            config.max_tokens, ANSWER_TOKENS + FEEDBACK_TOKENS_PER_SKILL * len(item.skills)
        )
        calls.append(
            Call(
                item,
                messages,
                cache_key(config, messages, sel.repeat),
                chars // CHARS_PER_TOKEN,
                completion,
            )
        )
    n_all, calls = len(calls), _not_waiting(store, config, sel, calls)
    keys = [c.cache_key for c in calls]
    with store.read() as con:
        cached = con.execute(CACHED_JUDGMENTS, [keys]).fetchall()
    done = frozenset((d, i, m, k) for k, judge, d, i, m, *_ in cached if judge == config.judge)
    reuse = {k: (raw, pt or 0, ct or 0) for k, _j, _d, _i, _m, raw, pt, ct in cached}
    scales = {s: (r.scale_min, r.scale_max) for s, r in rubrics.items()}
    plan = Plan(config, sel, tuple(calls), done, reuse, scales, Estimate(0, 0, 0, 0, None, 0))
    return _with_estimate(plan, concurrency, prices, waiting=n_all - len(calls))


def _not_waiting(store: Store, config: JudgeConfig, sel: Selection, calls: list[Call]) -> list:
    """Items a pending batch of this judge asks already (judges/batch_run.py) are not asked
    again, whichever way this run sends its calls: that batch's answers will be stored."""
    from judges.batch_store import waiting

    asked = waiting(store, config.judge, sel.dataset)
    return [c for c in calls if (c.item.instance_id, c.item.model, c.cache_key) not in asked]


def _with_estimate(plan: Plan, concurrency: int, prices, *, waiting: int = 0) -> Plan:
    todo = plan.to_call
    pt = sum(c.est_prompt_tokens for c in todo)
    ct = sum(c.est_completion_tokens for c in todo)
    cfg = plan.config
    if cfg.backend == "transformers":
        device = cfg.device or "cpu"
        per_batch = max(c.est_completion_tokens for c in todo) if todo else 0
        batches = -(-len(todo) // max(cfg.batch_size, 1))
        cost, seconds = 0.0, batches * per_batch / LOCAL_TOKENS_PER_S.get(device, 15.0)
    else:
        table = load_prices(prices) if not isinstance(prices, dict) else prices
        price = price_of(cfg.model, table, batch=cfg.backend == BATCH_BACKEND)
        cost = price.cost(pt, ct) if price else None
        seconds = len(todo) * API_SECONDS_PER_CALL / max(concurrency, 1)
    hits = len(plan.calls) - sum(len(plan.sharing(c)) for c in todo)
    window = BATCH_WINDOW_H if cfg.backend == BATCH_BACKEND else None
    est = Estimate(len(todo), hits, pt, ct, cost, seconds, window, waiting)
    return Plan(plan.config, plan.selection, plan.calls, plan.done, plan.reuse, plan.scales, est)

"""Repeat runs: an LLM judge asked again, on a sample of the items it already scored, for a
fresh sample of its answers. Its stability (Krippendorff's α between its runs) is read from the
runs' scores by analysis/views/judge_stability.py.

A repeat is an ordinary run of the same runner (a new run_id, marked ``runs.repeat_number``,
whose scores are history from the start: the judge's current scores, and every page but
Stability, never mix in resampled answers), with three differences:
- the judge's stored configuration is reused (backend, model, prompt, rubric, parameters); only
  the temperature may change, and it must be above 0 (a repeat at 0 measures nothing);
- the prompts are rebuilt and checked byte for byte against the original call (its stored cache
  key): an item whose prompt can no longer be rebuilt (a changed template or rubric) is left out;
- the repeat's number is part of its cache keys (``Selection.repeat``), so nothing answered
  before, the original or another repeat, answers it; only that repeat's own answers do, so a
  rerun of an interrupted repeat pays for the rest only and a rerun of a finished one for nothing.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from analysis.core.errors import InputError, NotFoundError
from analysis.core.store import Store
from judges.config import BACKEND_NAMES, JudgeConfig, declared_setting, default
from judges.plan import Plan, Selection, plan_run

# The run's `source`: how a repeat is told from other runs of its judge (and its number read).
SOURCE = "repeat {n} on {dataset} at temperature {t:g}"
SOURCE_PATTERN = r"^repeat (\d+) on .* at temperature ([0-9.eE+-]+)$"

# What the judges table keeps of a judge's configuration: its fingerprint (JudgeConfig).
JUDGE_SETTINGS = "SELECT kind, backend, params FROM judges WHERE judge = ?"

# The judges Finegrain can call again (run by it: a known backend and a stored configuration).
CALLABLE_JUDGES = """
SELECT judge FROM judges
WHERE kind = 'llm' AND list_contains(?::VARCHAR[], backend) AND params IS NOT NULL
ORDER BY judge
"""

# The items a judge scored on a dataset (parsed answers), with each judgment's cache key and
# the skills it scored: what a repeat samples from and checks its prompts against.
SCORED_ITEMS = """
SELECT j.instance_id, j.model, j.cache_key, list(DISTINCT s.skill) AS skills
FROM judgments j JOIN scores s ON s.judgment_id = j.judgment_id
WHERE j.judge = ? AND j.dataset = ? AND j.parse_status = 'ok' AND j.cache_key IS NOT NULL
GROUP BY j.instance_id, j.model, j.cache_key
"""

# Runs of a judge on a dataset, oldest first (the repeats among them are read by their source).
JUDGE_RUNS = """
SELECT source, status FROM runs WHERE judge = ? AND dataset = ? ORDER BY started_at, run_id
"""

# The settings of a judge that say where and how fast it runs, not what it answers: a repeat
# may set them (the server may have moved); every other setting is the stored judge's.
RUNTIME_SETTINGS = ("base_url", "timeout_s", "api_key_env", "device", "batch_size")
FINGERPRINT_SETTINGS = (
    "backend", "model", "prompt_version", "rubric", "temperature", "max_tokens",
    "use_reference", "structured",
)  # fmt: skip


@dataclass(frozen=True)
class RepeatPlan:
    """A repeat, ready to run: ``run(store, config, selection)`` (or a ``JudgeJob``)."""

    config: JudgeConfig  # the stored judge at the repeat's temperature
    selection: Selection  # the sampled items, with the repeat's number
    plan: Plan  # the runner's plan: its estimate (calls, tokens, cost) for the page and CLI
    pool: int  # items the judge scored whose prompt is rebuilt exactly (the sample's pool)
    left_out: int  # items it scored whose prompt can no longer be rebuilt
    resumes: bool  # the number is an unfinished (or named) repeat's: its answers are reused

    def lines(self) -> list[str]:
        """What the repeat is, before the estimate's lines."""
        n = len(self.selection.items)
        what = "resumes" if self.resumes else "starts"
        out = [
            f"{what} repeat {self.selection.repeat} at temperature {self.config.temperature:g}: "
            f"{n:,} of the {self.pool:,} items the judge scored"
        ]
        if self.left_out:
            out.append(
                f"{self.left_out:,} scored items left out: their prompt can no longer be "
                "rebuilt exactly (the template, rubric or instance changed since)"
            )
        return out


def repeat_source(dataset: str, n: int, temperature: float) -> str:
    """The ``runs.source`` of a repeat run (the runner writes it)."""
    return SOURCE.format(n=n, dataset=dataset, t=temperature)


def repeat_of(source: str | None) -> tuple[int, float] | None:
    """(number, temperature) of a repeat run from its source; None for any other run."""
    m = re.match(SOURCE_PATTERN, source or "", flags=re.DOTALL)
    return (int(m.group(1)), float(m.group(2))) if m else None


def stored_config(
    store: Store, judge: str, runtime: Mapping[str, Any] | None = None, *, visitor: bool = False
) -> JudgeConfig:
    """The configuration a judge was run with (the judges table's fingerprint), under its own
    name, with ``runtime`` settings (RUNTIME_SETTINGS) given now. ``visitor``: built for someone
    using the app (the key goes only to $OPENAI_BASE_URL, never to a URL typed there)."""
    with store.read() as con:
        row = con.execute(JUDGE_SETTINGS, [judge]).fetchone()
    if row is None:
        with store.read() as con:
            known = [j for (j,) in con.execute(CALLABLE_JUDGES, [list(BACKEND_NAMES)]).fetchall()]
        listed = ", ".join(f"'{j}'" for j in known) if known else "none yet"
        raise NotFoundError(
            f"No judge named '{judge}' in {store.path}. Judges that can be repeated: {listed}."
        )
    kind, backend, params = row
    if kind != "llm" or backend not in BACKEND_NAMES or not params:
        raise InputError(
            "--repeat-of", None, None,
            f"'{judge}' is a {kind} scorer ({backend}) with no configuration to call again: only "
            "a judge run by Finegrain (the judge command or the Re-judge page) can be repeated",
        )  # fmt: skip
    stored = json.loads(params)
    values = {k: stored[k] for k in FINGERPRINT_SETTINGS if k in stored}
    extra = set(runtime or ()) - set(RUNTIME_SETTINGS)
    if extra:
        raise InputError(
            "--repeat-of", None, sorted(extra)[0],
            "a repeat reuses the judge's stored configuration; only the temperature and where "
            f"it runs ({', '.join(RUNTIME_SETTINGS)}) may be given",
        )  # fmt: skip
    values |= {k: v for k, v in (runtime or {}).items() if v is not None}
    config = JudgeConfig.from_mapping(values | {"name": judge}, f"judge '{judge}'")
    if visitor:
        return replace(config, trust_base_url=False, api_key_env=default("api_key_env"))
    return config


def check_temperature(temperature: float) -> float:
    """A repeat's temperature: above 0 and within the setting's bounds."""
    top = declared_setting("temperature").max or 2.0
    if not 0 < temperature <= top:
        raise InputError(
            "--temperature", None, None,
            f"a repeat samples the judge again, so it needs a temperature above 0 (at most "
            f"{top:g}), got {temperature:g}: at temperature 0 the same prompt gives the same "
            "answer and the repeat measures nothing. FLASK's repeats used 1.0.",
        )  # fmt: skip
    return float(temperature)


def repeat_number(store: Store, judge: str, dataset: str, temperature: float) -> tuple[int, bool]:
    """The number of the repeat to run, and whether it resumes one: the latest repeat when its
    last run did not complete at this temperature (a rerun after a crash or a cancel finishes
    it), else the next number."""
    with store.read() as con:
        rows = con.execute(JUDGE_RUNS, [judge, dataset]).fetchall()
    last: dict[int, tuple[float, str]] = {}
    for source, status in rows:
        if (r := repeat_of(source)) is not None:
            last[r[0]] = (r[1], status)
    if not last:
        return 1, False
    n = max(last)
    t, status = last[n]
    if status != "complete" and abs(t - temperature) < 1e-9:
        return n, True
    return n + 1, False


def plan_repeat(
    store: Store,
    judge: str,
    dataset: str,
    *,
    sample: int | None = None,
    seed: int = 0,
    temperature: float | None = None,
    repeat: int | None = None,
    runtime: Mapping[str, Any] | None = None,
    visitor: bool = False,
    concurrency: int = 8,
    prices: Any = None,
) -> RepeatPlan:
    """Plan a repeat of ``judge`` on ``sample`` items (all when None) it scored in ``dataset``,
    drawn with ``seed`` (the same seed and a larger sample extend a repeat's sample), at
    ``temperature`` (default: the judge's own, which must then be above 0). ``repeat``: the
    repeat's number (default: resume the latest unfinished one, else a new one)."""
    store.ensure()
    original = stored_config(store, judge, runtime, visitor=visitor)
    t = check_temperature(original.temperature if temperature is None else temperature)
    if sample is not None and sample < 1:
        raise InputError("--sample", None, None, f"expected at least 1 item, got {sample}")
    if repeat is not None and repeat < 1:
        raise InputError("--repeat", None, None, f"expected a number from 1, got {repeat}")
    pool, skills, left_out = _pool(store, original, dataset)
    rng = random.Random(seed)
    drawn = rng.sample(pool, len(pool))[: sample or len(pool)]
    if repeat is None:
        n, resumes = repeat_number(store, judge, dataset, t)
    else:
        n, resumes = repeat, _known(store, judge, dataset, repeat)
    config = replace(original, temperature=t)
    selection = Selection(dataset, skills=skills, items=tuple(sorted(drawn)), repeat=n)
    plan = plan_run(store, config, selection, concurrency=concurrency, prices=prices)
    return RepeatPlan(config, selection, plan, len(pool), left_out, resumes)


def _known(store: Store, judge: str, dataset: str, n: int) -> bool:
    with store.read() as con:
        rows = con.execute(JUDGE_RUNS, [judge, dataset]).fetchall()
    return any((r := repeat_of(s)) is not None and r[0] == n for s, _ in rows)


def _pool(
    store: Store, original: JudgeConfig, dataset: str
) -> tuple[list[tuple[str, str]], tuple[str, ...], int]:
    """The items whose original prompt is rebuilt byte for byte (its cache key is stored), the
    skills the judge scored, and how many scored items cannot be rebuilt."""
    with store.read() as con:
        rows = con.execute(SCORED_ITEMS, [original.judge, dataset]).fetchall()
    if not rows:
        raise InputError(
            "--repeat-of", None, None,
            f"'{original.judge}' has scored nothing in '{dataset}' yet: run it first (the "
            "judge command or the Re-judge page), then repeat it",
        )  # fmt: skip
    keys: dict[tuple[str, str], set[str]] = {}
    for instance_id, model, key, _ in rows:
        keys.setdefault((instance_id, model), set()).add(key)
    # The union of the skills it scored: an item's own skills within it are the ones it was
    # asked about (all of them, or those of the run's skills option), so its prompt is rebuilt.
    skills = tuple(sorted({s for *_, scored in rows for s in scored}))
    every = Selection(dataset, skills=skills, items=tuple(sorted(keys)))
    rebuilt = plan_run(store, original, every).calls
    same = [
        (c.item.instance_id, c.item.model)
        for c in rebuilt
        if c.cache_key in keys[(c.item.instance_id, c.item.model)]
    ]
    if not same:
        raise InputError(
            "--repeat-of", None, None,
            f"none of the {len(keys):,} prompts '{original.judge}' was asked in '{dataset}' can "
            "be rebuilt exactly (its template, rubric or the instances changed since): a repeat "
            "would not ask the same question",
        )  # fmt: skip
    return sorted(same), skills, len(keys) - len(same)

"""Judges page, Failures: how often does each LLM judge give no usable score, and where?

Three rates per judge and skill (and all skills pooled), each with its n and a 95% CI:

- **N/A rate**: the judge's latest scores of the skill that are N/A (NULL), among its latest
  scores of it.
- **Parse-failure rate**: its latest judgments (one per judge × instance × model: the last one
  written, so a re-judge replaces what it superseded) whose output could not be parsed
  (``parse_status = 'failed'``), among its latest judgments of items that need the skill (the
  instance's skills: an output that cannot be parsed gives no score for any of them).
- **Call-failure rate**: likewise, judgments whose call failed (``'error'``: no output).

The CI is the wider of two: the percentile interval of the instance bootstrap (the judgments
of one instance are correlated: one prompt, 8 models) and Wilson's score interval, which stays
honest at a rate of 0 or 1 and at small n, where every bootstrap resample has the same rate.
The failing judgments themselves are listed with a link to each on the Samples page.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from urllib.parse import urlencode

import numpy as np
import pandas as pd

from analysis.core.filters import Filters, filter_sql
from analysis.core.store import Store
from analysis.stats.means import LEVEL, N_BOOT, bootstrap_weights, cluster_bootstrap_means
from analysis.views.guidance import EmptyState
from analysis.views.judge_leniency import ALL_SKILLS, load_scores, skill_labels
from analysis.views.sample_detail import detail_link
from analysis.views.scorers import skill_order
from analysis.views.tables import table_bytes

# The latest judgment of each LLM judge × instance × model in the slice; the skills its item
# needs. The sequence orders judgments as they were written: the last one is the current one.
LATEST_JUDGMENTS = """
SELECT j.judgment_id, j.run_id, j.judge, j.instance_id, j.model, j.parse_status, j.error,
       left(j.raw_output, ?) AS excerpt, i.skills
FROM judgments j
-- Every judge that calls has a judges row (the runner and imports write it); a verbosity
-- check's rewriter (judges/rewrite.py) has none: its calls are not judgments of a judge.
JOIN judges g ON g.judge = j.judge AND g.kind = 'llm'
JOIN instances i ON i.dataset = j.dataset AND i.instance_id = j.instance_id
WHERE {where}
  -- A repeat run's calls are history (schema.sql, v6): the judge's current state is the rest.
  AND j.run_id NOT IN (SELECT run_id FROM runs WHERE repeat_number IS NOT NULL)
QUALIFY row_number() OVER (PARTITION BY j.judge, j.instance_id, j.model
                           ORDER BY j.judgment_id DESC) = 1
"""

EXCERPT_CHARS = 300
STATUS = {"failed": "unparseable output", "error": "call failed"}
RATES = {"na": "N/A", "failed": "parse failure", "error": "call failure"}


@dataclass(frozen=True)
class FailuresQuery:
    filters: Filters
    n_boot: int = N_BOOT
    seed: int = 0
    level: float = LEVEL


@dataclass(frozen=True)
class Failures:
    rates: pd.DataFrame  # judge, skill (None = all), label, then n_/count/rate/low/high per rate
    failing: pd.DataFrame  # one row per failing latest judgment (FAILING_COLS)
    judges: tuple[str, ...]
    empty: EmptyState | None


FAILING_COLS = ["judge", "instance_id", "model", "status", "error", "excerpt", "run_id",
                "judgment_id", "link"]  # fmt: skip


def latest_judgments(store: Store, filters: Filters) -> pd.DataFrame:
    where, params = filter_sql(replace(filters, judge=None), alias="j")
    with store.read() as con:
        rel = con.sql(LATEST_JUDGMENTS.format(where=where), params=[EXCERPT_CHARS, *params])
        return rel.to_arrow_table().to_pandas()


def failures(store: Store, q: FailuresQuery) -> Failures:
    scores = load_scores(store, q.filters)
    scores = scores[scores["kind"] == "llm"]
    judgments = latest_judgments(store, q.filters)
    labels = skill_labels(scores)
    rates = failure_rates(judgments, scores, q.n_boot, q.seed, q.level)
    rates["label"] = [labels.get(s, s) if s else ALL_SKILLS for s in rates["skill"]]
    judges = tuple(sorted({*judgments["judge"].unique(), *scores["judge"].unique()}))
    empty = None
    if not judges:
        empty = EmptyState("no_llm", "No LLM judge has judged this slice.",
                           "Run a judge (Re-judge page), or import a judge's scores; widen the "
                           "sidebar's filters if they leave nothing.")  # fmt: skip
    return Failures(rates, failing_table(judgments, q.filters.dataset), judges, empty)


def _long(judgments: pd.DataFrame, scores: pd.DataFrame) -> pd.DataFrame:
    """One row per event: (judge, skill, instance_id, rate, hit). Judgments count once per
    skill their item needs and once pooled (skill None); scores once per skill and pooled."""
    j = judgments.explode("skills").rename(columns={"skills": "skill"})
    j = j[j["skill"].notna()]
    parts = []
    for rate in ("failed", "error"):
        hit = (j["parse_status"] == rate).to_numpy(float)
        parts.append(
            pd.DataFrame(
                {
                    "judge": j["judge"],
                    "skill": j["skill"],
                    "instance_id": j["instance_id"],
                    "rate": rate,
                    "hit": hit,
                }
            )
        )
        pooled = (judgments["parse_status"] == rate).to_numpy(float)
        parts.append(pd.DataFrame({"judge": judgments["judge"], "skill": None,
                                   "instance_id": judgments["instance_id"], "rate": rate,
                                   "hit": pooled}))  # fmt: skip
    na = scores["score"].isna().to_numpy(float)
    for skill in (scores["skill"], None):
        parts.append(pd.DataFrame({"judge": scores["judge"], "skill": skill,
                                   "instance_id": scores["instance_id"], "rate": "na",
                                   "hit": na}))  # fmt: skip
    return pd.concat([p for p in parts if len(p)], ignore_index=True)


def failure_rates(judgments: pd.DataFrame, scores: pd.DataFrame, n_boot: int = N_BOOT,
                  seed: int = 0, level: float = LEVEL) -> pd.DataFrame:  # fmt: skip
    """Per judge × skill (skill None = all skills): each rate's n, count, rate and CI."""
    cols = ["judge", "skill"] + [f"{p}_{r}" for r in RATES for p in ("n", "count", "rate",
                                                                    "low", "high")]  # fmt: skip
    if judgments.empty and scores.empty:
        return pd.DataFrame(columns=cols)
    ev = _long(judgments, scores)
    ev["skill_key"] = ev["skill"].fillna("")
    cells = ev.groupby(["judge", "skill_key", "rate"], sort=False).ngroup().to_numpy()
    inst, icode = np.unique(ev["instance_id"].to_numpy(str), return_inverse=True)
    sums, counts = np.zeros((len(inst), cells.max() + 1)), np.zeros((len(inst), cells.max() + 1))
    np.add.at(sums, (icode, cells), ev["hit"].to_numpy(float))
    np.add.at(counts, (icode, cells), 1.0)
    ci = cluster_bootstrap_means(sums, counts, weights=bootstrap_weights(len(inst), n_boot, seed),
                                 level=level)  # fmt: skip
    keys = ev.assign(_c=cells).drop_duplicates("_c").sort_values("_c")
    keys = keys[["judge", "skill", "skill_key", "rate"]].reset_index(drop=True)
    n, k = counts.sum(0), sums.sum(0)
    w_lo, w_hi = wilson(k, n, level)
    keys["n"], keys["count"], keys["rate_"] = n.astype(int), k.astype(int), ci.mean
    keys["low"], keys["high"] = np.fmin(ci.lo, w_lo), np.fmax(ci.hi, w_hi)
    wide = keys.pivot(index=["judge", "skill_key"], columns="rate",
                      values=["n", "count", "rate_", "low", "high"])  # fmt: skip
    out = pd.DataFrame(index=wide.index)
    for r in RATES:
        for p, src in (("n", "n"), ("count", "count"), ("rate", "rate_"), ("low", "low"),
                       ("high", "high")):  # fmt: skip
            out[f"{p}_{r}"] = wide.get((src, r), np.nan)
    out = out.reset_index()
    out["skill"] = pd.Series([k or None for k in out["skill_key"]], dtype=object)
    for r in RATES:
        out[f"n_{r}"] = out[f"n_{r}"].fillna(0).astype(int)
        out[f"count_{r}"] = out[f"count_{r}"].fillna(0).astype(int)
    order = {s: i for i, s in enumerate(skill_order(out["skill"].dropna().unique()))}
    out["_o"] = out["skill"].map(lambda s: order.get(s, len(order)) if s else len(order) + 1)
    return out.sort_values(["judge", "_o"]).reset_index(drop=True)[cols]


def wilson(k: np.ndarray, n: np.ndarray, level: float = LEVEL) -> tuple[np.ndarray, np.ndarray]:
    """Wilson's score interval of k successes in n trials (NaN where n = 0)."""
    # scipy.special, not scipy.stats: the same quantile without importing scipy.stats (~1.6 s).
    from scipy.special import ndtri

    z = ndtri(0.5 + level / 2)
    k, n = np.asarray(k, float), np.asarray(n, float)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = k / n
        denom = 1 + z * z / n
        centre = (p + z * z / (2 * n)) / denom
        half = z / denom * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return np.clip(centre - half, 0, 1), np.clip(centre + half, 0, 1)


def sample_link(dataset: str, instance_id: str, model: str) -> str:
    """Link to a response on the Samples page (its query-parameter contract)."""
    return "samples?" + urlencode(detail_link(dataset, instance_id, model))


def failing_table(judgments: pd.DataFrame, dataset: str) -> pd.DataFrame:
    """The latest judgments that gave no score (unparseable, or the call failed)."""
    bad = judgments[judgments["parse_status"].isin(list(STATUS))]
    bad = bad.sort_values(["judge", "instance_id", "model"], key=_natural)
    return pd.DataFrame({
        "judge": bad["judge"], "instance_id": bad["instance_id"], "model": bad["model"],
        "status": bad["parse_status"].map(STATUS), "error": bad["error"],
        "excerpt": bad["excerpt"], "run_id": bad["run_id"], "judgment_id": bad["judgment_id"],
        "link": [sample_link(dataset, i, m) for i, m in zip(bad["instance_id"], bad["model"],
                                                             strict=True)],
    }, columns=FAILING_COLS).reset_index(drop=True)  # fmt: skip


def _natural(col: pd.Series) -> pd.Series:
    """Instance ids in numeric order where they are numbers ("2" before "10")."""
    if col.name != "instance_id":
        return col
    return col.map(lambda v: (0, int(v), "") if str(v).isdigit() else (1, 0, str(v)))


# ------------------------------------------------------------ tables for reading, CSV


def rates_table(r: Failures) -> pd.DataFrame:
    """One row per judge × skill: each rate as %, its CI and n."""
    c = r.rates
    out = pd.DataFrame({"Judge": c["judge"], "Skill": c["label"]})
    for key, name in RATES.items():
        out[f"{name} (%)"] = (c[f"rate_{key}"] * 100).round(2)
        out[f"{name} 95% CI (%)"] = [
            f"[{lo * 100:.2f}, {hi * 100:.2f}]" if lo == lo else "–"
            for lo, hi in zip(c[f"low_{key}"], c[f"high_{key}"], strict=True)
        ]
        out[f"{name} n"] = c[f"n_{key}"]
    return out


def failing_view(r: Failures) -> pd.DataFrame:
    """The failing judgments for reading: the excerpt as plain text, the Sample link last."""
    f = r.failing
    return pd.DataFrame({
        "Judge": f["judge"], "Instance": f["instance_id"], "Model": f["model"],
        "Status": f["status"], "Error": f["error"].fillna(""),
        "Output (start)": f["excerpt"].fillna("(no output)").str.replace("\n", " ⏎ "),
        "Sample": f["link"],
    })  # fmt: skip


def rate_skills(r: Failures) -> list[str | None]:
    """The page's skill picker: all skills pooled (None), then each skill with rates."""
    return [None, *r.rates["skill"].dropna().unique()]


def rate_labels(r: Failures) -> dict[str, str]:
    """Skill → label of the skills in the rates (the pooled row left out)."""
    rows = r.rates[r.rates["skill"].notna()].drop_duplicates("skill")
    return dict(zip(rows["skill"], rows["label"], strict=True))


def rates_csv(r: Failures, fmt: str = "csv") -> bytes:
    return table_bytes(r.rates, fmt)


def failing_csv(r: Failures, fmt: str = "csv") -> bytes:
    return table_bytes(r.failing, fmt)

"""Benchmark: every agreement statistic with 1,000 instance-level bootstrap resamples.

    python bench/agreement.py [--pairs 100000] [--n-boot 1000] [--repeat 3]

Shapes (1–5 scores, A = judge, B = a noisy copy):
- FLASK-like: instances × 8 models × 3 skills ≈ --pairs aligned pairs;
- worst case for the bootstrap: one pair per instance (100k instances);
- end to end: ``agreement()`` on a DuckDB file holding the FLASK-like pairs (load included).
Baseline in the same run: a plain loop that expands each resample and calls scipy, sklearn and
krippendorff (timed on a few resamples, scaled to --n-boot). Goal: ≤ 2 s for all statistics.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from analysis.core.filters import Filters  # noqa: E402
from analysis.core.store import Store  # noqa: E402
from analysis.ingest.score_files import import_scores  # noqa: E402
from analysis.stats import agreement_bootstrap as boot  # noqa: E402
from analysis.stats.means import bootstrap_weights  # noqa: E402
from analysis.views.agreement import AgreementQuery, agreement  # noqa: E402
from bench.timing import timed  # noqa: E402

SKILLS = ["robustness", "correctness", "factuality", "readability", "conciseness", "insightfulness"]


def flask_like(n_pairs: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    n_inst = max(1, n_pairs // 24)
    inst = np.repeat(np.arange(n_inst), 24)
    model = np.tile(np.repeat(np.arange(8), 3), n_inst)
    skill = (np.tile(np.tile(np.arange(3), 8), n_inst) + inst) % len(SKILLS)
    truth = rng.integers(1, 6, len(inst))
    a = np.clip(truth + rng.integers(-1, 2, len(inst)), 1, 5).astype(float)
    b = np.clip(truth + rng.integers(-1, 2, len(inst)), 1, 5).astype(float)
    return pd.DataFrame({"inst": inst, "model": model, "skill": skill, "a": a, "b": b})


def all_statistics(df: pd.DataFrame, n_boot: int) -> dict[str, float]:
    """Seconds per part: pooled (per skill + overall), per-instance, system, raters' α."""
    n_inst = int(df["inst"].max()) + 1
    inst, a, b = df["inst"].to_numpy(), df["a"].to_numpy(), df["b"].to_numpy()
    skill, model = df["skill"].to_numpy(), df["model"].to_numpy()
    t = {}
    w = None

    def weights():
        nonlocal w
        w = bootstrap_weights(n_inst, n_boot, 0)

    t["resample weights"] = timed(weights)
    groups = np.concatenate([skill, np.full(len(df), len(SKILLS))])
    rows = np.concatenate([np.arange(len(df))] * 2)
    t["pooled: 9 statistics × (skills + overall)"] = timed(
        lambda: boot.pooled(a[rows], b[rows], inst[rows], groups, len(SKILLS) + 1, w)
    )
    unit = inst * len(SKILLS) + skill
    unit_codes = pd.factorize(unit)[0]
    t["per-instance correlations"] = timed(
        lambda: boot.per_instance(a, b, inst, unit_codes, model, w)
    )
    t["system correlations"] = timed(lambda: boot.system(a, b, inst, model, w))
    items = pd.factorize(pd.Series(inst * 1000 + model * 10 + skill))[0]
    units = np.concatenate([items, items])
    values = np.concatenate([a, b])
    t["raters' α (2 raters)"] = timed(
        lambda: boot.raters_alpha(units, values, np.concatenate([inst, inst]), w)
    )
    return t


def baseline_loop(df: pd.DataFrame, n_boot: int, sample: int = 3) -> float:
    """Seconds a plain per-resample loop with the reference libraries would take."""
    import krippendorff
    from scipy import stats
    from sklearn.metrics import cohen_kappa_score

    n_inst = int(df["inst"].max()) + 1
    w = bootstrap_weights(n_inst, sample, 1)
    inst, a, b = df["inst"].to_numpy(), df["a"].to_numpy(), df["b"].to_numpy()

    def one(row):
        idx = np.repeat(np.arange(len(df)), row[inst].astype(int))
        x, y = a[idx], b[idx]
        stats.spearmanr(x, y), stats.kendalltau(x, y), stats.pearsonr(x, y)
        np.abs(x - y).mean(), (x == y).mean(), (np.abs(x - y) <= 1).mean()
        cohen_kappa_score(x.astype(int), y.astype(int), weights="quadratic")
        for level in ("ordinal", "interval"):
            krippendorff.alpha(np.vstack([x, y]), level_of_measurement=level)

    per = statistics.median(timed(lambda r=r: one(r)) for r in w)
    return per * n_boot * (len(SKILLS) + 1)  # the same for every skill and overall


def end_to_end(df: pd.DataFrame, n_boot: int, repeat: int) -> tuple[float, int]:
    with tempfile.TemporaryDirectory() as tmp:
        rows = []
        for side, judge, kind in (("a", "judge", "llm"), ("b", "human", "human")):
            rows.append(
                pd.DataFrame(
                    {
                        "instance_id": "i" + df["inst"].astype(str),
                        "model": "m" + df["model"].astype(str),
                        "skill": df["skill"].map(dict(enumerate(SKILLS))),
                        "judge": judge,
                        "kind": kind,
                        "score": df[side],
                    }
                )
            )
        path = Path(tmp) / "pairs.parquet"
        pd.concat(rows).to_parquet(path)
        store = Store(Path(tmp) / "bench.duckdb")
        import_scores(store, path, dataset="bench")
        q = AgreementQuery(Filters("bench"), "judge", "human", n_boot=n_boot)
        times = [timed(lambda: agreement(store, q)) for _ in range(repeat)]
        return statistics.median(times), len(agreement(store, q).pairs)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--pairs", type=int, default=100_000)
    p.add_argument("--n-boot", type=int, default=1000)
    p.add_argument("--repeat", type=int, default=3)
    args = p.parse_args()

    df = flask_like(args.pairs)
    print(
        f"FLASK-like: {len(df):,} aligned pairs, {df['inst'].nunique():,} instances, "
        f"{args.n_boot} resamples (median of {args.repeat})"
    )
    runs = [all_statistics(df, args.n_boot) for _ in range(args.repeat)]
    total = statistics.median(sum(r.values()) for r in runs)
    for part in runs[0]:
        print(f"  {part:<45} {statistics.median(r[part] for r in runs) * 1000:8.0f} ms")
    print(f"  {'all statistics':<45} {total * 1000:8.0f} ms   (goal ≤ 2000 ms)")
    base = baseline_loop(df, args.n_boot)
    print(
        f"  baseline: per-resample loop with scipy/sklearn/krippendorff ≈ {base:,.0f} s "
        f"(pooled statistics only) → {base / total:,.0f}× slower"
    )

    worst = df.assign(inst=np.arange(len(df)))
    runs = [all_statistics(worst, args.n_boot) for _ in range(args.repeat)]
    total = statistics.median(sum(r.values()) for r in runs)
    weights = statistics.median(r["resample weights"] for r in runs)
    print(
        f"One pair per instance ({len(worst):,} instances): all statistics {total * 1000:.0f} ms"
        f" (resample weights {weights * 1000:.0f} ms)"
    )

    secs, n = end_to_end(df, args.n_boot, args.repeat)
    print(
        f"End to end, agreement() on a DuckDB file ({n:,} pairs, load + all statistics, "
        f"per-instance skipped, system + ceiling included): {secs * 1000:.0f} ms"
    )


if __name__ == "__main__":
    main()

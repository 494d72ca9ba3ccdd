"""Benchmark: every agreement statistic with 1,000 instance-level bootstrap resamples.

    python bench/agreement.py [--pairs 100000] [--n-boot 1000] [--repeat 3]
    python bench/agreement.py --demo [--before /work/before] [--repeat 5]

With --demo: ``agreement()`` in process, warm, on the simulated demo (built in a temporary
folder), per correlation level, with --by domain and with a new seed (the aligned items reused,
every statistic recomputed), and ``python -m analysis agreement … --json`` end to end; with
--before, the same figures for the checkout at that path, measured in the same run
(alternating, median of --repeat), so that a loaded machine slows both alike.
Goals (issue 14): ≤ 0.3 s per in-process call, ≤ 1 s for the command.

Shapes (1–5 scores, A = judge, B = a noisy copy):
- FLASK-like: instances × 8 models × 3 skills ≈ --pairs aligned pairs;
- worst case for the bootstrap: one pair per instance (100k instances);
- end to end: ``agreement()`` on a DuckDB file holding the FLASK-like pairs (load included).
Baseline in the same run: a plain loop that expands each resample and calls scipy, sklearn and
krippendorff (timed on a few resamples, scaled to --n-boot). Goal: ≤ 2 s for all statistics.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
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


ROOT = Path(__file__).resolve().parent.parent
# (level, slice field, a new seed per timed call): the last, the cost of changing the seed (or
# the number of resamples), where the aligned items are reused and every statistic recomputed.
DEMO_CALLS = [
    ("pooled", None, False),
    ("instance", None, False),
    ("system", None, False),
    ("pooled", "domain", False),
    ("pooled", None, True),
]
DEMO_A, DEMO_B = "gpt-4 (simulated)", "kind:human"
# Runs in a child process with the checkout to measure first on sys.path: one warm-up call per
# query, then the timed calls; prints {"level by": [seconds, ...]}.
_WARM = """
import json, sys, time
sys.path.insert(0, sys.argv[1])
from analysis.core.filters import Filters
from analysis.core.store import Store
from analysis.views.agreement import AgreementQuery, agreement
store, out = Store(sys.argv[2]), {}
for level, by, fresh in json.loads(sys.argv[3]):
    q = AgreementQuery(Filters("demo"), sys.argv[4], sys.argv[5], level, None, by)
    agreement(store, q)
    times = []
    for i in range(int(sys.argv[6])):
        seed = 1000 + i if fresh else 0
        q = AgreementQuery(Filters("demo"), sys.argv[4], sys.argv[5], level, None, by, seed=seed)
        t = time.perf_counter()
        agreement(store, q)
        times.append(time.perf_counter() - t)
    out[f"{level} {by or ''}".strip() + (" new seed" if fresh else "")] = times
print(json.dumps(out))
"""


def warm_calls(root: Path, db: Path, repeat: int) -> dict[str, list[float]]:
    """Seconds of each warm in-process ``agreement()`` call, measured with ``root``'s code."""
    args = [str(root), str(db), json.dumps(DEMO_CALLS), DEMO_A, DEMO_B, str(repeat)]
    out = subprocess.run(
        [sys.executable, "-c", _WARM, *args], capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout)


def command_seconds(root: Path, db: Path) -> float:
    """Wall-clock seconds of ``python -m analysis agreement … --json`` run from ``root``."""
    cmd = [sys.executable, "-m", "analysis", "agreement", "--db", str(db), "--dataset", "demo"]
    cmd += ["--a", DEMO_A, "--b", DEMO_B, "--json"]
    env = {**os.environ, "PYTHONPATH": str(root)}
    t = time.perf_counter()
    subprocess.run(cmd, cwd=root, env=env, capture_output=True, check=True)
    return time.perf_counter() - t


def demo_table(before: Path | None, repeat: int) -> None:
    """The demo figures for this checkout (and ``before``), median of ``repeat``."""
    from analysis.ingest.demo import build_and_write_demo

    roots = {"after": ROOT} | ({"before": before} if before else {})
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "demo.duckdb"
        build_and_write_demo(Store(db))
        warm: dict[str, dict[str, list[float]]] = {k: {} for k in roots}
        cli: dict[str, list[float]] = {k: [] for k in roots}
        for _ in range(repeat):  # alternate, so that the machine's load hits both alike
            for name, root in roots.items():
                for call, times in warm_calls(root, db, 1).items():
                    warm[name].setdefault(call, []).extend(times)
                cli[name].append(command_seconds(root, db))
    print(f"agreement() on the demo, warm, in process (median of {repeat}; goal ≤ 0.3 s):")
    print(f"  {'call':<16}" + "".join(f"{k:>10}" for k in roots) + ("   ratio" if before else ""))
    rows = [(call, [statistics.median(warm[k][call]) for k in roots]) for call in warm["after"]]
    rows.append(("command --json", [statistics.median(cli[k]) for k in roots]))
    for call, secs in rows:
        ratio = f"{secs[1] / secs[0]:7.1f}×" if before else ""
        print(f"  {call:<16}" + "".join(f"{x:9.2f}s" for x in secs) + ratio)
    print("  (command --json: end to end with imports; goal ≤ 1 s)")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--pairs", type=int, default=100_000)
    p.add_argument("--n-boot", type=int, default=1000)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--demo", action="store_true", help="the demo figures (see above)")
    p.add_argument("--before", type=Path, help="with --demo: a checkout to compare with")
    args = p.parse_args()
    if args.demo:
        demo_table(args.before, args.repeat)
        return

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

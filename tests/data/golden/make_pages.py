"""Golden values of the Overview, Skill radar and Breakdowns data functions (issue 14: "no
statistic changes by a single bit for the same seed").

Run it with the code *before* a change to (re)write ``pages.json`` beside this file:

    cd /work/before && /work/main/.venv/bin/python \\
        /work/main/tests/data/golden/make_pages.py --root /work/before

``--root`` is the repository whose ``analysis`` package computes the values (default: the one
this file is in). tests/views/test_golden_pages.py imports ``compute`` from here and compares
the current code's values with the stored ones exactly: floats are stored as ``float.hex``
(NaN as "nan"), rows in a canonical order (a GROUP BY returns them in any order).

Stores: the simulated demo (its own seed) and the real FLASK instances (../shared/flask) with
scores generated here from a fixed seed: judge "gen-a" (4 models, every instance, 5% N/A) and
"gen-b" (2 models, 300 instances, half points, so its means are not whole eighths).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd

FLASK_DIR = Path("/work/shared/flask")
HERE = Path(__file__).resolve().parent
OUT = HERE / "pages.json"
DEMO_JUDGE = "gpt-4 (simulated)"
GEN_MODELS = ("gpt4", "vicuna_13b", "tulu_7b", "bard")
FULL_ROWS = 40  # a frame with more rows is stored as its hash, its count and its first rows


def encode(v):
    """One value as JSON, exactly: floats as hex, NaN as "nan", missing as None."""
    if v is None or v is pd.NA or v is pd.NaT:
        return None
    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    if isinstance(v, (int, np.integer)):
        return int(v)
    if isinstance(v, (float, np.floating)):
        return "nan" if math.isnan(v) else float(v).hex()
    if isinstance(v, (list, tuple, np.ndarray)):
        return [encode(x) for x in v]
    return str(v)


def frame(df: pd.DataFrame) -> dict:
    """Columns and rows in a canonical order; past ``FULL_ROWS`` rows, their count, a SHA-256
    of them all and the first ``FULL_ROWS`` (where a difference starts), to keep the file small."""
    rows = [[encode(v) for v in row] for row in df.itertuples(index=False, name=None)]
    rows = sorted(rows, key=json.dumps)
    out: dict = {"columns": [str(c) for c in df.columns]}
    if len(rows) <= FULL_ROWS:
        return out | {"rows": rows}
    digest = hashlib.sha256(json.dumps(rows).encode()).hexdigest()
    return out | {"n_rows": len(rows), "sha256": digest, "rows": rows[:FULL_ROWS]}


def generated_scores(store) -> pd.DataFrame:
    """The generated FLASK scores (long format), a pure function of the instances."""
    with store.read() as con:
        inst = con.execute(
            "SELECT instance_id, skills FROM instances WHERE dataset = 'flask' ORDER BY instance_id"
        ).df()
    rng = np.random.default_rng(14)
    rows = [
        (i, m, s) for i, sk in zip(inst["instance_id"], inst["skills"], strict=True)
        for s in sk for m in GEN_MODELS
    ]  # fmt: skip
    a = pd.DataFrame(rows, columns=["instance_id", "model", "skill"])
    a["score"] = rng.integers(1, 6, len(a)).astype(float)
    a.loc[rng.random(len(a)) < 0.05, "score"] = np.nan
    picked = set(inst["instance_id"].iloc[:300])
    b = a[a["model"].isin(GEN_MODELS[:2]) & a["instance_id"].isin(picked)].copy()
    b["score"] = rng.integers(2, 11, len(b)) / 2
    return pd.concat([a.assign(judge="gen-a"), b.assign(judge="gen-b")], ignore_index=True)


def add_generated(store, tmp: Path) -> None:
    from analysis.ingest.score_files import import_scores

    scores = generated_scores(store)
    for judge, part in scores.groupby("judge"):
        csv = tmp / f"{judge}.csv"
        part.drop(columns="judge").to_csv(csv, index=False)
        import_scores(store, csv, judge=judge, dataset="flask")


def build(tmp: Path):
    """(demo store, FLASK store) built from scratch in ``tmp``."""
    from analysis.core.store import Store
    from analysis.ingest.demo import build_and_write_demo
    from analysis.ingest.flask_source import import_flask

    demo = Store(tmp / "demo.duckdb")
    build_and_write_demo(demo)
    flask = Store(tmp / "flask.duckdb")
    import_flask(flask, str(FLASK_DIR))
    add_generated(flask, tmp)
    return demo, flask


def _filters(store, dataset: str, judge: str) -> dict:
    from analysis.core.filters import Filters
    from analysis.views import overview

    opts = overview.filter_options(store, dataset)
    base = Filters(dataset, judge)
    return {
        "all": base,
        "domains": replace(base, domains=opts.domains[:2]),
        "levels": replace(base, difficulties=(4, 5)),
        "hard": replace(base, flask_hard_only=True),
        "models": replace(base, models=opts.models[:3]),
        "tasks": replace(base, source_tasks=opts.source_tasks[:5]),
        "no judge": replace(base, judge=None),
    }


def _radar(data) -> dict:
    return {
        "table": frame(data.table),
        "axes": list(data.axes),
        "labels": {str(k): str(v) for k, v in data.labels.items()},
        "published": frame(data.published),
        "published_subset": data.published_subset,
    }


def compute_store(store, dataset: str, judge: str, annotator: str | None) -> dict:
    from analysis.views import breakdowns, overview, radar

    out: dict = {}
    filters = _filters(store, dataset, judge)
    if annotator:
        filters["annotator"] = replace(filters["all"], judge=annotator)
    models = overview.filter_options(store, dataset).models
    for name, f in filters.items():
        for by in ("skill", "ability"):
            out[f"radar {by} | {name}"] = _radar(radar.radar_data(store, f, by))
            for a, b in ((models[0], models[1]), (models[-1], models[0])):
                key = f"compare {by} {a}-{b} | {name}"
                out[key] = frame(radar.compare(store, f, a, b, by))
        out[f"difficulty | {name}"] = frame(breakdowns.by_difficulty(store, f))
        out[f"domain | {name}"] = frame(breakdowns.by_domain(store, f))
        out[f"source task | {name}"] = frame(breakdowns.by_source_task(store, f))
        out[f"hard vs full | {name}"] = frame(breakdowns.hard_vs_full(store, f))
        out[f"leaderboard | {name}"] = frame(overview.leaderboard(store, f))
        rank = radar.model_ranking(store, f, models)
        out[f"ranking | {name}"] = {
            "ranked": list(rank.ranked),
            "overall": {m: encode(v) for m, v in rank.overall.items()},
            "unscored": list(rank.unscored),
        }
    return out


def compute(demo, flask) -> dict:
    """Every golden value, from the stores ``build`` makes, with the importable code."""
    return {
        "demo": compute_store(demo, "demo", DEMO_JUDGE, "annotator_1"),
        "flask": compute_store(flask, "flask", "gen-a", "gen-b"),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", default=str(HERE.parents[2]))
    ap.add_argument("--out", default=str(OUT))
    args = ap.parse_args()
    sys.path.insert(0, str(Path(args.root).resolve()))
    with tempfile.TemporaryDirectory() as tmp:
        values = compute(*build(Path(tmp)))
    Path(args.out).write_text(json.dumps(values, indent=0, sort_keys=True) + "\n")
    print(f"{sum(len(v) for v in values.values())} golden entries → {args.out}")


if __name__ == "__main__":
    main()

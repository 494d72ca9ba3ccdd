"""Golden values of the agreement statistics: every number ``agreement()`` and
``rater_agreement()`` return, stored bit for bit, so that a faster implementation can prove it
changed none of them.

    cd /work/before && /work/main/.venv/bin/python /work/main/bench/agreement_golden.py \
        --root /work/before --out /work/main/tests/data/golden/agreement.json

``--root`` is the checkout whose ``analysis`` package computes the values (the code before the
change); the stores are built with that checkout's own demo builder and score importer. The
test (tests/views/test_agreement_golden.py) rebuilds the same stores with the current code and
compares every value with ``==``. Floats are stored as ``float.hex`` (NaN as "nan"), so the
comparison is exact. Small frames are stored in full; the large ones (aligned pairs, slices)
as a SHA-256 of the same canonical form plus their row count, and the first rows in full.

One deliberate exception: the ``raters`` cases were rewritten with the current code (``--root``
pointing at it, the ``raters`` part only) when ``rater_agreement`` stopped numbering instances in
the store's row order (its CIs changed with the physical order of the rows, e.g. after a
rebuild); it now sorts them, as the pairs' instances always were. Point values and n were
identical before and after; only the CI bounds moved.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import sys
from pathlib import Path
from typing import Any

DEMO_A = "gpt-4 (simulated)"
FULL_ROWS = 12  # rows of a hashed frame kept in full, to show where a difference starts

# (name, store, query fields). Stores: "demo" (the simulated demo), "halves" (a 0–10 scale in
# half points, three humans and two judges), "continuous" (real-valued scores: the raw path).
CASES: list[tuple[str, str, dict[str, Any]]] = [
    ("demo_pooled", "demo", dict(a=DEMO_A, b="kind:human")),
    ("demo_instance", "demo", dict(a=DEMO_A, b="kind:human", level="instance", n_boot=300)),
    ("demo_system", "demo", dict(a=DEMO_A, b="kind:human", level="system", n_boot=300)),
    ("demo_by_domain", "demo", dict(a=DEMO_A, b="kind:human", by="domain")),
    (
        "demo_by_difficulty",
        "demo",
        dict(a=DEMO_A, b="kind:human", by="difficulty", seed=4, n_boot=200),
    ),
    (
        "demo_by_model_instance",
        "demo",
        dict(a=DEMO_A, b="kind:human", level="instance", by="model", seed=9, n_boot=200),
    ),
    (
        "demo_human_vs_group_system",
        "demo",
        dict(a="annotator_1", b="kind:human", level="system", by="model", seed=3, n_boot=200),
    ),
    (
        "demo_llm_vs_annotator_skill",
        "demo",
        dict(
            a="kind:llm",
            b="annotator_2",
            skill="comprehension",
            level="instance",
            by="difficulty",
            seed=5,
            n_boot=200,
        ),
    ),
    (
        "demo_filtered",
        "demo",
        dict(
            a=DEMO_A,
            b="kind:human",
            level="system",
            by="domain",
            filters=dict(
                models=("gpt4", "bard", "vicuna_13b"),
                domains=("Math", "Coding", "Culture"),
                difficulties=(2, 3, 4),
            ),
            seed=2,
            n_boot=200,
        ),
    ),
    (
        "demo_items",
        "demo",
        dict(
            a=DEMO_A,
            b="kind:human",
            level="instance",
            by="domain",
            items="first300",
            seed=1,
            n_boot=200,
        ),
    ),
    ("demo_annotator_pair", "demo", dict(a="annotator_3", b="annotator_2", by="model", n_boot=200)),
    ("halves_pooled", "halves", dict(a="J1", b="kind:human", by="domain", n_boot=200)),
    ("halves_instance", "halves", dict(a="kind:llm", b="h2", level="instance", n_boot=200)),
    (
        "halves_system",
        "halves",
        dict(a="h1", b="kind:human", level="system", by="model", n_boot=200, seed=8),
    ),
    (
        "continuous",
        "continuous",
        dict(a="J1", b="kind:human", by="model", level="system", n_boot=15, seed=2),
    ),
]
RATER_CASES: list[tuple[str, str, dict[str, Any]]] = [
    ("demo_humans", "demo", dict(raters="kind:human")),
    (
        "demo_two_skill",
        "demo",
        dict(raters="annotator_1,annotator_3", skill="factuality", seed=6, n_boot=300),
    ),
    ("halves_humans", "halves", dict(raters="kind:human", n_boot=200)),
    ("continuous_all", "continuous", dict(raters="J1,J2,h1,h2,h3", n_boot=10)),
]


def small_rows(kind: str):
    """The rows of a small store: 40 instances × 4 models × 3 criteria, 2 judges, 3 humans with
    missing ratings and N/A; ``halves``: a 0–10 scale in half points; ``continuous``: real
    values (more than 100 distinct, so the statistics go through the pairs themselves)."""
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(20240 if kind == "halves" else 777)
    rows = []
    for i in range(40):
        domain = ("Math", "Coding", "Math;Coding", "Culture")[i % 4]
        for m in ("m1", "m2", "m3", "m4"):
            for skill in ("helpful", "honest", "clear"):
                truth = rng.uniform(0, 10)
                base = dict(
                    instance_id=f"q{i}", model=m, skill=skill, domain=domain, difficulty=1 + i % 5
                )
                for judge, kind_ in (
                    ("J1", "llm"),
                    ("J2", "llm"),
                    ("h1", "human"),
                    ("h2", "human"),
                    ("h3", "human"),
                ):
                    if kind_ == "human" and rng.random() < 0.25:
                        continue
                    x = float(np.clip(truth + rng.normal(0, 1.5), 0, 10))
                    x = round(x * 2) / 2 if kind == "halves" else round(x, 4)
                    score = "" if rng.random() < 0.04 else x
                    rows.append(base | dict(judge=judge, kind=kind_, score=score))
    return pd.DataFrame(rows)


def build_stores(tmp: Path, demo_path: Path | None = None) -> dict[str, Any]:
    """The stores of CASES under ``tmp`` (the demo copied from ``demo_path`` when given)."""
    import shutil

    from analysis.core.store import Store
    from analysis.ingest.score_files import import_scores

    stores = {}
    demo = tmp / "demo.duckdb"
    if demo_path is not None:
        shutil.copy(demo_path, demo)
    else:
        from analysis.ingest.demo import build_and_write_demo

        build_and_write_demo(Store(demo))
    stores["demo"] = Store(demo)
    for kind in ("halves", "continuous"):
        csv = tmp / f"{kind}.csv"
        small_rows(kind).to_csv(csv, index=False)
        stores[kind] = Store(tmp / f"{kind}.duckdb")
        import_scores(stores[kind], csv, dataset=kind, scale=(0, 10))
    return stores


def _cell(v: Any) -> Any:
    import numpy as np

    if v is None:
        return None
    if isinstance(v, (np.ndarray, list, tuple)):
        return [_cell(x) for x in v]
    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    if isinstance(v, (int, np.integer)):
        return int(v)
    if isinstance(v, (float, np.floating)):
        return "nan" if math.isnan(v) else float(v).hex()
    return str(v)


def frame_data(frame, full: bool = True) -> dict[str, Any]:
    """A frame as exact, JSON-able data: columns, dtypes, rows (or their hash and a head)."""
    cols = [str(c) for c in frame.columns]
    rows = [[_cell(v) for v in rec] for rec in frame.itertuples(index=False, name=None)]
    out: dict[str, Any] = {
        "columns": cols,
        "dtypes": [str(t) for t in frame.dtypes],
        "n_rows": len(rows),
    }
    if full:
        out["rows"] = rows
    else:
        out["sha256"] = hashlib.sha256(json.dumps(rows).encode()).hexdigest()
        out["head"] = rows[:FULL_ROWS]
    return out


def query(store, fields: dict[str, Any], items_from=None):
    from analysis.core.filters import Filters
    from analysis.views.agreement import AgreementQuery

    fields = dict(fields)
    dataset = {"demo": "demo"}.get(store.path.stem, store.path.stem)
    filters = Filters(dataset, **fields.pop("filters", {}))
    items = fields.pop("items", ())
    if items == "first300":
        items = items_from
    return AgreementQuery(filters, items=tuple(items), **fields)


def snapshot_agreement(r) -> dict[str, Any]:
    return {
        "a": [r.a.spec, list(r.a.judges)],
        "b": [r.b.spec, list(r.b.judges)],
        "stats": frame_data(r.stats),
        "slices": frame_data(r.slices, full=False),
        "ceiling": frame_data(r.ceiling),
        "ranks": frame_data(r.ranks),
        "pairs": frame_data(r.pairs, full=False),
        "counts": frame_data(r.counts),
        "scales": {k: [_cell(lo), _cell(hi)] for k, (lo, hi) in r.scales.items()},
        "notes": list(r.notes),
        "humans": list(r.humans),
        "labels": r.labels,
    }


def snapshot(stores: dict[str, Any]) -> dict[str, Any]:
    """Every golden value, computed by the ``analysis`` package on sys.path."""
    from analysis.core.filters import Filters
    from analysis.views.agreement import AgreementQuery, agreement, rater_agreement

    first = agreement(
        stores["demo"], AgreementQuery(Filters("demo"), DEMO_A, "kind:human", n_boot=10)
    )
    items = list(dict.fromkeys(zip(first.pairs["instance_id"], first.pairs["model"], strict=True)))[
        :300
    ]
    out: dict[str, Any] = {"agreement": {}, "raters": {}}
    for name, store, fields in CASES:
        r = agreement(stores[store], query(stores[store], fields, items))
        out["agreement"][name] = snapshot_agreement(r)
    for name, store, fields in RATER_CASES:
        fields = dict(fields)
        frame = rater_agreement(
            stores[store], Filters(stores[store].path.stem), fields.pop("raters"), **fields
        )
        out["raters"][name] = frame_data(frame)
    return out


def main() -> None:
    import tempfile

    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--root", required=True, help="checkout whose analysis package computes")
    p.add_argument("--out", required=True, help="where to write the JSON")
    p.add_argument("--demo", help="a demo store to copy instead of building one")
    args = p.parse_args()
    sys.path.insert(0, str(Path(args.root).resolve()))
    with tempfile.TemporaryDirectory() as tmp:
        stores = build_stores(Path(tmp), Path(args.demo) if args.demo else None)
        data = snapshot(stores)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(data, indent=0, sort_keys=True) + "\n")
    print(f"wrote {args.out} ({Path(args.out).stat().st_size:,} bytes)")


if __name__ == "__main__":
    main()

"""Benchmark: long-format score import (parse + validate, then the DuckDB write) of a generated
file of N rows, per format, against pandas merely reading the same file. Goal: 1M rows parse in
seconds (a small multiple of the plain read), not minutes.

    python bench/import_scores.py [--rows N] [--formats csv,jsonl,parquet]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from analysis.core.store import Store  # noqa: E402
from analysis.ingest.score_files import import_scores, parse_score_file  # noqa: E402
from bench.timing import timed  # noqa: E402

SKILLS = ["correctness", "robustness", "factuality", "readability", "comprehension"]


def generate(n: int, seed: int = 7) -> pd.DataFrame:
    """n scores: 10 models x 5 skills per instance, ~5% N/A, real-valued means."""
    rng = np.random.default_rng(seed)
    per = 10 * len(SKILLS)
    instance = np.repeat(np.arange(n // per + 1), per)[:n]
    score = np.round(rng.uniform(1, 5, n), 2)
    score[rng.random(n) < 0.05] = np.nan
    models = np.repeat([f"model-{m}" for m in range(10)], len(SKILLS))
    return pd.DataFrame({
        "instance_id": instance.astype(str),
        "model": np.tile(models, n // per + 1)[:n],
        "judge": "bench-judge",
        "skill": np.tile(SKILLS, n // len(SKILLS) + 1)[:n],
        "score": score,
        "rationale": "short rationale",
    })  # fmt: skip


def write(frame: pd.DataFrame, folder: Path, fmt: str) -> Path:
    path = folder / f"bench.{fmt}"
    if fmt == "csv":
        frame.to_csv(path, index=False)
    elif fmt == "jsonl":
        frame.to_json(path, orient="records", lines=True)
    else:
        frame.to_parquet(path, index=False)
    return path


def plain_read(path: Path) -> None:
    if path.suffix == ".csv":
        pd.read_csv(path, dtype=str, keep_default_na=False)
    elif path.suffix == ".jsonl":
        pd.read_json(path, lines=True, dtype=False)
    else:
        pd.read_parquet(path)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--formats", default="csv,jsonl,parquet")
    args = ap.parse_args()
    frame = generate(args.rows)
    print(f"{args.rows:,} rows")
    print(f"{'format':8} {'MB':>6} {'pandas read':>12} {'parse':>8} {'ratio':>6} {'import':>8}")
    with tempfile.TemporaryDirectory() as tmp:
        for fmt in args.formats.split(","):
            path = write(frame, Path(tmp), fmt)
            base = timed(lambda p=path: plain_read(p))
            parse = timed(lambda p=path: parse_score_file(p))
            store = Store(Path(tmp) / f"{fmt}.duckdb")
            full = timed(lambda p=path, s=store: import_scores(s, p))
            mb = path.stat().st_size / 1e6
            print(f"{fmt:8} {mb:6.1f} {base:11.2f}s {parse:7.2f}s {parse / base:5.1f}x "
                  f"{full:7.2f}s")  # fmt: skip


if __name__ == "__main__":
    main()

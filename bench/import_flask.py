"""Benchmark: full FLASK import (parse + validate + one DuckDB transaction, durable on close)
against plain ``json`` parsing of the same files. Goal: ratio ≤ 2×.

    python bench/import_flask.py [FLASK_DIR] [--repeat N]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from analysis.core.store import Store  # noqa: E402
from analysis.ingest.flask_source import import_flask  # noqa: E402
from bench.timing import timed  # noqa: E402

DEFAULT = Path(__file__).resolve().parents[2] / "shared" / "flask"


def files_of(root: Path) -> list[Path]:
    return [root / "evaluation_set" / "flask_evaluation.jsonl",
            root / "evaluation_set" / "flask_hard_evaluation.jsonl",
            *sorted((root / "model_output" / "outputs").glob("*.jsonl")),
            *sorted((root / "gpt_review" / "outputs").glob("*.jsonl"))]  # fmt: skip


def plain_json(files: list[Path]) -> int:
    n = 0
    for f in files:
        with f.open(encoding="utf-8") as fh:
            for line in fh:
                json.loads(line)
                n += 1
    return n


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("root", nargs="?", type=Path, default=DEFAULT)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    files = files_of(args.root)
    size = sum(f.stat().st_size for f in files)
    rows = plain_json(files)
    base, full, fresh = [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.repeat):
            base.append(timed(lambda: plain_json(files)))
            store = Store(Path(tmp) / f"bench{i}.duckdb")
            store.ensure()  # schema creation is one-off, not import work
            full.append(timed(lambda s=store: import_flask(s, str(args.root))))
            new = Store(Path(tmp) / f"new{i}.duckdb")
            fresh.append(timed(lambda s=new: import_flask(s, str(args.root))))
    b, f, n = (statistics.median(x) for x in (base, full, fresh))
    print(f"files: {len(files)}, {size / 1e6:.1f} MB, {rows:,} JSON lines; repeats: {args.repeat}")
    print(f"plain json.loads of every line   median {b * 1000:8.1f} ms")
    print(f"import into an existing store    median {f * 1000:8.1f} ms   ratio {f / b:5.2f}x")
    print(f"import into a new file (schema)  median {n * 1000:8.1f} ms   ratio {n / b:5.2f}x")
    print("goal: ratio <= 2x")


if __name__ == "__main__":
    main()

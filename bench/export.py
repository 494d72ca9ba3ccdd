"""Benchmark: ``export`` at 1M scores (and the demo), Parquet and CSV, and reading an export
back with ``import-scores`` into a fresh store.

    python bench/export.py [--scores 1000000] [--repeat 3]

Baseline in the same run: DuckDB's own ``COPY (SELECT * FROM latest_scores) TO … (FORMAT
parquet)`` of the same store (one file, no joins, no partitions): the least an export of the
scores can cost. The figures are medians of --repeat, in seconds, with the ratio to it.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from analysis.core.store import Store  # noqa: E402
from analysis.ingest.demo import build_and_write_demo  # noqa: E402
from analysis.ingest.export import export  # noqa: E402
from analysis.ingest.score_files import import_scores  # noqa: E402
from bench.pages import generate  # noqa: E402
from bench.timing import timed  # noqa: E402


def baseline(store: Store, out: Path) -> None:
    with store.read() as con:
        con.sql("SELECT * FROM latest_scores").to_parquet(str(out), compression="zstd")


def measure(name: str, store: Store, work: Path, repeat: int) -> list[str]:
    runs: dict[str, list[float]] = {"copy": [], "parquet": [], "csv": [], "import": []}
    for i in range(repeat):
        base = work / f"base-{i}.parquet"
        runs["copy"].append(timed(lambda: baseline(store, base)))  # noqa: B023
        for fmt in ("parquet", "csv"):
            out = work / f"{fmt}-{i}"
            runs[fmt].append(timed(lambda: export(store, out, file_format=fmt)))  # noqa: B023
        fresh = Store(work / f"fresh-{i}.duckdb")
        runs["import"].append(timed(lambda: import_scores(fresh, work / f"parquet-{i}")))  # noqa: B023
        for p in work.iterdir():
            if p.name.endswith(f"-{i}") or p.name.endswith(f"-{i}.duckdb") or p == base:
                shutil.rmtree(p) if p.is_dir() else p.unlink()
    med = {k: statistics.median(v) for k, v in runs.items()}
    with store.read() as con:
        n = con.execute("SELECT count(*) FROM latest_scores").fetchall()[0][0]
    lines = [f"{name}: {n:,} scores (median of {repeat}, seconds)"]
    lines.append(f"  DuckDB COPY latest_scores → one Parquet file (baseline): {med['copy']:.2f}")
    for k, label in (("parquet", "export --format parquet"), ("csv", "export --format csv"),
                     ("import", "import-scores of the Parquet export, fresh store")):  # fmt: skip
        lines.append(f"  {label}: {med[k]:.2f} ({med[k] / med['copy']:.1f}× the baseline)")
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--scores", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        demo = Store(work / "demo.duckdb")
        build_and_write_demo(demo)
        big = Store(work / "big.duckdb")
        generate(big, args.scores)
        lines = measure("demo", demo, work, args.repeat)
        lines += measure("generated (bench/pages.py)", big, work, args.repeat)
    print("\n".join(lines))


if __name__ == "__main__":
    main()

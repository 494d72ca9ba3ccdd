"""Benchmark: full FLASK import (parse + validate + one DuckDB transaction, durable on close)
against plain ``json`` parsing of the same files. Goal: ratio ≤ 2×.

    python bench/import_flask.py [FLASK_DIR] [--repeat N] [--other ROOT]

Each repeat times, in turn, the plain parse, an import into a store whose schema exists and an
import into a new file; the medians and their ratios to the parse are printed, as wall-clock
and as CPU time of the process (all its threads: DuckDB's too). On a busy machine the wall
clock mostly measures the queue for a core; CPU time and the ratios hold up better.

``--other ROOT`` also times the same import with the code of another checkout (e.g. the code
before a change, ``--other /work/before``), in a child process per repeat interleaved with this
one's, so that both see the same machine; it prints the same lines for it.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

DEFAULT = Path(__file__).resolve().parents[2] / "shared" / "flask"
# One repeat with the code of the checkout at argv[1]: prints [[wall, cpu] x 3] as JSON.
CHILD = """
import json, sys, tempfile
from pathlib import Path
sys.path.insert(0, sys.argv[3])
from import_flask import one_repeat
sys.path.insert(0, sys.argv[1])  # before the root that module put first: its analysis package
print(json.dumps(one_repeat(Path(sys.argv[2]), Path(tempfile.mkdtemp()))))
"""


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


def clocks(fn: Callable[[], object]) -> list[float]:
    """[wall seconds, CPU seconds of the process] of one call."""
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    return [time.perf_counter() - wall, time.process_time() - cpu]


def one_repeat(root: Path, tmp: Path) -> list[list[float]]:
    """[plain parse, import into an existing store, import into a new file], each as clocks."""
    from analysis.core.store import Store
    from analysis.ingest.flask_source import import_flask

    files = files_of(root)
    base = clocks(lambda: plain_json(files))
    store = Store(tmp / "bench.duckdb")
    store.ensure()  # schema creation is one-off, not import work
    full = clocks(lambda: import_flask(store, str(root)))
    fresh = clocks(lambda: import_flask(Store(tmp / "new.duckdb"), str(root)))
    return [base, full, fresh]


def other_repeat(other: Path, root: Path) -> list[list[float]]:
    here = str(Path(__file__).resolve().parent)
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(other), str(root), here],
        capture_output=True, text=True, check=True, cwd=other,
    )  # fmt: skip
    return json.loads(out.stdout)


def show(title: str, runs: list[list[list[float]]]) -> None:
    med = [[statistics.median(r[i][k] for r in runs) for k in (0, 1)] for i in range(3)]
    (bw, bc), (fw, fc), (nw, nc) = med
    print(title)
    print(f"  plain json.loads of every line   wall {bw * 1000:7.1f} ms   cpu {bc * 1000:7.1f} ms")
    for label, w, c in (("into an existing store", fw, fc), ("into a new file", nw, nc)):
        print(
            f"  import {label:24s}  wall {w * 1000:7.1f} ms   cpu {c * 1000:7.1f} ms   "
            f"ratio wall {w / bw:5.2f}x  cpu {c / bc:5.2f}x"
        )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("root", nargs="?", type=Path, default=DEFAULT)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--other", type=Path, help="another checkout to time in the same run")
    args = ap.parse_args()
    files = files_of(args.root)
    size = sum(f.stat().st_size for f in files)
    rows = plain_json(files)
    mine, theirs = [], []
    for _ in range(args.repeat):
        with tempfile.TemporaryDirectory() as tmp:
            mine.append(one_repeat(args.root, Path(tmp)))
        if args.other:
            theirs.append(other_repeat(args.other.resolve(), args.root))
    print(f"files: {len(files)}, {size / 1e6:.1f} MB, {rows:,} JSON lines; repeats: {args.repeat}")
    show(f"this checkout ({Path(__file__).resolve().parents[1]}), medians:", mine)
    if theirs:
        show(f"--other {args.other} (same run, interleaved), medians:", theirs)
    print("goal: ratio <= 2x")


if __name__ == "__main__":
    main()

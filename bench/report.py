"""Benchmark: generating the stakeholder report (``finegrain report``) on FLASK-size data.
Goal: ≤ 5 s.

    python bench/report.py [FLASK_DIR] [--repeat N]

Stores, built in a temporary folder by the real importers:

- demo: the simulated demo (1,740 instances, 8 models, an LLM judge and 3 humans);
- flask: the real FLASK folder (1,740 instructions, 15 models' responses; when FLASK_DIR
  exists) through ``import_flask``, plus the demo's judge and human scores imported onto it
  with ``import_scores`` (the public folder has no reviews): real texts, FLASK-size scores.

For each: the report in a fresh process (``python -m analysis report``: imports included, as a
user waits for it), then in-process repeats (median; the first call's imports excluded), as
wall-clock and as CPU time of the process. On a busy machine the wall clock mostly measures the
queue for a core; CPU time holds up better.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

DEFAULT = ROOT.parent / "shared" / "flask"
DEMO_SCORES = """
COPY (
    SELECT s.instance_id, s.model, s.judge, COALESCE(j.kind, 'llm') AS kind, s.skill, s.score,
           g.rationale
    FROM latest_scores s LEFT JOIN judges j USING (judge)
    LEFT JOIN judgments g ON g.judgment_id = s.judgment_id
    WHERE s.dataset = 'demo'
) TO '{path}' (FORMAT parquet)
"""


def build(folder: Path, flask: Path | None) -> list[tuple[str, Path, str]]:
    """[(label, store path, dataset)] of the stores to time."""
    from analysis.core.store import Store
    from analysis.ingest.demo import build_and_write_demo

    demo = folder / "demo.duckdb"
    build_and_write_demo(Store(demo))
    out = [("demo (simulated, FLASK-size)", demo, "demo")]
    if flask is None:
        return out
    from analysis.ingest.flask_source import import_flask
    from analysis.ingest.score_files import import_scores

    real = folder / "flask.duckdb"
    import_flask(Store(real), str(flask))
    scores = folder / "demo_scores.parquet"
    with Store(demo).read() as con:
        con.execute(DEMO_SCORES.format(path=str(scores).replace("'", "''")))
    import_scores(Store(real), scores, dataset="flask")
    out.append(("flask (real texts, the demo's scores)", real, "flask"))
    return out


def clocks(fn) -> tuple[float, float, object]:
    wall, cpu = time.perf_counter(), time.process_time()
    result = fn()
    return time.perf_counter() - wall, time.process_time() - cpu, result


def cold(db: Path, dataset: str, out: Path) -> tuple[float, float]:
    """(wall, CPU) seconds of the whole command in a new process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "analysis", "report", "--db", str(db), "--dataset", dataset,
         "--out", str(out)],
        cwd=ROOT, check=True, capture_output=True,
    )  # fmt: skip
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("flask", nargs="?", type=Path, default=DEFAULT)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    flask = args.flask if (args.flask / "evaluation_set").is_dir() else None
    if flask is None:
        print(f"no FLASK folder at {args.flask}: timing the demo only")
    from analysis.charts.report import report
    from analysis.core.filters import Filters
    from analysis.core.store import Store

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        stores = build(folder, flask)
        for label, db, dataset in stores:
            first, first_cpu = cold(db, dataset, folder / f"{dataset}.html")
            size = (folder / f"{dataset}.html").stat().st_size
            clocks(lambda db=db, d=dataset: report(Store(db), Filters(d)))  # imports, caches
            runs = [
                clocks(lambda db=db, d=dataset: report(Store(db), Filters(d)))
                for _ in range(args.repeat)
            ]
            wall = statistics.median(r[0] for r in runs)
            cpu = statistics.median(r[1] for r in runs)
            print(
                f"{label}: new process {first:.2f} s wall, {first_cpu:.2f} s CPU; in process "
                f"median of "
                f"{args.repeat}: {wall:.2f} s wall, {cpu:.2f} s CPU; file {size / 1e6:.1f} MB"
            )


if __name__ == "__main__":
    main()

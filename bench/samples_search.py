"""Benchmark: the Samples page's search and filtering (analysis.views.samples.search: one page of 50
rows, the total count, and every judge's scores on the page) on a generated store of 100k
responses / 1M scores. Goal: median <= 300 ms per query shape.

The store is generated in SQL (a few seconds): 10,000 instances x 10 models; responses of
100-300 words (~1,600 characters) drawn from a 3,010-word vocabulary, a rare word in ~0.1% of
them; 3 LLM judges score all 3 skills of every response, one human judge a third of them
(900k + 100k scores).

    python bench/samples_search.py [--runs 7] [--db PATH] [--keep]
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from analysis.core.filters import Filters  # noqa: E402
from analysis.core.store import Store  # noqa: E402
from analysis.views.samples import SampleQuery, ScoreRange, search  # noqa: E402
from bench.timing import timed  # noqa: E402

N_INSTANCES = 10_000
N_MODELS = 10
JUDGES = ["judge-a", "judge-b", "judge-c"]
RARE = "zyxquartz"

GENERATE = [
    """CREATE TEMP TABLE vocab AS SELECT list(w) AS words FROM (
        SELECT 'w' || (i * 7919 % 100003)::VARCHAR || chr((97 + i % 26)::INTEGER) AS w
        FROM range(3000) t(i)
        UNION ALL SELECT unnest(['the', 'of', 'and', 'model', 'answer', 'because', 'step',
                                 'result', 'value', 'function']))""",
    "INSERT INTO datasets (dataset, title, source, simulated) "
    "VALUES ('bench', 'Benchmark', 'generated', true)",
    f"""INSERT INTO instances SELECT 'bench', i::VARCHAR,
        array_to_string(list_transform(range(40),
            lambda k: words[1 + (hash(i, k, 'q') % 3010)::INTEGER]), ' '),
        array_to_string(list_transform(range(80),
            lambda k: words[1 + (hash(i, k, 'r') % 3010)::INTEGER]), ' '),
        'task-' || (i % 20)::VARCHAR, 1 + i % 5,
        [['coding', 'math', 'humanities', 'culture', 'health'][1 + i % 5]],
        ['robustness', 'correctness', 'readability'], i % 10 = 0
        FROM range({N_INSTANCES}) t(i), vocab""",
    f"""INSERT INTO responses SELECT 'bench', i::VARCHAR, 'model-' || m::VARCHAR, txt, length(txt)
        FROM (SELECT i, m, array_to_string(list_transform(range(100 + (hash(i, m) % 200)::INTEGER),
                  lambda k: words[1 + (hash(i, m, k) % 3010)::INTEGER]), ' ')
                  || CASE WHEN hash(i, m, 'rare') % 1000 = 0 THEN ' {RARE}' ELSE '' END AS txt
              FROM range({N_INSTANCES}) a(i), range({N_MODELS}) b(m), vocab)""",
    "INSERT INTO judges VALUES ('judge-a', 'llm', 'bench', NULL, NULL, '{}'), "
    "('judge-b', 'llm', 'bench', NULL, NULL, '{}'), ('judge-c', 'llm', 'bench', NULL, NULL, '{}'),"
    " ('human-1', 'human', 'bench', NULL, NULL, '{}')",
    f"""INSERT INTO scores (dataset, instance_id, model, judge, skill, score, run_id)
        SELECT 'bench', i::VARCHAR, 'model-' || m::VARCHAR, j, s,
               CASE WHEN hash(i, m, j, s) % 20 = 0 THEN NULL
                    ELSE 1 + hash(i, m, j, s, 'v') % 5 END, 'bench-' || j
        FROM range({N_INSTANCES}) a(i), range({N_MODELS}) b(m),
             unnest({JUDGES}) c(j), unnest(['robustness', 'correctness', 'readability']) d(s)""",
    f"""INSERT INTO scores (dataset, instance_id, model, judge, skill, score, run_id)
        SELECT 'bench', i::VARCHAR, 'model-' || m::VARCHAR, 'human-1', s,
               1 + hash(i, m, s, 'h') % 5, 'bench-human'
        FROM range({N_INSTANCES}) a(i), range({N_MODELS}) b(m),
             unnest(['robustness', 'correctness', 'readability']) d(s)
        WHERE (i * {N_MODELS} + m) % 3 = 0""",
]


def generate(store: Store) -> dict[str, int]:
    store.ensure()
    with store.write() as con:
        for sql in GENERATE:
            con.execute(sql)
        counts = {t: con.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
                  for t in ("instances", "responses", "scores")}  # fmt: skip
    return counts


def shapes() -> dict[str, SampleQuery]:
    """Query shapes as the page sends them (it passes the judge list it already has)."""
    f = Filters("bench")
    narrowed = Filters("bench", models=("model-1", "model-2", "model-3"), difficulties=(4, 5))
    judges = (*JUDGES, "human-1")
    return {k: dataclasses.replace(q, judges=judges) for k, q in _shapes(f, narrowed).items()}


def _shapes(f: Filters, narrowed: Filters) -> dict[str, SampleQuery]:
    return {
        "no search, no filter (page 1)": SampleQuery(f),
        "rare term, all fields": SampleQuery(f, text=RARE),
        "common term, all fields": SampleQuery(f, text="the"),
        "absent term, all fields": SampleQuery(f, text="nothing-matches-this"),
        "common term, response only, page 20": SampleQuery(
            f, text="answer", fields=("response",), page=20
        ),
        "no term + models/levels filters": SampleQuery(narrowed),
        "no term + score range (1 judge)": SampleQuery(f, ranges=(ScoreRange("judge-a", 4, 5),)),
        "score ranges (2 judges) + skill": SampleQuery(
            f,
            skill="correctness",
            ranges=(ScoreRange("judge-a", 1, 2), ScoreRange("judge-b", 4, 5)),
        ),  # fmt: skip
        "disagreement >= 3, sorted by it": SampleQuery(f, min_disagreement=3, sort="disagreement"),
        "term + filters + range + disagreement": SampleQuery(
            narrowed, text="the", ranges=(ScoreRange("judge-c", 3, 5),), min_disagreement=2
        ),
        "sort by disagreement, no threshold": SampleQuery(f, sort="disagreement"),
    }


def floor(store: Store) -> None:
    """The same-run baseline: a fresh read-only connection doing nothing but the bare
    case-insensitive scan of every response's text (the least a text search can cost)."""
    with store.read() as con:
        con.execute("SELECT count(*) FROM responses WHERE text ILIKE ?", [f"%{RARE}%"]).fetchall()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--db", type=Path, help="reuse or create the generated store here")
    ap.add_argument("--keep", action="store_true", help="keep the generated store (with --db)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = args.db or Path(tmp) / "samples.duckdb"
        store = Store(path)
        made = not path.exists()
        if made:
            seconds = timed(lambda: print(generate(store)))
            print(f"generated {path} in {seconds:.1f}s")
        print(f"median of {args.runs} runs (after one warm-up); goal <= 300 ms; "
              f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")  # fmt: skip
        floor(store)
        print(
            "baseline: a bare ILIKE scan of all responses in a fresh connection, timed "
            "alternately with each query (the ratio is robust to the machine's load drifting)"
        )
        print(f"{'query':42} {'median':>9} {'min':>8} {'max':>8} {'base':>7} {'/base':>6} "
              f"{'matches':>8}")  # fmt: skip
        worst = 0.0
        for name, q in shapes().items():
            page = search(store, q)  # warm-up, and the match count
            times, bases = [], []
            for _ in range(args.runs):
                bases.append(timed(lambda: floor(store)) * 1000)
                times.append(timed(lambda q=q: search(store, q)) * 1000)
            med, base = statistics.median(times), statistics.median(bases)
            worst = max(worst, med)
            print(f"{name:42} {med:7.0f}ms {min(times):6.0f}ms {max(times):6.0f}ms "
                  f"{base:5.0f}ms {med / base:5.1f}x {page.total:8,}")  # fmt: skip
        print(f"slowest median: {worst:.0f} ms ({'meets' if worst <= 300 else 'MISSES'} the goal)")
        if args.db and made and not args.keep:
            path.unlink()


if __name__ == "__main__":
    main()

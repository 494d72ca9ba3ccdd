"""Benchmark: the data functions of the Skill radar and Breakdowns pages on N generated scores,
against the minimal DuckDB aggregate over the same rows (a plain AVG per the same groups, same
filters, same connection cost) and against a pandas groupby on the same rows already in memory.

Goals: ≤ 1.5× the minimal DuckDB aggregate at 1M scores, ≥ 3× faster than pandas, ≤ 1 s at
10M. Each size runs in its own process so the peak RSS figures are that size's own.

    python bench/pages.py [--scores 1000000,10000000] [--repeat 7]

Data: 10 models × 3 skills per instance (FLASK's shape; 1M scores = 33,334 instances), one
judge, 3% N/A, 1-2 domains per instance, difficulty 1-5 or unlabeled, 50 source tasks, some
FLASK-Hard instances. Generated inside DuckDB with range(), so 10M takes seconds.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from analysis import breakdowns, radar  # noqa: E402
from analysis.filters import Filters  # noqa: E402
from analysis.store import Store  # noqa: E402
from analysis.taxonomy import DOMAINS, SKILL_ORDER  # noqa: E402
from bench.timing import timed  # noqa: E402

DATASET, JUDGE, MODELS = "bench", "bench-judge", 10
F = Filters(DATASET, JUDGE)

_GENERATE = """
INSERT INTO datasets (dataset, title, source) VALUES ('bench', 'Benchmark', 'bench/pages.py');
INSERT INTO judges (judge, kind) VALUES ('bench-judge', 'llm');
INSERT INTO runs (run_id, judge, dataset, status) VALUES ('bench', 'bench-judge', 'bench',
                                                          'complete');
INSERT INTO instances
SELECT 'bench', i::VARCHAR, NULL, NULL, 'task_' || (i % 50)::VARCHAR,
       CASE WHEN i % 6 = 0 THEN NULL ELSE i % 6 END,
       CASE WHEN i % 3 = 0 THEN [$domains[i % 10 + 1], $domains[(i + 3) % 10 + 1]]
            ELSE [$domains[i % 10 + 1]] END,
       [$skills[i % 12 + 1], $skills[(i + 4) % 12 + 1], $skills[(i + 8) % 12 + 1]],
       i % 6 = 5 AND i % 4 = 0
FROM range($n_inst) t(i);
INSERT INTO scores (dataset, instance_id, model, judge, skill, score, run_id)
SELECT 'bench', (r // 30)::VARCHAR, 'model_' || ((r // 3) % 10)::VARCHAR, 'bench-judge',
       $skills[((r // 30) + 4 * (r % 3)) % 12 + 1],
       CASE WHEN hash(r, 'na') % 100 < 3 THEN NULL ELSE (hash(r) % 5 + 1)::DOUBLE END, 'bench'
FROM range($n) t(r);
"""

_BASE = "FROM latest_scores s {join} WHERE s.dataset = 'bench' AND s.judge = 'bench-judge'"
_INST = "JOIN instances i USING (dataset, instance_id)"
_DOMAIN = ("JOIN (SELECT dataset, instance_id, unnest(domains) AS domain FROM instances) d "
           "USING (dataset, instance_id)")  # fmt: skip
# page function, its minimal DuckDB aggregate, the pandas groupby keys
CASES = [
    ("radar skills", lambda s: radar.radar_data(s, F),
     "SELECT s.model, s.skill, avg(s.score), count(s.score) " + _BASE.format(join="")
     + " GROUP BY ALL", ["model", "skill"]),
    ("radar abilities", lambda s: radar.radar_data(s, F, "ability"),
     "SELECT s.model, k.ability, avg(s.score), count(s.score) "
     + _BASE.format(join="JOIN skills k ON k.skill = s.skill") + " GROUP BY ALL",
     ["model", "ability"]),
    ("compare 2 models", lambda s: radar.compare(s, F, "model_0", "model_1"),
     "SELECT s.model, s.skill, avg(s.score), count(s.score) " + _BASE.format(join="")
     + " AND s.model IN ('model_0', 'model_1') GROUP BY ALL", ["model", "skill"]),
    ("by difficulty", lambda s: breakdowns.by_difficulty(s, F),
     "SELECT s.model, s.skill, i.difficulty, avg(s.score), count(s.score) "
     + _BASE.format(join=_INST) + " GROUP BY ALL", ["model", "skill", "difficulty"]),
    ("by domain", lambda s: breakdowns.by_domain(s, F),
     "SELECT s.model, s.skill, d.domain, avg(s.score), count(s.score) "
     + _BASE.format(join=_DOMAIN) + " GROUP BY ALL", ["model", "skill", "domain"]),
    ("by source task", lambda s: breakdowns.by_source_task(s, F),
     "SELECT s.model, i.source_task, avg(s.score), count(s.score) "
     + _BASE.format(join=_INST) + " GROUP BY ALL", ["model", "source_task"]),
    ("hard vs full", lambda s: breakdowns.hard_vs_full(s, F),
     "SELECT s.model, s.skill, i.flask_hard, avg(s.score), count(s.score) "
     + _BASE.format(join=_INST) + " GROUP BY ALL", ["model", "skill", "flask_hard"]),
]  # fmt: skip


def generate(store: Store, n: int) -> None:
    store.ensure()
    sql = (_GENERATE.replace("$domains", "[" + ", ".join(f"'{d}'" for d in DOMAINS) + "]")
           .replace("$skills", "[" + ", ".join(f"'{s}'" for s in SKILL_ORDER) + "]")
           .replace("$n_inst", str(n // 30 + 1)).replace("$n", str(n)))  # fmt: skip
    with store.write() as con:
        con.execute(sql)


def median_ms(fn, repeat: int) -> float:
    fn()  # warm: imports, OS file cache
    return 1000 * statistics.median(timed(fn) for _ in range(repeat))


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run_one(n: int, repeat: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "bench.duckdb")
        gen = timed(lambda: generate(store, n))
        print(f"\n{n:,} scores ({n // 30 + 1:,} instances, {MODELS} models), generated in "
              f"{gen:.1f} s")  # fmt: skip
        ours, base = {}, {}
        for name, fn, sql, _ in CASES:
            ours[name] = median_ms(lambda f=fn: f(store), repeat)

            def minimal(q=sql) -> None:
                with store.read() as con:
                    con.execute(q).fetchall()

            base[name] = median_ms(minimal, repeat)
        rss_ours = rss_mb()
        frame, exploded = load_frames(store)
        pandas_ms = {}
        for name, _, _, keys in CASES:
            df = exploded if "domain" in keys else frame
            if name.startswith("compare"):
                df = frame[frame["model"].isin(["model_0", "model_1"])]
            pandas_ms[name] = median_ms(
                lambda d=df, k=keys: d.groupby(k, observed=True)["score"].agg(["mean", "count"]),
                repeat,
            )
        print(f"{'function':18} {'ours ms':>9} {'DuckDB min':>11} {'ratio':>6} "
              f"{'pandas ms':>10} {'speed-up':>9}")  # fmt: skip
        for name, *_ in CASES:
            print(f"{name:18} {ours[name]:9.1f} {base[name]:11.1f} "
                  f"{ours[name] / base[name]:5.2f}x {pandas_ms[name]:10.1f} "
                  f"{pandas_ms[name] / ours[name]:8.1f}x")  # fmt: skip
        print(f"peak RSS: {rss_ours:.0f} MB after the page functions; {rss_mb():.0f} MB after "
              "loading the pandas frames")  # fmt: skip


def load_frames(store: Store):
    """The same rows in pandas (not timed): scores with their instance's attributes, and the
    domain-exploded frame."""
    with store.read() as con:
        frame = con.execute(
            "SELECT s.model, s.skill, s.instance_id, s.score, k.ability, i.difficulty, "
            "i.source_task, i.flask_hard, i.domains FROM latest_scores s "
            "JOIN instances i USING (dataset, instance_id) JOIN skills k ON k.skill = s.skill "
            "WHERE s.dataset = 'bench' AND s.judge = 'bench-judge'"
        ).df()
    exploded = frame.drop(columns="domains").join(frame["domains"].explode().rename("domain"))
    return frame.drop(columns="domains"), exploded


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--scores", default="1000000,10000000")
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--one", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        run_one(args.one, args.repeat)
        return
    print("median of", args.repeat, "runs each; 'ratio' = ours / minimal DuckDB aggregate, "
          "'speed-up' = pandas groupby / ours")  # fmt: skip
    for n in (int(x) for x in args.scores.split(",")):
        subprocess.run([sys.executable, __file__, "--one", str(n), "--repeat",
                        str(args.repeat)], check=True)  # fmt: skip


if __name__ == "__main__":
    main()

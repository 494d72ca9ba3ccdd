"""Benchmark: the data functions of the Skill radar and Breakdowns pages on N generated scores,
against the minimal DuckDB aggregate over the same rows (a plain AVG per the same groups, same
filters, same connection cost) and against a pandas groupby on the same rows already in memory.

Goals: ≤ 1.5× the minimal DuckDB aggregate at 1M scores, ≥ 3× faster than pandas, ≤ 1 s at
10M. Each size runs in its own process so the peak RSS figures are that size's own.

    python bench/pages.py [--scores 1000000,10000000] [--repeat 7]

Data: 10 models × 3 skills per instance (FLASK's shape; 1M scores = 33,334 instances), one
judge, 3% N/A, 1-2 domains per instance, difficulty 1-5 or unlabeled, 50 source tasks, some
FLASK-Hard instances. Generated inside DuckDB with range(), so 10M takes seconds; the model ×
instance sums (table score_sums, which the writers keep and the pooled cells read) are filled
as the writers would.
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

from analysis.core import score_sums  # noqa: E402
from analysis.core.filters import Filters  # noqa: E402
from analysis.core.store import Store  # noqa: E402
from analysis.core.taxonomy import DOMAINS, SKILL_ORDER  # noqa: E402
from analysis.views import (
    breakdowns,  # noqa: E402
    radar,  # noqa: E402
)
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

_INST = "JOIN instances i USING (dataset, instance_id)"
_DOMAIN = (
    "JOIN (SELECT dataset, instance_id, unnest(domains) AS domain FROM instances) d "
    "USING (dataset, instance_id)"
)
# (name, page function, group columns as SQL, joins, extra condition). The minimal DuckDB
# aggregate is a plain AVG + COUNT over the same rows and groups; pandas gets the same rows.
CASES = [
    ("radar skills", lambda s: radar.radar_data(s, F), "s.model, s.skill", "", ""),
    (
        "radar abilities",
        lambda s: radar.radar_data(s, F, "ability"),
        "s.model, k.ability",
        "JOIN dataset_skills k ON k.dataset = s.dataset AND k.skill = s.skill",
        "",
    ),
    (
        "compare 2 models",
        lambda s: radar.compare(s, F, "model_0", "model_1"),
        "s.model, s.skill",
        "",
        " AND s.model IN ('model_0', 'model_1')",
    ),
    (
        "by difficulty",
        lambda s: breakdowns.by_difficulty(s, F),
        "s.model, s.skill, i.difficulty",
        _INST,
        "",
    ),
    ("by domain", lambda s: breakdowns.by_domain(s, F), "s.model, s.skill, d.domain", _DOMAIN, ""),
    (
        "by source task",
        lambda s: breakdowns.by_source_task(s, F),
        "s.model, i.source_task",
        _INST,
        "",
    ),
    (
        "hard vs full",
        lambda s: breakdowns.hard_vs_full(s, F),
        "s.model, s.skill, i.flask_hard",
        _INST,
        "",
    ),
]
_ROWS = "FROM latest_scores s {join} WHERE s.dataset = 'bench' AND s.judge = 'bench-judge'{extra}"


def minimal_sql(keys: str, join: str, extra: str) -> str:
    rows = _ROWS.format(join=join, extra=extra)
    return f"SELECT {keys}, avg(s.score), count(s.score) {rows} GROUP BY ALL"


def rows_sql(keys: str, join: str, extra: str) -> str:
    return f"SELECT {keys}, s.score {_ROWS.format(join=join, extra=extra)}"


def fetch(store: Store, sql: str) -> None:
    """What any page query costs at least: open the file read-only, run, fetch, close."""
    with store.read() as con:
        con.execute(sql).fetchall()


def generate(store: Store, n: int) -> None:
    store.ensure()
    sql = (
        _GENERATE.replace("$domains", "[" + ", ".join(f"'{d}'" for d in DOMAINS) + "]")
        .replace("$skills", "[" + ", ".join(f"'{s}'" for s in SKILL_ORDER) + "]")
        .replace("$n_inst", str(n // 30 + 1))
        .replace("$n", str(n))
    )
    with store.write() as con:
        con.execute(sql)
        # Raw INSERTs bypass the writers: fill the model × instance sums as they would.
        score_sums.refresh(con, "SELECT dataset, judge, model, instance_id FROM scores")


def median_ms(fn, repeat: int) -> float:
    fn()  # warm: imports, OS file cache
    return 1000 * statistics.median(timed(fn) for _ in range(repeat))


def paired_ms(fn_a, fn_b, repeat: int) -> tuple[float, float]:
    """Medians of two functions timed alternately, so a busy machine slows both alike."""
    fn_a(), fn_b()
    a, b = [], []
    for _ in range(repeat):
        a.append(timed(fn_a))
        b.append(timed(fn_b))
    return 1000 * statistics.median(a), 1000 * statistics.median(b)


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run_one(n: int, repeat: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "bench.duckdb")
        # In a child process: DuckDB's memory for building the store is not the pages' RSS.
        cmd = [sys.executable, __file__, "--generate", str(n), "--db", str(store.path)]
        gen = timed(lambda: subprocess.run(cmd, check=True))
        print(
            f"\n{n:,} scores ({n // 30 + 1:,} instances, {MODELS} models), generated in {gen:.1f} s"
        )
        ours, base = {}, {}
        for name, fn, keys, join, extra in CASES:
            sql = minimal_sql(keys, join, extra)
            ours[name], base[name] = paired_ms(
                lambda f=fn: f(store), lambda q=sql: fetch(store, q), repeat
            )
        rss_ours = rss_mb()
        grouped, loaded = {}, {}
        for name, _, keys, join, extra in CASES:
            cols = [k.split(".")[1] for k in keys.split(", ")]
            sql = rows_sql(keys, join, extra)

            def load(q=sql):
                with store.read() as con:
                    return con.execute(q).df()

            def group(df, c=cols):
                return df.groupby(c, observed=True, dropna=False)["score"].agg(["mean", "count"])

            frame = load()
            grouped[name] = median_ms(lambda d=frame: group(d), repeat)
            del frame
            loaded[name] = median_ms(lambda: group(load()), min(repeat, 3))
        print(
            f"{'function':17} {'ours ms':>8} {'DuckDB min':>10} {'ratio':>6} "
            f"{'pandas gb':>9} {'×':>5} {'load+gb':>8} {'×':>5}"
        )
        for name, *_ in CASES:
            print(
                f"{name:17} {ours[name]:8.1f} {base[name]:10.1f} {ours[name] / base[name]:5.2f}x "
                f"{grouped[name]:9.1f} {grouped[name] / ours[name]:4.1f}x "
                f"{loaded[name]:8.1f} {loaded[name] / ours[name]:4.1f}x"
            )
        print(
            f"peak RSS: {rss_ours:.0f} MB after the page functions (the store built in a child "
            f"process); {rss_mb():.0f} MB after the pandas runs"
        )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--scores", default="1000000,10000000")
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--one", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--generate", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--db", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.generate:
        generate(Store(Path(args.db)), args.generate)
        return
    if args.one:
        run_one(args.one, args.repeat)
        return
    print(
        f"median of {args.repeat} runs, ours and the DuckDB minimum timed alternately (load+gb:"
        " of 3). ratio = ours / minimal DuckDB "
        "aggregate; pandas gb = groupby mean+count on the rows already in a frame; load+gb = "
        "reading those rows from the store into pandas, then the groupby; × = pandas / ours"
    )
    for n in (int(x) for x in args.scores.split(",")):
        subprocess.run(
            [sys.executable, __file__, "--one", str(n), "--repeat", str(args.repeat)], check=True
        )


if __name__ == "__main__":
    main()

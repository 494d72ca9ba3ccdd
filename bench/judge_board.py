"""Benchmark: the judge leaderboard (every LLM judge against the humans) at FLASK size.

    python bench/judge_board.py [--judges 10] [--repeat 3] [--level pooled]
                                [--human-instances 200] [--cli]

Builds its own store in a temporary folder through the real importer (``import_scores`` on a
Parquet file): 1,740 instances × 10 models × 3 of the 12 skills per instance, scored 1–5 by
--judges LLM judges (each on every item, 2% N/A) and by 3 human annotators on the first
--human-instances instances. Then, warm and in process (one call first to load the imports):

- ``judge_board`` for all judges (the Leaderboard tab and ``agreement --a kind:llm:each``);
- baseline in the same run: the single calls it replaces, ``agreement(store,
  AgreementQuery(f, judge, "kind:human", level), sections=("stats",))`` for each judge plus
  the ceiling section of the judge the board takes its ceiling from;

alternating, median of --repeat, and their ratio. With --cli, also ``python -m analysis
agreement --a kind:llm:each --b kind:human --json`` end to end (process start included).
Goal (issue 15): all judges of a FLASK-size dataset in ≤ 2 s warm in process.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from analysis.core.filters import Filters  # noqa: E402
from analysis.core.store import Store  # noqa: E402
from analysis.core.taxonomy import SKILL_ORDER  # noqa: E402
from analysis.ingest.score_files import import_scores  # noqa: E402
from analysis.views.agreement import AgreementQuery, agreement  # noqa: E402
from analysis.views.judge_board import BoardQuery, judge_board  # noqa: E402
from bench.timing import timed  # noqa: E402

DATASET = "flask_size"
N_INSTANCES, N_MODELS, N_HUMANS = 1740, 10, 3


def score_rows(n_judges: int, n_human_instances: int, seed: int = 0) -> pd.DataFrame:
    """Long-format scores: a latent truth per item, each scorer a noisy, rounded copy."""
    rng = np.random.default_rng(seed)
    skills = np.array([rng.choice(len(SKILL_ORDER), 3, replace=False) for _ in range(N_INSTANCES)])
    inst = np.repeat(np.arange(N_INSTANCES), N_MODELS * 3)
    model = np.tile(np.repeat(np.arange(N_MODELS), 3), N_INSTANCES)
    skill = skills[inst, np.tile(np.arange(3), N_INSTANCES * N_MODELS)]
    truth = rng.normal(3.3, 1.0, len(inst))
    frames = []

    def scorer(name: str, kind: str, sel: np.ndarray, noise: float, bias: float) -> None:
        score = np.clip(np.rint(truth[sel] + bias + rng.normal(0, noise, sel.sum())), 1, 5)
        score[rng.random(sel.sum()) < 0.02] = np.nan  # N/A
        frames.append(
            pd.DataFrame(
                {
                    "instance_id": [f"q{i:04d}" for i in inst[sel]],
                    "model": [f"model_{m}" for m in model[sel]],
                    "skill": np.array(SKILL_ORDER)[skill[sel]],
                    "judge": name,
                    "kind": kind,
                    "score": score,
                }
            )
        )

    every = np.ones(len(inst), bool)
    for j in range(n_judges):
        scorer(f"judge-{j:02d}", "llm", every, 0.5 + 0.04 * j, 0.1 * (j % 3))
    for h in range(N_HUMANS):
        scorer(f"human-{h}", "human", inst < n_human_instances, 0.6, 0.0)
    return pd.concat(frames, ignore_index=True)


def build(folder: Path, n_judges: int, n_human_instances: int) -> tuple[Store, float, int]:
    rows = score_rows(n_judges, n_human_instances)
    path = folder / "scores.parquet"
    rows.to_parquet(path)
    store = Store(folder / "bench.duckdb")
    seconds = timed(lambda: import_scores(store, path, dataset=DATASET))
    return store, seconds, len(rows)


def clocked(fn) -> tuple[float, float]:
    """Wall-clock and CPU seconds of one call (CPU: this process, every thread)."""
    cpu = time.process_time()
    wall = timed(fn)
    return wall, time.process_time() - cpu


def single_calls(store: Store, f: Filters, judges: tuple[str, ...], top: str, level: str):
    for judge in judges:
        agreement(store, AgreementQuery(f, judge, "kind:human", level), sections=("stats",))
    agreement(store, AgreementQuery(f, top, "kind:human", level), sections=("ceiling",))


def cli_seconds(db: Path, level: str) -> float:
    root = Path(__file__).resolve().parent.parent
    cmd = [sys.executable, "-m", "analysis", "agreement", "--db", str(db), "--dataset", DATASET]
    cmd += ["--a", "kind:llm:each", "--b", "kind:human", "--level", level, "--json"]
    t = time.perf_counter()
    subprocess.run(cmd, cwd=root, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--judges", type=int, default=10)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--level", default="pooled", choices=["pooled", "instance", "system"])
    p.add_argument("--human-instances", type=int, default=200)
    p.add_argument("--cli", action="store_true", help="also time the command end to end")
    args = p.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    with tempfile.TemporaryDirectory() as tmp:
        store, seconds, n_rows = build(Path(tmp), args.judges, args.human_instances)
        print(f"store: {n_rows:,} scores ({args.judges} LLM judges, {N_HUMANS} humans on "
              f"{args.human_instances} instances) imported in {seconds:.1f} s")  # fmt: skip
        f = Filters(DATASET)
        q = BoardQuery(f, args.level)
        board = judge_board(store, q)  # warm: imports, DuckDB, caches of the page's code
        aligned = int(board.coverage["aligned"].sum())
        print(f"{len(board.judges)} judges, {aligned:,} aligned items in all, level {args.level}")
        ours, base = [], []
        for _ in range(args.repeat):
            ours.append(clocked(lambda: judge_board(store, q)))
            base.append(
                clocked(lambda: single_calls(store, f, board.judges, board.ceiling_judge, q.level))
            )
        (wo, co), (wb, cb) = (
            tuple(map(statistics.median, zip(*x, strict=True))) for x in (ours, base)
        )
        print(f"median of {args.repeat}, wall (CPU time of this process, less sensitive to load)")
        print(f"judge_board, all judges:        {wo:6.2f} s ({co:5.2f} s CPU)")
        print(f"single calls, one per judge:    {wb:6.2f} s ({cb:5.2f} s CPU)")
        print(
            f"ratio (single calls / board):   {wb / wo:6.2f}× ({cb / co:5.2f}× CPU)   goal: ≤ 2 s"
        )
        if args.cli:
            print(f"command end to end (--json):    {cli_seconds(store.path, args.level):6.2f} s")
    print(f"load average after {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()

"""Benchmark: Human vs judge with A = "All LLM judges (mean)" when there are many judges.

    python bench/agreement_levels.py [--judges 12] [--human-instances 200] [--no-baseline]

The mean of a dozen judges' 1–5 scores (N/A allowed) takes a few hundred distinct values, more
than ``MAX_LEVELS``. Such data used to leave the contingency tables for the raw path (every
resample's pairs expanded); ``stats.agreement.grid_for`` now keeps tables, over each side's own
values, while they are small next to the pairs. Builds the store of bench/judge_board.py (FLASK
size: 1,740 instances × 10 models × 3 skills, --judges LLM judges, 3 humans on
--human-instances instances), then times the page's call, warm and in process:
``agreement(store, AgreementQuery(f, "kind:llm", "kind:human"), sections=("stats",))``, once by
the rule and (baseline, same run) once with every resample expanded, and prints both, their
ratio and the largest difference of any value or bound (the same resamples: equal to 1e-9).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from analysis.core.filters import Filters  # noqa: E402
from analysis.stats import agreement as ag  # noqa: E402
from analysis.stats import agreement_bootstrap, paired_agreement  # noqa: E402
from analysis.views.agreement import AgreementQuery, agreement  # noqa: E402
from bench.judge_board import DATASET, build  # noqa: E402
from bench.timing import timed  # noqa: E402


def _stats(store, f: Filters):
    out = {}

    def call() -> None:
        out["r"] = agreement(store, AgreementQuery(f, "kind:llm", "kind:human", "pooled"),
                             sections=("stats",))  # fmt: skip

    return timed(call), out["r"]


def _raw_everywhere(on: bool) -> None:
    rule = (lambda *_: None) if on else ag.grid_for
    agreement_bootstrap.grid_for = rule
    paired_agreement.grid_for = rule


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--judges", type=int, default=12)
    p.add_argument("--human-instances", type=int, default=200)
    p.add_argument("--no-baseline", action="store_true", help="skip the expanded-pairs run")
    args = p.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    with tempfile.TemporaryDirectory() as tmp:
        store, _, n_rows = build(Path(tmp), args.judges, args.human_instances)
        f = Filters(DATASET)
        _stats(store, f)  # warm: imports, DuckDB, the page's caches
        seconds, result = _stats(store, f)
        stats = result.stats
        print(f"{n_rows:,} scores, {args.judges} judges; kind:llm (mean) vs humans, pooled, "
              f"1,000 resamples, every skill and all criteria: {seconds:.2f} s")  # fmt: skip
        if args.no_baseline:
            return
        _raw_everywhere(True)
        try:
            raw_seconds, raw = _stats(store, f)
        finally:
            _raw_everywhere(False)
        cols = ["value", "ci_low", "ci_high"]
        diff = np.nanmax(np.abs(stats[cols].to_numpy() - raw.stats[cols].to_numpy()))
        print(f"every resample expanded (the old path): {raw_seconds:.2f} s; ratio "
              f"{raw_seconds / seconds:.1f}×; largest difference {diff:.1e}")  # fmt: skip


if __name__ == "__main__":
    main()

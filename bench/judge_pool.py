"""Benchmark: judging throughput over a pool of loopback OpenAI-compatible servers.

    python bench/judge_pool.py [--latency 0.2] [--endpoints 4] [--rounds 10]
                               [--concurrency 8,16] [--repeat 3]

``--endpoints`` servers, each in its own process (as separate machines would be) answering after
``latency`` seconds; for each C, the real runner judges ``rounds`` × endpoints × C demo responses
through the pool (judges/endpoints.py) with concurrency C on each endpoint, in a fresh process on
a fresh copy of the demo store. Prints the achieved calls per second over the ideal
endpoints · C / latency (goal ≥ 0.9), timed from the first call to the last answer, the median
of ``repeat`` runs, and how the calls were spread over the servers.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
from contextlib import ExitStack
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(HERE))

from bench.judge import _build, server_process  # noqa: E402 - after the path


def _worker_run(db: Path, urls: list[str], c: int, rounds: int, latency: float) -> dict:
    import judges.backends.openai_compat  # noqa: F401 - the SDK import is planning, not calling
    from analysis.core.store import Store
    from judges.config import JudgeConfig
    from judges.endpoints import Endpoint
    from judges.plan import Selection
    from judges.runner import RunOptions, run

    store = Store(db)
    cfg = JudgeConfig("openai", "judge-test", base_url=urls[0])
    sel = Selection("demo", limit=rounds * c * len(urls))
    options = RunOptions(endpoints=tuple(Endpoint(u, c) for u in urls))
    s = run(store, cfg, sel, options)
    ideal = len(urls) * c / latency
    return {"calls": s.calls, "ok": s.ok, "ratio": s.calls / s.call_seconds / ideal,
            "status": s.endpoint_status, "notes": s.endpoints}  # fmt: skip


def _measure(template: Path, tmp: Path, urls: list[str], c: int, args) -> dict:
    db = tmp / f"run-{c}.duckdb"
    shutil.copyfile(template, db)
    cmd = [sys.executable, __file__, "--worker", "--db", str(db), "--urls", ",".join(urls),
           "--concurrency", str(c), "--rounds", str(args.rounds),
           "--latency", str(args.latency)]  # fmt: skip
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    for path in tmp.glob(f"run-{c}.duckdb*"):
        shutil.rmtree(path) if path.is_dir() else path.unlink()
    if done.returncode != 0:
        raise SystemExit(f"C={c} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--latency", type=float, default=0.2)
    p.add_argument("--endpoints", type=int, default=4)
    p.add_argument("--rounds", type=int, default=10)
    p.add_argument("--concurrency", default="8,16")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--db", help=argparse.SUPPRESS)
    p.add_argument("--urls", help=argparse.SUPPRESS)
    args = p.parse_args()
    cs = [int(x) for x in str(args.concurrency).split(",")]
    if args.worker:
        out = _worker_run(Path(args.db), args.urls.split(","), cs[0], args.rounds, args.latency)
        print(json.dumps(out))
        return
    print(f"{args.endpoints} endpoints, latency {args.latency * 1000:.0f} ms, {args.rounds} "
          f"rounds, median of {args.repeat}")  # fmt: skip
    print(f"{'C/endpoint':>10} {'ideal/s':>8} {'ratio':>6}  [runs]  calls per endpoint")
    with tempfile.TemporaryDirectory() as tmp_name, ExitStack() as stack:
        tmp = Path(tmp_name)
        template = tmp / "demo.duckdb"
        _build(HERE, template)
        servers = [stack.enter_context(server_process(args.latency)) for _ in range(args.endpoints)]
        urls = [url for url, _count, _cpu in servers]
        for c in cs:
            runs = [_measure(template, tmp, urls, c, args) for _ in range(args.repeat)]
            ratio = statistics.median(r["ratio"] for r in runs)
            spread = "; ".join(runs[-1]["status"])
            each = " ".join(f"{r['ratio']:.2f}" for r in runs)
            ideal = args.endpoints * c / args.latency
            print(f"{c:>10} {ideal:>8.0f} {ratio:>6.2f}  [{each}]  {spread}", flush=True)
            for note in runs[-1]["notes"]:
                print(f"{'':>10} {note}")


if __name__ == "__main__":
    main()

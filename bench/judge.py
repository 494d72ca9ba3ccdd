"""Benchmark: judging throughput against the loopback OpenAI-compatible server.

    python bench/judge.py [--latency 0.2] [--rounds 10] [--concurrency 1,8,32,64]

For each concurrency C, judges 10 × C demo responses through the real runner (SDK, limits,
journal, store writes) with the server answering after ``latency`` seconds, and prints the
achieved calls per second over the ideal C / latency (goal ≥ 0.9 at C = 32), timed from the
first call to the last answer (the whole run, with the SDK import and planning, is printed
too). The server runs in a child process (a real server would not share our GIL). Then reruns
the finished run and prints its call count (goal 0).
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from analysis.core.store import Store  # noqa: E402
from analysis.ingest.demo import build_and_write_demo  # noqa: E402
from judges.config import JudgeConfig  # noqa: E402
from judges.plan import Selection  # noqa: E402
from judges.runner import RunOptions, run  # noqa: E402
from tests.openai_server import OpenAIServer  # noqa: E402


def _serve(latency: float, conn, counter) -> None:
    """Child process: the loopback server, so it does not share the runner's GIL (as a real,
    remote server would not)."""
    with OpenAIServer(latency=latency) as srv:
        conn.send(srv.base_url)
        while not conn.poll(0.05):
            counter.value = srv.count()
        counter.value = srv.count()
        conn.send(srv.count())


@contextmanager
def server_process(latency: float):
    ctx = mp.get_context("spawn")
    parent, child = ctx.Pipe()
    counter = ctx.Value("i", 0)
    proc = ctx.Process(target=_serve, args=(latency, child, counter), daemon=True)
    proc.start()
    url = parent.recv()

    def count() -> int:
        return counter.value

    try:
        yield url, count
    finally:
        parent.send("stop")
        parent.recv()
        proc.join(5)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--latency", type=float, default=0.2)
    p.add_argument("--rounds", type=int, default=10)
    p.add_argument("--concurrency", default="1,8,32,64")
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp) / "demo.duckdb"
        build_and_write_demo(Store(base))
        print(f"latency {args.latency * 1000:.0f} ms, {args.rounds} rounds per concurrency")
        print(f"{'C':>4} {'calls':>6} {'seconds':>8} {'calls/s':>8} {'ideal':>7} {'ratio':>6}")
        for c in (int(x) for x in args.concurrency.split(",")):
            store = Store(Path(tmp) / f"c{c}.duckdb")
            store.path.write_bytes(base.read_bytes())
            with server_process(args.latency) as (url, count):
                cfg = JudgeConfig("openai", "judge-test", base_url=url)
                sel = Selection("demo", limit=args.rounds * c)
                s = run(store, cfg, sel, RunOptions(concurrency=c))
                rate, ideal = s.calls / s.call_seconds, c / args.latency
                print(
                    f"{c:>4} {s.calls:>6} {s.call_seconds:>8.2f} {rate:>8.1f} {ideal:>7.1f} "
                    f"{rate / ideal:>6.2f}   (whole run {s.seconds:.2f} s incl. setup)"
                )
                again = run(store, cfg, sel, RunOptions(concurrency=c))
                print(
                    f"     rerun of the finished run: {again.calls} calls, "
                    f"{again.cache_hits} cache hits, {again.seconds:.2f} s "
                    f"(server saw {count()} requests in all)"
                )


if __name__ == "__main__":
    main()

"""Benchmark: judging throughput against the loopback OpenAI-compatible server.

    python bench/judge.py [--latency 0.2] [--rounds 10] [--concurrency 32,64,128]
                          [--repeat 3] [--load N] [--before /work/before]

For each concurrency C, judges ``rounds`` × C demo responses through the real runner (SDK,
limits, journal, store writes) with the server answering after ``latency`` seconds, and prints
the achieved calls per second over the ideal C / latency (goal ≥ 0.9), timed from the first call
to the last answer, the median of ``repeat`` runs. Each run is a fresh process (imports done
before the clock starts, as in a real run's planning phase) on a fresh copy of the demo store.

Beside the ratio, CPU time per call (operation counts, robust on a noisy machine): ``loop`` is
the runner's main thread (the event loop: HTTP, parsing, journal lines; planning, timed apart,
left out), ``other`` the rest of the runner's process (the store writes and fsyncs), ``server``
the loopback server's CPU per request with its share of one core (near 100 % would make the
server the bottleneck, not the runner).

The server runs in ``--servers`` processes sharing one port (a real server does not share the
runner's GIL; one threaded process answering 128 connections queues them on its own GIL),
started once and shared by every run. ``--load N`` runs N CPU-burning processes during a second
pass to emulate a busy machine; ``--before DIR`` measures the runner of another checkout (e.g.
the code before a change) interleaved with this one, on the same server, under the same load.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent


def _serve(latency: float, port: int, conn, counter, cpu) -> None:
    """Child process: one loopback server, so it does not share the runner's GIL (as a real,
    remote server would not). Publishes its CPU seconds, and its request count at the end."""
    sys.path.insert(0, str(HERE))
    from tests.openai_server import OpenAIServer

    with OpenAIServer(latency=latency, port=port, share_port=True) as srv:
        conn.send(srv.base_url)
        # Only the CPU time while running: srv.count() scans every request recorded so far,
        # which would bill the server for the benchmark's own polling.
        while not conn.poll(0.05):
            cpu.value = time.process_time()
        counter.value, cpu.value = srv.count(), time.process_time()
        conn.send(srv.count())


@contextmanager
def server_process(latency: float, processes: int = 1):
    """``(base_url, count, cpu_seconds)`` of ``processes`` servers sharing one port, each in a
    child process, for the block (``count`` is known once the block has ended). One threaded
    process serves 32 connections well; at 128 its threads queue for its GIL (at latency 0 it
    answered 172 calls/s where four answered 394), hence several."""
    ctx = mp.get_context("spawn")
    procs, url = [], None
    for _ in range(max(1, processes)):
        parent, child = ctx.Pipe()
        counter, cpu = ctx.Value("i", 0), ctx.Value("d", 0.0)
        port = int(url.rsplit(":", 1)[1].split("/")[0]) if url else 0
        proc = ctx.Process(target=_serve, args=(latency, port, child, counter, cpu), daemon=True)
        proc.start()
        url = parent.recv()
        procs.append((proc, parent, counter, cpu))

    def count() -> int:
        return sum(c.value for _, _, c, _ in procs)

    def cpu_seconds() -> float:
        return sum(c.value for _, _, _, c in procs)

    try:
        yield url, count, cpu_seconds
    finally:
        for _, parent, _, _ in procs:
            parent.send("stop")
        for proc, parent, _, _ in procs:
            parent.recv()
            proc.join(5)


def _burn() -> None:
    while True:
        pass


@contextmanager
def load(n: int):
    """``n`` processes spinning on a CPU each, for the block (a busy machine)."""
    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=_burn, daemon=True) for _ in range(n)]
    for p in procs:
        p.start()
    try:
        yield
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            p.join(5)


# --- one measurement, in a fresh process, with the runner of ``--root`` -----------------------


def _worker_build(root: Path, db: Path) -> None:
    sys.path.insert(0, str(root))
    from analysis.core.store import Store
    from analysis.ingest.demo import build_and_write_demo

    build_and_write_demo(Store(db))


def _worker_run(root: Path, db: Path, url: str, c: int, rounds: int, latency: float) -> dict:
    sys.path.insert(0, str(root))
    import judges.backends.openai_compat  # noqa: F401 - the SDK import is planning, not calling
    from analysis.core.store import Store
    from judges.config import JudgeConfig
    from judges.plan import Selection, plan_run
    from judges.runner import RunOptions, run

    store = Store(db)
    cfg = JudgeConfig("openai", "judge-test", base_url=url)
    sel = Selection("demo", limit=rounds * c)
    plan0 = time.thread_time()
    plan_run(store, cfg, sel, concurrency=c)  # planned again by run(): its CPU is not calling
    plan = time.thread_time() - plan0
    cpu0, loop0 = time.process_time(), time.thread_time()
    s = run(store, cfg, sel, RunOptions(concurrency=c))
    cpu, loop = time.process_time() - cpu0, time.thread_time() - loop0 - plan
    again = run(store, cfg, sel, RunOptions(concurrency=c))
    rate = s.calls / s.call_seconds
    return {
        "calls": s.calls, "ok": s.ok, "call_seconds": s.call_seconds, "seconds": s.seconds,
        "ratio": rate / (c / latency), "loop_ms": 1000 * loop / s.calls,
        "other_ms": 1000 * (cpu - loop) / s.calls, "rerun_calls": again.calls,
    }  # fmt: skip


def _worker(args: argparse.Namespace) -> None:
    root, db = Path(args.root), Path(args.db)
    if args.worker == "build":
        _worker_build(root, db)
        return
    out = _worker_run(root, db, args.url, args.concurrency[0], args.rounds, args.latency)
    print(json.dumps(out))


# --- the driver -------------------------------------------------------------------------------


def _measure(tree: Path, template: Path, tmp: Path, url: str, c: int, args) -> dict:
    db = tmp / f"run-{c}.duckdb"
    shutil.copyfile(template, db)
    cmd = [sys.executable, __file__, "--worker", "run", "--root", str(tree), "--db", str(db),
           "--url", url, "--concurrency", str(c), "--rounds", str(args.rounds),
           "--latency", str(args.latency)]  # fmt: skip
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    for path in tmp.glob(f"run-{c}.duckdb*"):
        shutil.rmtree(path) if path.is_dir() else path.unlink()
    if done.returncode != 0:
        raise SystemExit(f"{tree}: C={c} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def _build(tree: Path, db: Path) -> None:
    cmd = [sys.executable, __file__, "--worker", "build", "--root", str(tree), "--db", str(db)]
    subprocess.run(cmd, check=True)


def _row(name: str, load_n: int, c: int, runs: list[dict], latency: float) -> str:
    med = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
    server = med["server_ms"] * med["calls"] / med["call_seconds"] / 10  # % of one core
    ratios = " ".join(f"{r['ratio']:.2f}" for r in runs)
    return (
        f"{name:>7} {load_n:>4} {c:>4} {c / latency:>6.0f} {med['ratio']:>6.2f} "
        f"{med['loop_ms']:>7.3f} {med['other_ms']:>7.3f} {med['server_ms']:>7.3f} "
        f"{server:>5.0f}%  [{ratios}] rerun {int(med['rerun_calls'])} calls"
    )


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--latency", type=float, default=0.2)
    p.add_argument("--rounds", type=int, default=10)
    p.add_argument("--concurrency", default="32,64,128")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--servers", type=int, default=4, help="server processes sharing a port")
    p.add_argument("--load", type=int, default=0, help="also measure with N CPU burners")
    p.add_argument("--before", help="another checkout whose runner is measured alongside")
    p.add_argument("--worker", choices=("build", "run"), help=argparse.SUPPRESS)
    p.add_argument("--root", help=argparse.SUPPRESS)
    p.add_argument("--db", help=argparse.SUPPRESS)
    p.add_argument("--url", help=argparse.SUPPRESS)
    args = p.parse_args()
    args.concurrency = [int(x) for x in str(args.concurrency).split(",")]
    if args.worker:
        _worker(args)
        return
    trees = {"after": HERE} | ({"before": Path(args.before).resolve()} if args.before else {})
    loads = [0] + ([args.load] if args.load else [])
    print(f"latency {args.latency * 1000:.0f} ms, {args.rounds} rounds, median of {args.repeat}")
    print(
        "cpu columns: ms of CPU per call (loop = event-loop thread, other = the rest of the "
        "runner process, server = the loopback server per request, % = its share of a core)"
    )
    print(f"{'tree':>7} {'load':>4} {'C':>4} {'ideal':>6} {'ratio':>6} {'loop':>7} "
          f"{'other':>7} {'server':>7} {'srv%':>6}  [runs]")  # fmt: skip
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        templates = {name: tmp / f"{name}.duckdb" for name in trees}
        for name, tree in trees.items():
            _build(tree, templates[name])
        with server_process(args.latency, args.servers) as (url, _count, server_cpu):
            for n in loads:
                results: dict[tuple[str, int], list[dict]] = {}
                with load(n):
                    for _ in range(args.repeat):
                        for c in args.concurrency:
                            for name, tree in trees.items():  # interleaved: same conditions
                                cpu0 = server_cpu()
                                r = _measure(tree, templates[name], tmp, url, c, args)
                                time.sleep(0.1)  # the server publishes its CPU every 50 ms
                                r["server_ms"] = 1000 * (server_cpu() - cpu0) / r["calls"]
                                results.setdefault((name, c), []).append(r)
                for c in args.concurrency:
                    for name in trees:
                        print(_row(name, n, c, results[(name, c)], args.latency), flush=True)


if __name__ == "__main__":
    main()

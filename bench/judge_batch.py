"""Benchmark: judging through the OpenAI Batch API, our side of it, and what it costs.

    python bench/judge_batch.py [--items 10000] [--parts 4] [--models gpt-4o-mini,gpt-4.1]

On a fresh demo store, against the loopback emulation of the Files and Batches endpoints
(tests/openai_batches.py, answering at once), times the two things this program does for a batch
run: submitting (plan, request files written and split into ``--parts``, uploaded, batches
created) and storing (output and error files downloaded, read, parsed and written, one
transaction per part). The service's own time (minutes to 24 h) is not ours and is not measured.
Prints items per second of each, next to the live runner's bound at C = 32 and 200 ms latency
(160 calls/s), and the estimated cost of judging FLASK's 1,740 instances × 15 models at list and
batch prices (the estimate's token counts, per call, from the same plan).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(HERE))

FLASK_CALLS = 1_740 * 15  # FLASK's evaluation set, 15 models, one call per response


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--items", type=int, default=10_000)
    p.add_argument("--parts", type=int, default=4)
    p.add_argument("--models", default="gpt-4o-mini,gpt-4.1")
    args = p.parse_args()

    from analysis.core.store import Store
    from analysis.ingest.demo import build_and_write_demo
    from judges.batch_run import resume
    from judges.config import JudgeConfig
    from judges.plan import Selection, plan_run
    from judges.runner import RunOptions, run
    from tests.openai_batches import BatchService
    from tests.openai_server import OpenAIServer

    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "bench.duckdb")
        build_and_write_demo(store)
        sel = Selection("demo", limit=args.items)
        per_part = -(-args.items // args.parts)
        options = RunOptions(wait=False, poll_s=0.05, batch_max_requests=per_part)
        service = BatchService()
        with OpenAIServer(batches=service) as srv:
            cfg = JudgeConfig("openai-batch", "judge-test", base_url=srv.base_url)
            service.pause()  # nothing answered while we submit: our time only
            t0 = time.perf_counter()
            submitted = run(store, cfg, sel, options)
            submit_s = time.perf_counter() - t0
            service.resume()
            for batch_id in list(service.batches):
                service.wait_for(batch_id, timeout=600)
            t0 = time.perf_counter()
            (stored,) = resume(store, options=RunOptions(poll_s=0.05))
            store_s = time.perf_counter() - t0
        n = submitted.calls
        print(f"items {n:,} in {len(stored.batches)} parts; stored ok {stored.ok:,}, "
              f"errors {stored.errors:,}")  # fmt: skip
        print(f"submit (plan, files, upload, create): {submit_s:6.2f} s = {n / submit_s:8,.0f} "
              "items/s")  # fmt: skip
        print(f"store (download, read, parse, write): {store_s:6.2f} s = {n / store_s:8,.0f} "
              "items/s")  # fmt: skip
        print("live runner's bound at C = 32, 200 ms: 160 calls/s")
        print(f"\nestimated cost of FLASK × 15 models ({FLASK_CALLS:,} calls), from the plan's "
              "token estimate:")  # fmt: skip
        for model in args.models.split(","):
            live = plan_run(store, JudgeConfig("openai", model), sel).estimate
            batch = plan_run(store, JudgeConfig("openai-batch", model), sel).estimate
            scale = FLASK_CALLS / max(live.calls, 1)
            if live.cost_usd is None or batch.cost_usd is None:
                print(f"  {model}: not in the price table")
                continue
            print(f"  {model:<12} live ${live.cost_usd * scale:9,.2f}   batch "
                  f"${batch.cost_usd * scale:9,.2f}   "
                  f"({(live.prompt_tokens + live.completion_tokens) / max(live.calls, 1):,.0f} "
                  "tokens per call)")  # fmt: skip


if __name__ == "__main__":
    main()

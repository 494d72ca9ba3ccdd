"""``batches``: the judging runs sent through the OpenAI Batch API (``judge --backend
openai-batch``) whose answers are not all stored yet, where each part is at the service, and
``--cancel RUN`` to cancel a run's batches there (``--forget RUN`` to give them up without the
service). ``judge --resume`` stores their answers."""

from __future__ import annotations

from typing import Any

import click

from analysis.cli.common import db_option, open_store


@click.command(short_help="Pending OpenAI batches of judging runs: list, cancel, forget.")
@db_option
@click.option("--dataset", help="only the runs on this dataset")
@click.option("--cancel", "cancel_run", metavar="RUN",
              help="ask the service to cancel this run's unfinished batches (what they answered "
              "is stored by the next judge --resume)")  # fmt: skip
@click.option("--forget", "forget_run", metavar="RUN",
              help="give up this run's unfinished batches without asking the service (it is "
              "gone, or its key revoked): their requests are recorded as failed, so the items "
              "can be judged again")  # fmt: skip
def batches(db: str | None, dataset: str | None, cancel_run: str | None,
            forget_run: str | None) -> int:  # fmt: skip
    """List the pending batch runs (answers not all stored yet): each run's judge, dataset and
    parts, with the batch id, the service's status and how many requests it has answered. The
    state is the last one read; `finegrain judge --resume` reads it again and stores what is
    done. With --cancel RUN, that run's unfinished batches are cancelled at the service; with
    --forget RUN they are given up here (for a service that is gone)."""
    from judges import batch_store

    store = open_store(db)
    if cancel_run is not None and forget_run is not None:
        raise click.UsageError("Give --cancel or --forget, not both.")
    if cancel_run is not None or forget_run is not None:
        return _act(store, cancel_run or forget_run, forget=forget_run is not None)
    pending = batch_store.pending_runs(store, dataset)
    if not pending:
        print("No pending batches: every batch's answers are stored.")
        return 0
    for run in pending:
        print(f"run {run.run_id} · judge {run.judge} · dataset {run.dataset} · started "
              f"{run.started_at:%Y-%m-%d %H:%M} UTC")  # fmt: skip
        parts = batch_store.parts(store, run.run_id)
        for p in parts:
            print(f"  {p.line(len(parts))}")
    print("`finegrain judge --resume` stores their answers once the service has them.")
    return 0


def _act(store: Any, run_id: str, *, forget: bool) -> int:
    from judges import batch_store
    from judges.batch_run import cancel_run, forget_run

    if not batch_store.parts(store, run_id):
        raise click.UsageError(f"No batch run {run_id!r} in the store (see `finegrain batches`).")
    for line in (forget_run if forget else cancel_run)(store, run_id):
        print(line)
    if not forget:
        print("`finegrain judge --resume` stores what the batches answered before the cancel.")
    return 0

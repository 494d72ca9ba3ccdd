"""Work queues of responses, kept in the store: "re-judge these" and "annotate these".

The Samples page fills them; the Annotate page works through ``ANNOTATE`` and the Re-judge page
reads ``REJUDGE``. A queue is named and per dataset; an item is one response (instance, model).
Being rows in the store, a queue survives page switches, a browser refresh and a restart. Every
change is one transaction; adding an item already queued keeps its place.

    from analysis.views import queues
    queues.add(store, queues.REJUDGE, "flask", [("12", "vicuna-13b")])
    [item.model for item in queues.items(store, queues.REJUDGE, "flask")]
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

import pandas as pd

from analysis.core.errors import InputError, NotFoundError
from analysis.core.store import Store
from analysis.views.tables import for_people

QUEUE_ADD = """
INSERT INTO queue_items (queue, dataset, instance_id, model)
SELECT ?, ?, k.instance_id, k.model
FROM (SELECT unnest(?::VARCHAR[]) AS instance_id, unnest(?::VARCHAR[]) AS model,
             generate_subscripts(?::VARCHAR[], 1) AS pos) k
ORDER BY k.pos
ON CONFLICT DO NOTHING
"""

# Which of the given (instance, model) pairs have no response in the dataset.
QUEUE_MISSING_RESPONSES = """
SELECT k.instance_id, k.model
FROM (SELECT unnest(?::VARCHAR[]) AS instance_id, unnest(?::VARCHAR[]) AS model,
             generate_subscripts(?::VARCHAR[], 1) AS pos) k
ANTI JOIN responses r ON r.dataset = ? AND r.instance_id = k.instance_id AND r.model = k.model
ORDER BY k.pos
"""

QUEUE_REMOVE = """
DELETE FROM queue_items q
USING (SELECT unnest(?::VARCHAR[]) AS instance_id, unnest(?::VARCHAR[]) AS model) k
WHERE q.queue = ? AND q.dataset = ? AND q.instance_id = k.instance_id AND q.model = k.model
"""

QUEUE_CLEAR = "DELETE FROM queue_items WHERE queue = ? AND dataset = ?"

QUEUE_LIST = """
SELECT queue, dataset, instance_id, model, added_at
FROM queue_items WHERE queue = ? AND dataset = ?
ORDER BY seq
"""

QUEUE_COUNTS = """
SELECT queue, count(*) AS n FROM queue_items WHERE dataset = ? GROUP BY queue ORDER BY queue
"""


REJUDGE = "rejudge"
ANNOTATE = "annotate"
QUEUE_TITLES = {REJUDGE: "Re-judge these", ANNOTATE: "Annotate these"}
_NAME = re.compile(r"^[a-z][a-z0-9_-]{0,39}$")


@dataclass(frozen=True)
class QueueItem:
    """One queued response."""

    queue: str
    dataset: str
    instance_id: str
    model: str
    added_at: datetime | None = None

    @property
    def key(self) -> tuple[str, str]:
        return (self.instance_id, self.model)


def _check_name(queue: str) -> None:
    if not isinstance(queue, str) or not _NAME.match(queue):
        raise InputError(
            "queue",
            None,
            "queue",
            f"{queue!r} is not a queue name: use lower-case letters, digits, '-' or '_' "
            f"(for example '{REJUDGE}' or '{ANNOTATE}').",
        )


def _pairs(keys: Iterable[tuple[str, str]]) -> tuple[list[str], list[str]]:
    ids: list[str] = []
    models: list[str] = []
    for key in keys:
        try:
            instance_id, model = key
        except (TypeError, ValueError) as e:
            raise InputError(
                "queue", None, "item", f"{key!r} is not an (instance_id, model) pair"
            ) from e
        if not isinstance(instance_id, str) or not isinstance(model, str):
            raise InputError("queue", None, "item", f"{key!r}: instance_id and model must be text")
        ids.append(instance_id)
        models.append(model)
    return ids, models


def add(store: Store, queue: str, dataset: str, keys: Iterable[tuple[str, str]]) -> int:
    """Append responses (instance_id, model) to a queue; returns how many were new.

    Every key must name a stored response of ``dataset``; otherwise nothing is added and the
    error lists the unknown ones."""
    _check_name(queue)
    ids, models = _pairs(keys)
    if not ids:
        return 0
    store.ensure()  # a store made before queues existed gets the table
    with store.write() as con:
        missing = con.execute(QUEUE_MISSING_RESPONSES, [ids, models, ids, dataset]).fetchall()
        if missing:
            shown = ", ".join(f"{i} / {m}" for i, m in missing[:5])
            more = f" and {len(missing) - 5} more" if len(missing) > 5 else ""
            raise NotFoundError(
                f"No response in dataset '{dataset}' for (instance / model) {shown}{more}; "
                "nothing was added to the queue."
            )
        before = _count(con, queue, dataset)
        con.execute(QUEUE_ADD, [queue, dataset, ids, models, ids])
        return _count(con, queue, dataset) - before


def _count(con, queue: str, dataset: str) -> int:
    return len(con.execute(QUEUE_LIST, [queue, dataset]).fetchall())


def remove(store: Store, queue: str, dataset: str, keys: Iterable[tuple[str, str]]) -> int:
    """Take responses off a queue (unknown ones are ignored); returns how many went."""
    _check_name(queue)
    ids, models = _pairs(keys)
    if not ids:
        return 0
    store.ensure()
    with store.write() as con:
        before = _count(con, queue, dataset)
        con.execute(QUEUE_REMOVE, [ids, models, queue, dataset])
        return before - _count(con, queue, dataset)


def clear(store: Store, queue: str, dataset: str) -> int:
    """Empty a queue of one dataset; returns how many items went."""
    _check_name(queue)
    store.ensure()
    with store.write() as con:
        before = _count(con, queue, dataset)
        con.execute(QUEUE_CLEAR, [queue, dataset])
        return before


def items(store: Store, queue: str, dataset: str) -> list[QueueItem]:
    """The queue's items in the order they were added."""
    _check_name(queue)
    store.ensure()
    with store.read() as con:
        rows = con.execute(QUEUE_LIST, [queue, dataset]).fetchall()
    return [QueueItem(*row) for row in rows]


def counts(store: Store, dataset: str) -> dict[str, int]:
    """Items per queue of a dataset (every known queue listed, empty ones as 0)."""
    store.ensure()
    with store.read() as con:
        found = dict(con.execute(QUEUE_COUNTS, [dataset]).fetchall())
    return {**dict.fromkeys(QUEUE_TITLES, 0), **found}


def table(store: Store, queue: str, dataset: str) -> pd.DataFrame:
    """The queue as a table for a page: position, instance_id, model, added_at."""
    rows = items(store, queue, dataset)
    return pd.DataFrame(
        {
            "position": range(1, len(rows) + 1),
            "instance_id": [r.instance_id for r in rows],
            "model": [r.model for r in rows],
            "added_at": [r.added_at for r in rows],
        }
    )


def display_table(store: Store, queue: str, dataset: str) -> pd.DataFrame:
    """``table`` for reading: readable headers, the time it was added to the minute."""
    return for_people(table(store, queue, dataset))

"""What every command shares: the ``--db`` option, opening the store, printing reports.

Nothing heavy at import time (no duckdb, pandas, tqdm): ``finegrain --help`` imports this.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from analysis.core.store import Store

# The default is computed when a command runs: analysis.core.store imports duckdb.
db_option = click.option(
    "--db",
    metavar="PATH",
    help="DuckDB file  [default: $FINEGRAIN_DB, else data/finegrain.duckdb in a checkout, "
    "~/.local/share/finegrain/finegrain.duckdb when installed]",
)


def open_store(db: str | None) -> Store:
    from analysis.core.store import Store

    return Store(db)  # None: core.store.default_db_path()


def print_report(report: Any, header: str) -> None:
    print(header)
    for line in report.lines():
        print(f"  {line}")


def progress_bar() -> tuple[Callable[[int, int, str], None], Callable[[], None]]:
    """A stderr progress bar for imports: ``(update(done, total, label), close())``."""
    from tqdm import tqdm

    bar = tqdm(total=1, unit="step", file=sys.stderr, dynamic_ncols=True, leave=True)

    def update(done: int, total: int, label: str) -> None:
        bar.total = total
        bar.n = done
        bar.set_description(label[:60])
        bar.refresh()

    return update, bar.close


def csv_list(text: str | None) -> tuple[str, ...]:
    """``"a, b,,c"`` → ``("a", "b", "c")``; None → ``()``."""
    return tuple(x.strip() for x in (text or "").split(",") if x.strip())

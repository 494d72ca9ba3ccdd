"""What every command shares: the ``--db`` option, opening the store, printing reports.

Nothing heavy at import time (no duckdb, pandas, tqdm): ``finegrain --help`` imports this.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
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


def version() -> str:
    """The running code's version: a checkout's pyproject.toml (a stale install in the same
    environment must not answer for it), else the installed distribution's."""
    import tomllib
    from importlib import metadata

    try:
        with open(Path(__file__).resolve().parents[2] / "pyproject.toml", "rb") as f:
            project = tomllib.load(f)["project"]
        if project.get("name") == "finegrain":
            return project["version"]
    except (OSError, KeyError, tomllib.TOMLDecodeError):
        pass  # installed: no pyproject.toml beside the package
    try:
        return metadata.version("finegrain")
    except metadata.PackageNotFoundError:
        return "unknown"

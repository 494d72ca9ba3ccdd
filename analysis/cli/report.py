"""``finegrain report``: the self-contained stakeholder report as one HTML file. Its heavy
modules (pandas, duckdb, plotly, scipy) are imported when the command runs."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from analysis.cli.common import csv_list, db_option, open_store, progress_bar


def _levels(text: str | None) -> tuple[int, ...]:
    """``"1,3"`` → ``(1, 3)``; anything but whole numbers 1-5 is bad input."""
    from analysis.core.errors import InputError

    out = []
    for part in csv_list(text):
        if not part.isdigit() or not 1 <= int(part) <= 5:
            raise InputError("--levels", None, None, f"'{part}' is not a difficulty level 1-5")
        out.append(int(part))
    return tuple(out)


@click.command(short_help="Write the self-contained stakeholder report (one HTML file).")
@db_option
@click.option("--out", "out", required=True, metavar="FILE.html", help="the HTML file to write")
@click.option("--dataset", help="dataset  [default: the app's: the real one with most scores]")
@click.option("--judge", help="whose scores  [default: the sidebar's: the first LLM judge]")
@click.option("--models", metavar="M,M,…", help="only these models (the radar shows them all)")
@click.option("--domains", metavar="D,D,…", help="only instances of these domains")
@click.option("--levels", metavar="1,2,…", help="only these difficulty levels (1-5)")
@click.option("--tasks", metavar="T,T,…", help="only these source tasks")
@click.option("--hard", is_flag=True, help="only FLASK-Hard instances")
def report(
    db: str | None,
    out: str,
    dataset: str | None,
    judge: str | None,
    models: str | None,
    domains: str | None,
    levels: str | None,
    tasks: str | None,
    hard: bool,
) -> None:
    """Write the report of one view (the dataset, judge and filters of the app's sidebar) to
    FILE.html: provenance, leaderboard, radar, breakdowns, FLASK-Hard, human vs judge, the
    judges' leaderboard and exemplar responses. It opens offline in any browser, its figures
    stay interactive, and "Print to PDF" gives clean pages."""
    from analysis.charts.report import report as make_report
    from analysis.core.errors import InputError
    from analysis.core.filters import Filters
    from analysis.views.report_data import resolve_filters

    path = Path(out)
    if path.is_dir() or not path.parent.is_dir():
        raise InputError("--out", None, None, f"'{out}' is not a file in an existing folder")
    store = open_store(db)
    if not store.exists():
        raise InputError("--db", None, None, f"no store at {store.path}; import data first")
    f = Filters(
        dataset or "", judge, csv_list(models), csv_list(domains), _levels(levels),
        csv_list(tasks), hard,
    )  # fmt: skip
    f = resolve_filters(store, f)  # bad input is said before any work
    update, close = progress_bar()
    try:
        html = make_report(store, f, progress=lambda x, label: update(round(x * 100), 100, label))
    finally:
        close()
    try:
        path.write_bytes(html)
    except OSError as e:
        raise InputError("--out", None, None, f"cannot write '{out}': {e.strerror}") from e
    print(f"Report written to {path} ({len(html) / 1e6:.1f} MB)", file=sys.stdout)

"""``finegrain export``: every table as hive-partitioned Parquet (or CSV) with a manifest, for
DuckDB, Spark, Trino or BigQuery; ``import-scores`` reads a Parquet export back."""

from __future__ import annotations

import click

from analysis.cli.common import db_option, open_store, print_report, progress_bar, version


@click.command(short_help="Write every table as partitioned Parquet or CSV.")
@db_option
@click.option(
    "--out",
    required=True,
    type=click.Path(file_okay=False),
    help="a new or empty folder (written whole, or not at all)",
)
@click.option(
    "--format",
    "file_format",
    type=click.Choice(["parquet", "csv"]),
    default="parquet",
    show_default=True,
    help="parquet: for warehouses and to rebuild a store (import-scores OUT); csv: for "
    "spreadsheets (lists ';'-joined, formula-looking text neutralised)",
)
@click.option(
    "--dataset", "datasets", multiple=True, help="only this dataset (repeatable)  [default: all]"
)
def export(db: str | None, out: str, file_format: str, datasets: tuple[str, ...]) -> None:
    """Write scores (latest, with instance metadata), score history, judgments (raw outputs and
    rationales), runs, instances, responses, criteria, datasets and judges under OUT, partitioned
    by dataset and judge (hive-style folders: OUT/scores/dataset=…/judge=…/), plus
    OUT/manifest.json (schema version, row counts, provenance). Read in place, e.g. DuckDB:
    read_parquet('OUT/scores/**/*.parquet', hive_partitioning = true)."""
    from analysis.ingest.export import export as run_export

    store = open_store(db)
    update, close = progress_bar()
    try:
        report = run_export(
            store,
            out,
            file_format=file_format,
            datasets=datasets,
            producer=f"finegrain {version()}",
            progress=update,
        )
    finally:
        close()
    names = ", ".join(report.datasets) or "no dataset"
    print_report(report, f"Exported {names} as {file_format} to {report.out}")

"""Commands that fill the store and read numbers from it: demo, import-flask, import-scores,
agreement. Their heavy modules (pandas, duckdb, scipy) are imported when a command runs."""

from __future__ import annotations

import click

from analysis.cli.common import db_option, open_store, print_report, progress_bar

# analysis.ingest.flask_source.DEFAULT_URL, repeated so that help does not import pandas (a test
# keeps the two equal).
FLASK_URL = "https://raw.githubusercontent.com/kaistAI/FLASK/main"


@click.command(short_help="(Re)build the simulated demo dataset.")
@db_option
@click.option("--seed", type=int, default=20231, show_default=True, help="random seed")
@click.option("--force", is_flag=True, help="also delete annotations and judging runs on it")
def demo(db: str | None, seed: int, force: bool) -> None:
    """(Re)build the simulated demo dataset. Refuses when annotations or judging runs were
    added to it, unless --force."""
    from analysis.ingest.demo_panel import build_and_write_demo_with_panel

    store = open_store(db)
    report = build_and_write_demo_with_panel(store, seed=seed, force=force)
    print_report(report, f"Simulated demo (seed {seed}) written to {store.path}")


@click.command(
    "import-flask",
    short_help="Import FLASK from a folder or a base URL.",
    help="Import FLASK from SOURCE: a folder laid out like the kaistAI/FLASK repository, or a "
    f"base URL (default: {FLASK_URL}).",
)
@db_option
@click.argument("source", default=FLASK_URL, metavar="[SOURCE]")
def import_flask(db: str | None, source: str) -> None:
    from analysis.ingest.flask_source import import_flask as run_import

    store = open_store(db)
    update, close = progress_bar()
    try:
        # The operator is trusted: private addresses allowed, detailed errors (the Overview
        # page's visitor is not; see analysis.ingest.flask_source).
        report = run_import(store, source, progress=update, trusted=True)
    finally:
        close()
    print_report(report, f"FLASK imported from {source} into {store.path}")


class Scale(click.ParamType):
    """``MIN-MAX``, ``MIN..MAX`` or ``MIN:MAX`` → ``(min, max)`` with min below max; either end
    may be negative (``-5-5``, ``-5..5``, ``-10--1``)."""

    name = "MIN-MAX"
    NUMBER = r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"

    def convert(self, value: object, param: object, ctx: object) -> tuple[float, float]:
        import math
        import re

        if isinstance(value, tuple):
            return value
        text = str(value)
        # The first number is read whole (its own sign and exponent), so the separator is
        # the next '-', '..' or ':'.
        m = re.fullmatch(rf"\s*({self.NUMBER})\s*(?:\.\.|:|-)\s*({self.NUMBER})\s*", text)
        if m is None:
            self.fail(f"expected MIN-MAX such as 1-10, -5-5 or -5..5, got {text!r}")
        lo, hi = float(m[1]), float(m[2])
        if not (math.isfinite(lo) and math.isfinite(hi)):
            self.fail(f"the scale ends must be finite numbers: {text}")
        if lo >= hi:
            self.fail(f"the scale minimum must be below the maximum: {text}")
        return lo, hi


@click.command("import-scores", short_help="Import scores (CSV, JSONL, Parquet, an export).")
@db_option
@click.argument("file")
@click.option("--judge", help="scorer name for every row (else a 'judge' column)")
@click.option("--kind", type=click.Choice(["human", "llm"]), help="kind of scorer  [default: llm]")
@click.option("--dataset", help="dataset name (else a 'dataset' column, else the file name)")
@click.option(
    "--scale",
    type=Scale(),
    help="scale of the dataset's own criteria: MIN-MAX, e.g. 1-10, -5-5 or -5..5",
)
@click.option(
    "--out-of-scale",
    type=click.Choice(["error", "na"]),
    default="error",
    show_default=True,
    help="a score outside its criterion's scale (such as -1 or 0 for 'not rated'): stop the "
    "import naming file, line and field, or store it as N/A and report how many and where",
)
@click.option(
    "--lenient", is_flag=True, help="skip bad rows, listing each one, instead of stopping"
)
def import_scores(
    db: str | None,
    file: str,
    judge: str | None,
    kind: str | None,
    dataset: str | None,
    scale: tuple[float, float] | None,
    out_of_scale: str,
    lenient: bool,
) -> None:
    """Import long-format scores from FILE (CSV, JSONL or Parquet): one row per instance, model,
    skill and score. Criteria belong to the dataset: the same name may have another scale in
    another dataset. FILE may also be a folder written by `finegrain export` (Parquet): it
    brings its datasets, instances, responses, judges, runs, judgments and latest scores, so a
    store can be rebuilt from an export (no other option applies to it)."""
    from analysis.ingest.score_files import import_scores as run_import

    store = open_store(db)
    report = run_import(
        store,
        file,
        judge=judge,
        kind=kind,
        dataset=dataset,
        scale=scale,
        lenient=lenient,
        out_of_scale=out_of_scale,
    )
    print_report(report, f"Scores imported from {file} into {store.path}")


@click.command(short_help="Agreement between two scorers, or among raters.")
@db_option
@click.option("--dataset", required=True)
@click.option(
    "--a",
    help="a scorer's name, or kind:human / kind:llm (the kind's mean), or kind:llm:each (every "
    "LLM judge in turn against --b kind:human: the judge leaderboard, one table)",
)
@click.option("--b", help="the other scorer or group")
@click.option(
    "--raters",
    multiple=True,
    help="kind:human, kind:llm or NAME,NAME,... (instead of --a/--b); repeatable: give a name "
    "that holds a comma with its own --raters",
)
@click.option("--skill", help="one skill or criterion  [default: every skill and overall]")
@click.option(
    "--level",
    type=click.Choice(["pooled", "instance", "system"]),
    default="pooled",
    show_default=True,
    help="what the correlations are computed over",
)
@click.option("--by", type=click.Choice(["domain", "difficulty", "model"]), help="slice table")
@click.option("--json", "as_json", is_flag=True, help="print machine-readable JSON")
@click.option("--n-boot", type=int, default=1000, show_default=True, help="bootstrap resamples")
@click.option("--seed", type=int, default=0, show_default=True, help="bootstrap seed")
def agreement(db: str | None, **kw: object) -> None:
    """Agreement between two scorers (--a, --b): Spearman, Kendall, Pearson, MAE, exact and
    within-1 agreement, weighted kappa and Krippendorff's alpha, each with a 95% CI; or
    Krippendorff's alpha among any number of raters (--raters). With --a kind:llm:each --b
    kind:human: every LLM judge against the humans, per skill, with the human ceiling (one row
    per judge x skill x statistic)."""
    from analysis.core.errors import InputError
    from analysis.views.judge_board_report import check_each

    each = check_each(kw["a"], kw["b"], kw["by"], kw["raters"])
    store = open_store(db)
    if each:
        _board(store, **kw)
    elif kw["raters"]:
        _raters(store, **kw)
    elif kw["a"] and kw["b"]:
        _pair(store, **kw)
    else:
        raise InputError("command line", None, "--a/--b", "give --a and --b, or --raters")


def _raters(store, *, dataset, raters, skill, as_json, n_boot, seed, **_) -> None:
    import json

    from analysis.core.filters import Filters
    from analysis.views import agreement_report as report
    from analysis.views.agreement import rater_agreement

    frame = rater_agreement(store, Filters(dataset), raters, skill, n_boot, seed)
    if as_json:
        print(json.dumps(report.raters_to_dict(frame, dataset), indent=2))
        return
    print(f"Krippendorff's alpha among {', '.join(raters)} on {dataset} (95% CI, n ratings)")
    print(report.text_table(frame))


def _board(store, *, dataset, skill, level, as_json, n_boot, seed, **_) -> None:
    import json

    from analysis.core.filters import Filters
    from analysis.views import judge_board_report as report
    from analysis.views.judge_board import BoardQuery, judge_board

    board = judge_board(store, BoardQuery(Filters(dataset), level, skill, n_boot, seed))
    if as_json:
        print(json.dumps(report.to_dict(board), indent=2))
        return
    print(f"Every LLM judge vs kind:human on {dataset}; correlations {level}; 95% CI")
    print(report.text_table(board))
    for note in report.notes(board):
        print(f"note: {note}")


def _pair(store, *, dataset, a, b, skill, level, by, as_json, n_boot, seed, **_) -> None:
    import json

    from analysis.core.filters import Filters
    from analysis.views import agreement_report as report
    from analysis.views.agreement import AgreementQuery
    from analysis.views.agreement import agreement as compute

    result = compute(store, AgreementQuery(Filters(dataset), a, b, level, skill, by, n_boot, seed))
    if as_json:
        print(json.dumps(report.to_dict(result), indent=2))
        return
    print(f"{result.a.spec} vs {result.b.spec} on {dataset}; correlations {level}; 95% CI")
    print(report.text_table(result.stats))
    if not result.slices.empty:
        print(f"\nBy {by} (pooled):")
        print(report.slices_text(result))
    if not result.ceiling.empty:
        print("\n" + report.ceiling_text(result))
    for note in result.notes:
        print(f"note: {note}")

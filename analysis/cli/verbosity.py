"""``verbosity``: does a judge's score move when a response is made wordier with the same
content? Rewrites a sample of responses through a chosen model (any OpenAI-compatible server,
or a local model), judges both versions with the chosen judge through the judging runner, and
prints the report (the Judges page's Verbosity section, same numbers)."""

from __future__ import annotations

import json
import math
import sys
from dataclasses import replace
from typing import Any

import click

from analysis.cli.common import csv_list, db_option, open_store
from analysis.cli.judge import NOT_ALL_STORED, judge_config


@click.command(short_help="Verbosity check: rewrite wordier, judge both, report.")
@db_option
@click.option("--dataset", required=True, help="the dataset whose responses are rewritten")
@click.option(
    "--judge",
    "judge_name",
    metavar="NAME",
    help="a stored LLM judge to check (one run by `finegrain judge` or Re-judge)",
)
@click.option(
    "--judge-config",
    metavar="FILE",
    help="or a judge file (YAML, JSON or TOML, as `finegrain judge --config`)",
)
@click.option(
    "--judge-base-url",
    metavar="URL",
    help="the judge's OpenAI-compatible server  [default: --base-url]",
)
@click.option(
    "--rewriter-model",
    metavar="NAME",
    help="the model that rewrites (API name, or a local model for transformers)",
)
@click.option(
    "--rewriter-backend",
    type=click.Choice(["openai", "transformers"]),
    default="openai",
    show_default=True,
)
@click.option(
    "--base-url",
    metavar="URL",
    help="the rewriter's OpenAI-compatible server  [default: $OPENAI_BASE_URL, "
    "else OpenAI]; the key comes from $OPENAI_API_KEY",
)
@click.option(
    "--sample",
    type=click.IntRange(1),
    default=50,
    show_default=True,
    help="responses to rewrite, drawn at random from the dataset (and --models)",
)
@click.option("--seed", type=int, default=0, show_default=True, help="the sample's seed")
@click.option("--models", metavar="ID,ID,…", help="only these models' responses")
@click.option("--queue", is_flag=True, help="rewrite the re-judge queue instead of a sample")
@click.option("--concurrency", type=click.IntRange(1), default=8, show_default=True)
@click.option("--rpm", type=float, help="requests per minute limit")
@click.option("--retries", type=click.IntRange(0), default=4, show_default=True)
@click.option("--estimate-only", is_flag=True, help="print the estimate and stop")
@click.option(
    "--report-only", is_flag=True, help="print the stored report only (no rewriting, no judging)"
)
@click.option(
    "--check",
    metavar="DATASET",
    help="the check to report (its derived dataset)  [default: the newest]",
)
@click.option("--json", "as_json", is_flag=True, help="print the report as JSON")
def verbosity(db: str | None, **p: Any) -> int:
    """Rewrite a sample of DATASET's responses to be wordier with the same content, judge the
    originals (those the judge has not scored) and the rewrites with the judge, and print per
    judge and skill the same-score rate, the mean shift (rewrite − original) and the length
    ratio, each with a 95% CI over instances and n. A judge × skill is flagged when the shift's
    CI excludes 0 and |shift| is at least a quarter point on a 1–5 scale, on 10+ instances.

    The rewrites are stored in a dataset of their own, "DATASET · verbose (MODEL)", readable on
    the Samples page; the original dataset's numbers are not changed. Every answer is kept:
    running the same command again makes no call for what is stored, and finishes an
    interrupted check. Exits with status 1 when answers are not all stored yet.

    \b
    Example:
      finegrain verbosity --dataset flask --judge "gpt-4o-mini (openai, flask-v1)" \\
        --rewriter-model gpt-4o-mini --sample 100
    """
    store = open_store(db)
    status = 0
    if not p["report_only"]:
        status = _run(store, p)
        if status is None:  # the estimate only
            return 0
    _print_report(store, p)
    return status


def _judge(store: Any, p: dict) -> Any:
    from judges.verbosity import stored_judge

    if bool(p["judge_name"]) == bool(p["judge_config"]):
        raise click.UsageError("Give the judge to check: --judge NAME or --judge-config FILE.")
    url = p["judge_base_url"] or p["base_url"]
    if p["judge_name"]:
        return stored_judge(store, p["judge_name"], base_url=url)
    config = judge_config({}, p["judge_config"])
    return replace(config, base_url=url) if url else config


def _items(store: Any, p: dict) -> tuple[tuple[str, str], ...]:
    from analysis.core.filters import Filters
    from analysis.views import judge_verbosity, queues

    if p["queue"]:
        return tuple(i.key for i in queues.items(store, queues.REJUDGE, p["dataset"]))
    f = Filters(p["dataset"], models=csv_list(p["models"]))
    return judge_verbosity.sample(store, f, p["sample"], p["seed"])


def _run(store: Any, p: dict) -> int | None:
    from analysis.core.errors import InputError
    from judges.outcome import RunOptions
    from judges.rewrite import rewriter_config
    from judges.verbosity import CheckRequest, estimate_lines, run_check

    if not p["rewriter_model"]:
        raise click.UsageError("Give --rewriter-model (or --report-only for the stored report).")
    store.ensure()
    judge = _judge(store, p)
    values = {"backend": p["rewriter_backend"], "model": p["rewriter_model"]}
    rewriter = rewriter_config(values | {"base_url": p["base_url"]}, "command line")
    items = _items(store, p)
    if not items:
        raise InputError("selection", None, None, f"no responses to rewrite in '{p['dataset']}'")
    options = RunOptions(concurrency=p["concurrency"], rpm=p["rpm"], max_retries=p["retries"])
    req = CheckRequest(p["dataset"], judge, rewriter, items, options)
    err = sys.stderr if p["as_json"] else sys.stdout
    print(f"Verbosity check of {judge.judge} on {len(items):,} responses of {p['dataset']}:",
          file=err)  # fmt: skip
    for line in estimate_lines(store, req):
        print(f"  {line}", file=err)
    if p["estimate_only"]:
        return None
    result = run_check(store, req, progress=_progress())
    print("Summary:", file=err)
    for line in result.lines():
        print(f"  {line}", file=err)
    p["check"] = p["check"] or result.derived
    if result.incomplete:
        print("error: the check is incomplete; run the same command again to finish it "
              "(nothing paid for is asked again).", file=sys.stderr)  # fmt: skip
        return NOT_ALL_STORED
    return 0


def _progress():
    def show(phase: str, s: Any) -> None:
        print(f"\r{phase}: {s.done:,}/{s.items:,}", end="", file=sys.stderr, flush=True)
        if s.done >= s.items:
            print(file=sys.stderr)

    return show


def _print_report(store: Any, p: dict) -> None:
    import pandas as pd

    from analysis.core.filters import Filters
    from analysis.views import judge_verbosity as jv

    f = Filters(p["dataset"], models=csv_list(p["models"]))
    r = jv.verbosity_report(store, f, p["check"])
    if p["as_json"]:
        print(json.dumps(_as_json(r), ensure_ascii=False, indent=1))
        return
    for line in jv.check_lines(r):
        print(line)
    if r.table.empty:
        return
    with pd.option_context("display.width", 200, "display.max_columns", 30):
        print(jv.report_table(r).to_string(index=False))
    if len(r.failures):
        print("Failed rewrites:")
        print(jv.failures_table(r).drop(columns=["Raw output"]).to_string(index=False))


def _records(frame: Any) -> list[dict]:
    def clean(v: Any) -> Any:
        if isinstance(v, float) and math.isnan(v):
            return None
        return v.item() if hasattr(v, "item") else v

    return [{k: clean(v) for k, v in row.items()} for row in frame.to_dict("records")]


def _as_json(r: Any) -> dict:
    checks = r.checks.assign(imported_at=r.checks["imported_at"].astype(str))
    return {
        "dataset": r.dataset,
        "check": r.check,
        "checks": _records(checks),
        "table": _records(r.table),
        "failures": _records(r.failures),
    }

"""``judge``: score responses with an LLM judge. The judge's options are derived from the
``JudgeConfig`` declaration (judges/config.py); the run's options (what to judge, how fast)
are declared here because they are not part of the judge."""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from dataclasses import Field
from typing import Any

import click
from click.core import ParameterSource

from analysis.cli.common import csv_list, db_option, open_store
from judges import config as declaration
from judges.config import JudgeConfig, Setting


def _click_type(name: str, s: Setting) -> click.ParamType:
    kind, _ = declaration.value_type(name)
    if s.choices:
        return click.Choice(s.choices)
    if kind is int:
        return click.IntRange(s.min, s.max) if s.min is not None or s.max is not None else click.INT
    if kind is float:
        return click.FloatRange(s.min, s.max)
    return click.STRING


def _judge_option(f: Field[Any], s: Setting) -> Callable:
    flag = declaration.flag(f, s)
    default = declaration.default(f.name)
    help_text = f"{s.backend}: {s.help}" if s.backend else s.help
    if f.name in declaration.required():  # not click-required: a judge file may give it
        help_text += "  [required, here or in --config]"
    if declaration.value_type(f.name)[0] is bool:
        return click.option(
            f"--{flag}/--no-{flag}", f.name, default=default, show_default=True, help=help_text
        )
    return click.option(
        f"--{flag}",
        f.name,
        type=_click_type(f.name, s),
        default=default,
        show_default=default is not None,
        metavar=s.metavar or None,
        help=help_text,
    )


def judge_options(command: Callable) -> Callable:
    """Decorate ``command`` with one option per operator setting of ``JudgeConfig``."""
    for f, s in reversed(declaration.operator_settings()):
        command = _judge_option(f, s)(command)
    return command


def judge_config(given: Mapping[str, Any], config_file: str | None) -> JudgeConfig:
    """The judge from a judge file (if any) and the settings given on the command line, which
    win over the file's."""
    values = declaration.load_judge_file(config_file) if config_file else {}
    values |= given
    flags = {f.name: declaration.flag(f, s) for f, s in declaration.operator_settings()}
    missing = [f"--{flags[n]}" for n in declaration.required() if not values.get(n)]
    if missing:
        raise click.UsageError(
            f"Missing option {' and '.join(missing)} (give it here or in a --config file)."
        )
    return JudgeConfig.from_mapping(values, config_file or "command line")


def _given(ctx: click.Context, params: Mapping[str, Any]) -> dict[str, Any]:
    # Only what was typed: a flag's default must not override the judge file's value.
    names = {f.name for f, _ in declaration.operator_settings()}
    return {
        k: v
        for k, v in params.items()
        if k in names and ctx.get_parameter_source(k) is not ParameterSource.DEFAULT
    }


@click.command(short_help="Score responses with an LLM judge (estimate, run, summary).")
@db_option
@click.option(
    "--config",
    "config_file",
    metavar="FILE",
    help="judge file (YAML, JSON or TOML) whose keys are JudgeConfig's field names: backend, "
    "model, prompt_version, rubric, base_url, temperature, max_tokens, use_reference, "
    "structured, name, timeout_s, device, batch_size (not api_key_env: a flag only); "
    "flags given here win",
)
@judge_options
@click.option("--dataset", required=True, help="the dataset whose responses are judged")
@click.option("--models", metavar="ID,ID,…", help="only these response models")
@click.option("--skills", metavar="ID,ID,…", help="only these skills")
@click.option("--limit", type=int, help="at most N responses")
@click.option("--concurrency", type=click.IntRange(1), default=8, show_default=True)
@click.option("--rpm", type=float, help="requests per minute limit")
@click.option("--tpm", type=float, help="tokens per minute limit")
@click.option("--retries", type=click.IntRange(0), default=4, show_default=True,
              help="retries per call")  # fmt: skip
@click.option("--prices", metavar="FILE", help="price table JSON (USD per 1M tokens)")
@click.option("--store-wait", type=click.FloatRange(0), default=60.0, show_default=True,
              metavar="SECONDS", help="how long the end of a run waits for a store another "
              "process holds before leaving the answers in the journal")  # fmt: skip
@click.option("--estimate-only", is_flag=True, help="print the estimate and stop")
@click.pass_context
def judge(ctx: click.Context, db: str | None, config_file: str | None, **params: Any) -> int:
    """Score a dataset's responses with an LLM judge: print the estimate (calls, cache hits,
    tokens, cost), then run with a progress bar and print a summary. Answers already paid for
    are reused, so running the same command again finishes an interrupted run. Exits with
    status 1 when the run failed or answers are not yet in the store (the next run stores them).

    \b
    A judge file holds the judge, for example:
      backend: openai
      model: gpt-4o-mini
      temperature: 0.0
      base_url: http://localhost:8000/v1
    """
    config = judge_config(_given(ctx, params), config_file)
    return _run(open_store(db), config, params)


# Exit status when the run failed or answers are not in the store yet (2 is bad input).
NOT_ALL_STORED = 1


def _run(store: Any, config: JudgeConfig, p: Mapping[str, Any]) -> int:
    from judges.plan import Selection, plan_run
    from judges.records import recover
    from judges.runner import RunOptions, run

    selection = Selection(
        p["dataset"], csv_list(p["models"]), csv_list(p["skills"]), limit=p["limit"]
    )
    # Answers an earlier run left in its journal go into the store before anything else, so
    # the estimate counts them as answered (and they are never paid for again).
    recovered = 0
    if store.exists():
        store.ensure()  # an older store is upgraded before its journals are replayed into it
        recovered = recover(store)
    plan = plan_run(store, config, selection, concurrency=p["concurrency"], prices=p["prices"])
    print(f"Judge {config.judge} on {p['dataset']}:")
    for line in plan.estimate.lines():
        print(f"  {line}")
    if p["estimate_only"]:
        return 0
    options = RunOptions(concurrency=p["concurrency"], rpm=p["rpm"], tpm=p["tpm"],
                         max_retries=p["retries"], prices=p["prices"],
                         store_wait_s=p["store_wait"])  # fmt: skip
    progress, close = _progress(len(plan.calls))
    try:
        summary = run(store, config, selection, options, progress=progress)
    finally:
        close()
    summary.recovered += recovered
    print("Summary:")
    for line in summary.lines():
        print(f"  {line}")
    if summary.incomplete:  # never a success while paid answers are missing from the store
        print(f"error: Judging incomplete: {'; '.join(summary.problems())}.", file=sys.stderr)
        return NOT_ALL_STORED
    return 0


def _progress(total: int) -> tuple[Callable[[Any], None], Callable[[], None]]:
    from tqdm import tqdm

    bar = tqdm(total=total, unit="item", file=sys.stderr, dynamic_ncols=True)

    def progress(s: Any) -> None:
        bar.n = s.done
        bar.set_postfix(ok=s.ok, failed=s.failed, errors=s.errors, calls=s.calls, refresh=False)
        bar.refresh()

    return progress, bar.close

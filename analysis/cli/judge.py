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
    if f.name == "base_url":  # repeatable: several servers make a pool (judges/endpoints.py)
        return click.option(
            f"--{flag}", f.name, multiple=True, metavar=s.metavar or None,
            help=f"{help_text}; repeat it for a pool of servers, each with its own "
            "--concurrency, --rpm and --tpm",
        )  # fmt: skip
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


def judge_config(
    given: Mapping[str, Any], config_file: str | None, pool: dict | None = None
) -> JudgeConfig:
    """The judge from a judge file (if any) and the settings given on the command line, which
    win over the file's. ``pool``: where a judge file's list of base URLs goes (else an error);
    the judge's ``base_url`` is then the first."""
    values = declaration.load_judge_file(config_file, pool) if config_file else {}
    if pool and "base_url" not in given:
        from judges.endpoints import endpoints_from

        values["base_url"] = endpoints_from(pool["base_url"], str(config_file))[0].url
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
    out = {
        k: v
        for k, v in params.items()
        if k in names and ctx.get_parameter_source(k) is not ParameterSource.DEFAULT
    }
    urls = out.get("base_url")
    if urls is not None and len(urls) == 1:  # the repeatable --base-url: one server as before
        out["base_url"] = urls[0]
    return out


@click.command(short_help="Score responses with an LLM judge (estimate, run, summary).")
@db_option
@click.option(
    "--config",
    "config_file",
    metavar="FILE",
    help="judge file (YAML, JSON or TOML) whose keys are JudgeConfig's field names: backend, "
    "model, prompt_version, rubric, base_url (a URL, or a list: a pool), temperature, "
    "max_tokens, use_reference, structured, name, timeout_s, device, batch_size (not "
    "api_key_env: a flag only); flags given here win",
)
@judge_options
@click.option("--dataset", help="the dataset whose responses are judged  [required]")
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
@click.option("--resume", is_flag=True,
              help="openai-batch: store the answers of the pending batches (of --dataset, "
              "if given) once the service has them; submits nothing; no judge options")  # fmt: skip
@click.option("--wait/--no-wait", default=True, show_default=True,
              help="openai-batch: wait until every answer is stored, or submit (or look once) "
              "and leave the batches running (--resume later)")  # fmt: skip
@click.option("--poll", "poll_s", type=click.FloatRange(0.01), default=30.0, show_default=True,
              metavar="SECONDS", help="openai-batch: how often to ask the service")  # fmt: skip
@click.option("--max-batch-requests", type=click.IntRange(1), default=50_000, show_default=True,
              help="openai-batch: requests per batch (the service's limit)")  # fmt: skip
@click.option("--max-batch-mb", type=click.FloatRange(0.001), default=200.0, show_default=True,
              help="openai-batch: megabytes per request file (the service's limit)")  # fmt: skip
@click.option(
    "--repeat-of",
    metavar="JUDGE",
    help="repeat run: ask this stored LLM judge again, with its stored configuration (only "
    "--temperature, above 0, and where it runs may be given), on a sample of the items it scored "
    "in --dataset; a new run whose scores are kept as history (the judge's current scores stay "
    "as they are), never "
    "answered from the cache. Its stability is on the Judges page",
)
@click.option("--sample", type=click.IntRange(1), metavar="N",
              help="with --repeat-of: how many of the items it scored (default: all)")  # fmt: skip
@click.option("--seed", type=int, default=0, show_default=True,
              help="with --repeat-of: the seed of the sample (a larger N extends it)")  # fmt: skip
@click.option(
    "--repeat", "repeat_number", type=click.IntRange(1), metavar="K",
    help="with --repeat-of: the repeat's number (default: finish the latest repeat if it did not "
    "complete, else start the next); the same number again reuses that repeat's answers",
)  # fmt: skip
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

    \b
    Several servers share the work (a pool): --base-url repeated, each with --concurrency,
    --rpm and --tpm, or in a judge file a list whose entries may set their own:
      base_url:
        - {url: http://gpu1:8000/v1, concurrency: 32}
        - http://gpu2:8000/v1

    \b
    A repeat run of a judge (for its stability between runs):
      finegrain judge --repeat-of "gpt-4o-mini (openai, flask-v1)" \\
          --dataset demo --sample 200 --seed 0 --temperature 0.7
    """
    if params["resume"]:
        return _resume(ctx, open_store(db), config_file, params)
    if not params["dataset"]:
        raise click.UsageError("Missing option --dataset (the dataset whose responses to judge).")
    if params["repeat_of"] is not None:
        return _repeat(ctx, open_store(db), config_file, params)
    typed = [f"--{REPEAT_FLAGS[k]}" for k in REPEAT_FLAGS if _typed(ctx, k)]
    if typed:
        raise click.UsageError(f"{' and '.join(typed)} go with --repeat-of JUDGE only.")
    given = _given(ctx, params)
    flag_urls, file_pool = _flag_urls(given), {}
    config = judge_config(given, config_file, file_pool)
    if flag_urls or "base_url" in given:  # the flags' server(s) win over the file's
        pool = _endpoints(flag_urls, "command line (--base-url)", params)
    else:
        pool = _endpoints(file_pool.get("base_url"), str(config_file), params)
    return _run(open_store(db), config, {**params, "endpoints": pool})


def _flag_urls(given: dict[str, Any]) -> list[str]:
    """Several ``--base-url``s (``given`` keeps the first as the judge's), else []."""
    urls = given.get("base_url")
    if not isinstance(urls, tuple):
        return []
    given["base_url"] = urls[0]
    return list(urls)


def _endpoints(urls: Any, source: str, p: Mapping[str, Any]) -> tuple:
    """A pool's endpoints (the run's --concurrency, --rpm and --tpm for each, unless a judge
    file's entry gives its own), else () for one server."""
    if not urls:
        return ()
    from judges.endpoints import endpoints_from

    return endpoints_from(
        urls, source, concurrency=p["concurrency"], rpm=p["rpm"], tpm=p["tpm"]
    )  # fmt: skip


def _slots(p: Mapping[str, Any]) -> int:
    """Calls in flight at once: the run's --concurrency, or a pool's added up."""
    pool = p.get("endpoints") or ()
    return sum(e.concurrency for e in pool) if pool else p["concurrency"]


# The options of a repeat run (the other run options still apply: --concurrency, --rpm, …).
REPEAT_FLAGS = {"sample": "sample", "seed": "seed", "repeat_number": "repeat"}
# What a repeat takes from the stored judge instead (its items are a sample of those it scored).
NOT_WITH_REPEAT = {"models": "models", "skills": "skills", "limit": "limit"}


def _typed(ctx: click.Context, name: str) -> bool:
    return ctx.get_parameter_source(name) is not ParameterSource.DEFAULT


def _repeat(ctx: click.Context, store: Any, config_file: str | None, p: Mapping[str, Any]) -> int:
    from judges.repeat import RUNTIME_SETTINGS, plan_repeat

    given = _given(ctx, p)
    p = {**p, "endpoints": _endpoints(_flag_urls(given), "command line (--base-url)", p)}
    flags = {f.name: declaration.flag(f, s) for f, s in declaration.operator_settings()}
    fixed = [f"--{flags[k]}" for k in given if k not in (*RUNTIME_SETTINGS, "temperature")]
    fixed += [f"--{v}" for k, v in NOT_WITH_REPEAT.items() if _typed(ctx, k)]
    fixed += ["--config"] if config_file else []
    if fixed:
        raise click.UsageError(
            f"--repeat-of reuses the judge's stored configuration and samples the items it "
            f"scored: {', '.join(fixed)} cannot be given with it (only --temperature, where it "
            "runs: --base-url, --timeout, --api-key-env, --device, --batch-size, and the run "
            "options)."
        )
    recovered = _recover(store)
    rp = plan_repeat(
        store, p["repeat_of"], p["dataset"], sample=p["sample"], seed=p["seed"],
        temperature=given.get("temperature"), repeat=p["repeat_number"],
        runtime={k: v for k, v in given.items() if k in RUNTIME_SETTINGS},
        concurrency=_slots(p), prices=p["prices"],
    )  # fmt: skip
    header = f"Repeat of {rp.config.judge} on {p['dataset']}:"
    return _go(store, rp.config, rp.selection, rp.plan, p, recovered, header, rp.lines())


# Exit status when the run failed or answers are not in the store yet (2 is bad input).
NOT_ALL_STORED = 1


def _run(store: Any, config: JudgeConfig, p: Mapping[str, Any]) -> int:
    from judges.plan import Selection, plan_run

    selection = Selection(
        p["dataset"], csv_list(p["models"]), csv_list(p["skills"]), limit=p["limit"]
    )
    recovered = _recover(store)
    plan = plan_run(store, config, selection, concurrency=_slots(p), prices=p["prices"])
    return _go(store, config, selection, plan, p, recovered, f"Judge {config.judge} on "
               f"{p['dataset']}:")  # fmt: skip


def _recover(store: Any) -> int:
    """Answers an earlier run left in its journal go into the store before anything else, so
    the estimate counts them as answered (and they are never paid for again)."""
    from judges.records import recover

    if not store.exists():
        return 0
    store.ensure()  # an older store is upgraded before its journals are replayed into it
    return recover(store)


def _go(
    store: Any, config: JudgeConfig, selection: Any, plan: Any, p: Mapping[str, Any],
    recovered: int, header: str, intro: tuple[str, ...] | list[str] = (),
) -> int:  # fmt: skip
    """Print the estimate, then (unless --estimate-only) run with a progress bar."""
    from judges.runner import run

    print(header)
    for line in [*intro, *plan.estimate.lines()]:
        print(f"  {line}")
    if p["estimate_only"]:
        return 0
    progress, close = _progress(len(plan.calls))
    try:
        summary = run(store, config, selection, _options(p), progress=progress)
    finally:
        close()
    summary.recovered += recovered
    return _report(summary)


def _options(p: Mapping[str, Any]) -> Any:
    from judges.runner import RunOptions

    pool = p.get("endpoints") or ()
    return RunOptions(concurrency=_slots(p), rpm=None if pool else p["rpm"],
                      tpm=None if pool else p["tpm"], max_retries=p["retries"],
                      prices=p["prices"], store_wait_s=p["store_wait"], endpoints=pool,
                      wait=p["wait"], poll_s=p["poll_s"],
                      batch_max_requests=p["max_batch_requests"],
                      batch_max_bytes=int(p["max_batch_mb"] * 2**20))  # fmt: skip


def _report(summary: Any, title: str = "Summary:") -> int:
    print(title)
    for line in summary.lines():
        print(f"  {line}")
    if summary.incomplete:  # never a success while paid answers are missing from the store
        print(f"error: Judging incomplete: {'; '.join(summary.problems())}.", file=sys.stderr)
        return NOT_ALL_STORED
    return 0


def _resume(ctx: click.Context, store: Any, config_file: str | None, p: Mapping[str, Any]) -> int:
    """``judge --resume``: tend the pending batch runs (judges/batch_run.py) with their stored
    configuration; only where to look (--dataset), how (--poll, --no-wait) may be given."""
    from judges.batch_run import resume

    allowed = {"dataset", "wait", "poll_s", "prices", "retries", "resume"}
    flags = {param.name: param.opts[0] for param in ctx.command.params}
    given = [flags[k] for k in p if k not in allowed and _typed(ctx, k)]
    given += ["--config"] if config_file else []
    if given:
        raise click.UsageError(
            f"--resume tends batches already submitted, each with its own judge, server and key "
            f"variable: {', '.join(sorted(given))} cannot be given with it (only --dataset, "
            "--wait/--no-wait, --poll, --prices, --retries)."
        )
    progress, close = _progress(0)
    try:
        summaries = resume(store, dataset=p["dataset"], options=_options(p), progress=progress)
    finally:
        close()
    if not summaries:
        where = f" of '{p['dataset']}'" if p["dataset"] else ""
        print(f"No pending batches{where}: every batch's answers are stored.")
        return 0
    codes = [_report(s, f"Batch run {s.run_id} ({s.judge}):") for s in summaries]
    return max(codes)


def _progress(total: int) -> tuple[Callable[[Any], None], Callable[[], None]]:
    from tqdm import tqdm

    bar = tqdm(total=total, unit="item", file=sys.stderr, dynamic_ncols=True)

    def progress(s: Any) -> None:
        bar.total = s.items  # --resume learns each run's size from the run
        bar.n = s.done + s.at_service  # a batch's answers count once the service has them
        out = {"endpoint": s.endpoints[-1]} if s.endpoints else {}  # a pool's latest change
        out |= {"batch": s.batches[-1].split(": ", 1)[-1][:40]} if s.batches else {}
        bar.set_postfix(ok=s.ok, failed=s.failed, errors=s.errors, calls=s.calls, **out,
                        refresh=False)  # fmt: skip
        bar.refresh()

    return progress, bar.close

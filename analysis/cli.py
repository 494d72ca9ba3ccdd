"""``python -m analysis <command>``: the same numbers as the pages, scriptable.

Every command takes ``--db PATH`` and exits non-zero with a one-paragraph message on bad input
(never a stack trace).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

from analysis.errors import FinegrainError, InputError
from analysis.store import Store, default_db_path


def _progress_bar() -> tuple[Callable[[int, int, str], None], Callable[[], None]]:
    from tqdm import tqdm

    bar = tqdm(total=1, unit="step", file=sys.stderr, dynamic_ncols=True, leave=True)

    def update(done: int, total: int, label: str) -> None:
        bar.total = total
        bar.n = done
        bar.set_description(label[:60])
        bar.refresh()

    return update, bar.close


def _print_report(report, header: str) -> None:
    print(header)
    for line in report.lines():
        print(f"  {line}")


def cmd_demo(args: argparse.Namespace) -> None:
    from analysis.demo import build_and_write_demo

    store = Store(args.db)
    report = build_and_write_demo(store, seed=args.seed, force=args.force)
    _print_report(report, f"Simulated demo (seed {args.seed}) written to {store.path}")


def cmd_import_flask(args: argparse.Namespace) -> None:
    from analysis.flask_source import import_flask

    store = Store(args.db)
    update, close = _progress_bar()
    try:
        report = import_flask(store, args.source, progress=update)
    finally:
        close()
    _print_report(report, f"FLASK imported from {args.source} into {store.path}")


def _scale(text: str) -> tuple[float, float]:
    try:
        lo, hi = (float(x) for x in text.replace("..", "-").split("-", 1))
    except ValueError as e:
        raise argparse.ArgumentTypeError(f"expected MIN-MAX such as 1-10, got {text!r}") from e
    if lo >= hi:
        raise argparse.ArgumentTypeError(f"the scale minimum must be below the maximum: {text}")
    return lo, hi


def cmd_import_scores(args: argparse.Namespace) -> None:
    from analysis.score_files import import_scores

    store = Store(args.db)
    report = import_scores(
        store,
        args.file,
        judge=args.judge,
        kind=args.kind,
        dataset=args.dataset,
        scale=args.scale,
        lenient=args.lenient,
    )
    _print_report(report, f"Scores imported from {args.file} into {store.path}")


def cmd_agreement(args: argparse.Namespace) -> None:
    import json

    from analysis import agreement_report as report
    from analysis.agreement import AgreementQuery, agreement, rater_agreement
    from analysis.filters import Filters

    store = Store(args.db)
    filters = Filters(args.dataset)
    if args.raters:
        frame = rater_agreement(store, filters, args.raters, args.skill, args.n_boot, args.seed)
        if args.json:
            print(json.dumps(report.raters_to_dict(frame, args.dataset), indent=2))
        else:
            print(f"Krippendorff's alpha among {args.raters} on {args.dataset} (95% CI, n ratings)")
            print(report.text_table(frame))
        return
    if not (args.a and args.b):
        raise InputError("command line", None, "--a/--b", "give --a and --b, or --raters")
    q = AgreementQuery(
        filters, args.a, args.b, args.level, args.skill, args.by, args.n_boot, args.seed
    )
    result = agreement(store, q)
    if args.json:
        print(json.dumps(report.to_dict(result), indent=2))
        return
    print(
        f"{result.a.spec} vs {result.b.spec} on {args.dataset}; correlations {args.level}; 95% CI"
    )
    print(report.text_table(result.stats))
    if not result.slices.empty:
        print(f"\nBy {args.by} (pooled):")
        print(
            report.text_table(
                result.slices.assign(
                    skill=result.slices["slice"].astype(str) + " · " + result.slices["skill"]
                )
            )
        )
    if not result.ceiling.empty:
        print("\nHuman–human ceiling (Krippendorff's alpha among human raters):")
        print(report.text_table(result.ceiling))
    for note in result.notes:
        print(f"note: {note}")


def _csv(text: str | None) -> tuple[str, ...]:
    return tuple(x.strip() for x in (text or "").split(",") if x.strip())


def cmd_judge(args: argparse.Namespace) -> None:
    # judges depends on analysis, never the reverse at import time: imported when used.
    from judges.config import JudgeConfig
    from judges.plan import Selection, plan_run
    from judges.runner import RunOptions, run

    store = Store(args.db)
    config = JudgeConfig(
        backend=args.backend,
        model=args.model,
        prompt_version=args.prompt,
        rubric=f"file:{args.rubric}" if args.rubric else "store",
        base_url=args.base_url,
        temperature=args.temperature,
        max_tokens=args.max_tokens,
        use_reference=not args.no_reference,
        structured=args.structured,
        name=args.name,
        timeout_s=args.timeout,
        device=args.device,
        batch_size=args.batch_size,
    )
    selection = Selection(args.dataset, _csv(args.models), _csv(args.skills), limit=args.limit)
    options = RunOptions(
        concurrency=args.concurrency, rpm=args.rpm, tpm=args.tpm, max_retries=args.retries,
        prices=args.prices,
    )  # fmt: skip
    plan = plan_run(store, config, selection, concurrency=args.concurrency, prices=args.prices)
    print(f"Judge {config.judge} on {args.dataset}:")
    for line in plan.estimate.lines():
        print(f"  {line}")
    if args.estimate_only:
        return
    from tqdm import tqdm

    bar = tqdm(total=len(plan.calls), unit="item", file=sys.stderr, dynamic_ncols=True)

    def progress(s) -> None:
        bar.n = s.done
        bar.set_postfix(ok=s.ok, failed=s.failed, errors=s.errors, calls=s.calls, refresh=False)
        bar.refresh()

    try:
        summary = run(store, config, selection, options, progress=progress)
    finally:
        bar.close()
    print("Summary:")
    for line in summary.lines():
        print(f"  {line}")


def build_parser() -> argparse.ArgumentParser:
    from analysis.flask_source import DEFAULT_URL

    p = argparse.ArgumentParser(prog="python -m analysis", description=__doc__.split("\n")[0])
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--db",
        default=str(default_db_path()),
        help="DuckDB file (default: $FINEGRAIN_DB or data/finegrain.duckdb)",
    )
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    d = sub.add_parser("demo", parents=[common], help="(re)build the simulated demo dataset")
    d.add_argument("--seed", type=int, default=20231)
    d.add_argument(
        "--force", action="store_true", help="also delete annotations and judging runs on it"
    )
    d.set_defaults(func=cmd_demo)

    f = sub.add_parser(
        "import-flask", parents=[common], help="import FLASK from a folder or a base URL"
    )
    f.add_argument(
        "source",
        nargs="?",
        default=DEFAULT_URL,
        help=f"folder laid out like the repository, or base URL (default {DEFAULT_URL})",
    )
    f.set_defaults(func=cmd_import_flask)

    s = sub.add_parser(
        "import-scores", parents=[common], help="import long-format scores (CSV, JSONL or Parquet)"
    )
    s.add_argument("file")
    s.add_argument("--judge", help="scorer name for every row (else a 'judge' column)")
    s.add_argument("--kind", choices=["human", "llm"], help="kind of scorer (default llm)")
    s.add_argument("--dataset", help="dataset name (else a 'dataset' column, else the file name)")
    s.add_argument(
        "--scale", type=_scale, metavar="MIN-MAX", help="scale of custom criteria, e.g. 1-10"
    )
    s.add_argument(
        "--lenient",
        action="store_true",
        help="skip bad rows, listing each one, instead of stopping",
    )
    s.set_defaults(func=cmd_import_scores)

    a = sub.add_parser(
        "agreement",
        parents=[common],
        help="agreement between two scorers, or among raters (Krippendorff's alpha)",
    )
    a.add_argument("--dataset", required=True)
    a.add_argument("--a", help="a scorer's name, or kind:human / kind:llm (the kind's mean)")
    a.add_argument("--b", help="the other scorer or group")
    a.add_argument("--raters", help="kind:human, kind:llm or NAME,NAME,... (instead of --a/--b)")
    a.add_argument("--skill", help="one skill or criterion (default: every skill and overall)")
    a.add_argument("--level", choices=["pooled", "instance", "system"], default="pooled")
    a.add_argument("--by", choices=["domain", "difficulty", "model"], help="slice table")
    a.add_argument("--json", action="store_true", help="print machine-readable JSON")
    a.add_argument("--n-boot", type=int, default=1000, help="bootstrap resamples (default 1000)")
    a.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    a.set_defaults(func=cmd_agreement)

    j = sub.add_parser("judge", parents=[common], help="score responses with an LLM judge")
    j.add_argument("--backend", required=True, choices=["openai", "transformers"])
    j.add_argument("--model", required=True, help="API model name, or a local model folder")
    j.add_argument("--base-url", help="OpenAI-compatible server (default $OPENAI_BASE_URL)")
    j.add_argument("--dataset", required=True)
    j.add_argument("--models", help="only these response models: ID,ID,…")
    j.add_argument("--skills", help="only these skills: ID,ID,…")
    j.add_argument("--limit", type=int, help="at most N responses")
    j.add_argument("--concurrency", type=int, default=8)
    j.add_argument("--rpm", type=float, help="requests per minute limit")
    j.add_argument("--tpm", type=float, help="tokens per minute limit")
    j.add_argument("--retries", type=int, default=4, help="retries per call (default 4)")
    j.add_argument("--timeout", type=float, default=60.0, help="seconds per call")
    j.add_argument("--temperature", type=float, default=0.0)
    j.add_argument("--max-tokens", type=int, default=1024)
    j.add_argument("--prompt", default="flask-v1", help="prompt version, or file:PATH[#id]")
    j.add_argument("--rubric", help="rubric file (FLASK's skillset_description.json)")
    j.add_argument("--no-reference", action="store_true", help="do not show reference answers")
    j.add_argument("--structured", action="store_true", help="ask for a JSON object response")
    j.add_argument("--name", help="the judge's name in the store (default: derived)")
    j.add_argument("--device", help="transformers: cpu or cuda (default: cuda if available)")
    j.add_argument("--batch-size", type=int, default=8, help="transformers: prompts per batch")
    j.add_argument("--prices", help="price table JSON (USD per 1M tokens)")
    j.add_argument("--estimate-only", action="store_true", help="print the estimate and stop")
    j.set_defaults(func=cmd_judge)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        args.func(args)
    except InputError as e:
        print(f"error: {e.title}: {e.message}\nNothing was written to the store.", file=sys.stderr)
        return 2
    except FinegrainError as e:
        print(f"error: {e.title}: {e.message}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(
            "interrupted: an unfinished import wrote nothing; a judging run keeps every answer "
            "it received (run the same command again to finish it).",
            file=sys.stderr,
        )
        return 130
    return 0

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
    report = build_and_write_demo(store, seed=args.seed)
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
        print("interrupted: nothing was written by the unfinished step.", file=sys.stderr)
        return 130
    return 0

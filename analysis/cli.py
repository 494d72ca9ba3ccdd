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

"""``finegrain COMMAND`` (or ``python -m analysis COMMAND``): the dashboard's numbers, scriptable.

Errors are one paragraph on stderr and exit status 2, never a stack trace. Help must stay fast:
nothing here or in the command modules imports pandas, duckdb, openai or streamlit at import
time (tests/cli/test_help.py checks it); commands import what they need when they run.
"""

from __future__ import annotations

import sys

import click

from analysis.cli.batches import batches
from analysis.cli.common import version
from analysis.cli.data import agreement, demo, import_flask, import_scores
from analysis.cli.export import export
from analysis.cli.judge import judge
from analysis.cli.report import report
from analysis.cli.serve import serve
from analysis.cli.verbosity import verbosity
from analysis.core.errors import FinegrainError, InputError

INTERRUPTED = (
    "interrupted: an unfinished import wrote nothing; a judging run keeps every answer "
    "it received (run the same command again to finish it)."
)


def _print_version(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    # A callback, not click.version_option(version=...): the version is looked up only when
    # asked for, not on every start.
    if value and not ctx.resilient_parsing:
        click.echo(f"finegrain {version()}")
        ctx.exit()


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.option(
    "--version",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=_print_version,
    help="Print the version and exit.",
)
def cli() -> None:
    """Finegrain: skill-level evaluation of language models (FLASK). The same numbers as the
    dashboard's pages, scriptable. Every command takes --db PATH (default: $FINEGRAIN_DB, else
    data/finegrain.duckdb in a checkout, ~/.local/share/finegrain when installed); bad input
    exits with status 2 and a one-paragraph message, leaving the store unchanged."""


for _command in (demo, import_flask, import_scores, agreement, judge, verbosity, export, serve):
    cli.add_command(_command)
cli.add_command(report)
cli.add_command(batches)


def main(argv: list[str] | None = None) -> int:
    """Run the command line on ``argv`` (default: sys.argv) and return the exit status."""
    try:
        result = cli.main(args=argv, standalone_mode=False)
    except click.ClickException as e:  # usage errors: exit status 2, as argparse's were
        e.show()
        return e.exit_code
    except InputError as e:
        print(f"error: {e.title}: {e.message}\nNothing was written to the store.", file=sys.stderr)
        return 2
    except FinegrainError as e:
        print(f"error: {e.title}: {e.message}", file=sys.stderr)
        return 2
    except (click.Abort, KeyboardInterrupt):  # click turns Ctrl-C into Abort
        print(INTERRUPTED, file=sys.stderr)
        return 130
    return result if isinstance(result, int) else 0

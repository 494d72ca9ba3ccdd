"""Benchmark: how long ``finegrain --help`` and ``finegrain judge --help`` take, against a bare
interpreter and against importing pandas alone, and which heavy modules each one imports.

Goal: ``--help`` ≤ 0.3 s wall, importing none of pandas, numpy, scipy, duckdb, openai,
streamlit or the judges runner (tests/cli/test_help.py checks the imports, not the time).

    python bench/cli_help.py [--repeat 7] [--root DIR]

``--root`` runs the commands in another checkout (e.g. /work/before) with this interpreter.

Each figure is the median wall time of REPEAT fresh processes (subprocess, output discarded).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
HEAVY = ("pandas", "numpy", "scipy", "duckdb", "openai", "streamlit", "plotly", "pyarrow",
         "judges.runner", "tqdm", "yaml", "torch", "transformers")  # fmt: skip
CASES = {
    "python -m analysis --help": ["-m", "analysis", "--help"],
    "python -m analysis judge --help": ["-m", "analysis", "judge", "--help"],
    "python -m analysis import-scores --help": ["-m", "analysis", "import-scores", "--help"],
    "python -c pass": ["-c", "pass"],
    'python -c "import pandas"': ["-c", "import pandas"],
}


def wall(args: list[str], repeat: int, root: Path = REPO) -> float:
    """Median seconds of ``python ARGS`` (in ``root``) over ``repeat`` fresh processes."""
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        subprocess.run([sys.executable, *args], cwd=root, stdout=subprocess.DEVNULL, check=True)
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def heavy_imports(argv: list[str], root: Path = REPO) -> tuple[list[str], int]:
    """The heavy modules (and how many modules in all) left imported by ``main(argv)``."""
    code = (
        "import contextlib, io, json, sys\n"
        "from analysis.cli.main import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    main({argv!r})\n"
        f"print(json.dumps([[m for m in {HEAVY!r} if m in sys.modules], len(sys.modules)]))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True,
                         text=True, check=True)  # fmt: skip
    heavy, count = json.loads(out.stdout)
    return heavy, count


def slowest_imports(args: list[str], n: int = 8, root: Path = REPO) -> list[tuple[str, float]]:
    """The ``n`` modules with the largest cumulative import time (``python -X importtime``),
    each indented by how deep it was imported."""
    err = subprocess.run([sys.executable, "-X", "importtime", *args], cwd=root,
                         capture_output=True, text=True, check=True).stderr  # fmt: skip
    rows = []
    for line in err.splitlines():
        parts = line.removeprefix("import time:").split("|")
        if len(parts) == 3 and parts[1].strip().isdigit():
            rows.append((parts[2].rstrip()[1:], int(parts[1]) / 1e6))  # keep the indent
    return sorted(rows, key=lambda r: -r[1])[:n]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--repeat", type=int, default=7)
    p.add_argument("--root", default=str(REPO), help="checkout to run the commands in")
    opts = p.parse_args()
    root, repeat = Path(opts.root).resolve(), opts.repeat
    print(f"root {root}")
    print(f"median wall time of {repeat} runs (python {sys.version.split()[0]})\n")
    print(f"{'command':<42} {'seconds':>8}")
    for label, args in CASES.items():
        print(f"{label:<42} {wall(args, repeat, root):>8.3f}")
    print()
    for argv in (["--help"], ["judge", "--help"]):
        heavy, count = heavy_imports(argv, root)
        print(f"main({argv}): {count} modules; heavy ones: {', '.join(heavy) or 'none'}")
    print("\nslowest imports of python -m analysis --help (-X importtime, cumulative):")
    for name, seconds in slowest_imports(["-m", "analysis", "--help"], root=root):
        print(f"  {name:<34} {seconds:.3f} s")


if __name__ == "__main__":
    main()

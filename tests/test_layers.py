"""Layering rules: the import-linter contracts in pyproject.toml hold (and fail when broken),
analysis/ and judges/ never import streamlit, pages hold no SQL, modules stay small."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _modules(package: str) -> list[str]:
    return [
        ".".join(p.relative_to(REPO).with_suffix("").parts).removesuffix(".__init__")
        for p in sorted((REPO / package).rglob("*.py"))
        if p.name != "__main__.py"
    ]


def test_analysis_and_judges_never_import_streamlit():
    mods = _modules("analysis") + _modules("judges")
    assert "analysis.core.store" in mods and "judges" in mods
    code = (
        "import importlib, sys\n"
        f"for m in {mods!r}: importlib.import_module(m)\n"
        "bad = sorted(m for m in sys.modules if m == 'streamlit' or m.startswith('streamlit.'))\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True,
                         check=True)  # fmt: skip
    assert out.stdout.strip() == "", f"streamlit imported via: {out.stdout}"


def test_no_streamlit_import_statement_in_lower_layers():
    for package in ("analysis", "judges"):
        for path in (REPO / package).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text())):
                names = []
                if isinstance(node, ast.Import):
                    names = [a.name for a in node.names]
                elif isinstance(node, ast.ImportFrom) and node.module:
                    names = [node.module]
                assert not any(n.split(".")[0] == "streamlit" for n in names), path


def test_pages_and_app_hold_no_sql():
    for path in [REPO / "app.py", *(REPO / "pages").glob("*.py")]:
        text = path.read_text()
        for keyword in ("SELECT ", "INSERT ", "UPDATE ", "DELETE FROM", "duckdb"):
            assert keyword not in text, f"{path.name} contains {keyword!r}"


def test_app_is_only_a_router_with_explicit_pages():
    text = (REPO / "app.py").read_text()
    assert "st.navigation(" in text
    pages = [line for line in text.splitlines() if 'st.Page("pages/' in line]
    assert pages, "app.py must list its pages explicitly"
    for line in pages:
        rel = line.split('st.Page("', 1)[1].split('"', 1)[0]
        assert (REPO / rel).is_file(), rel


def _lint_imports(root: Path, *contracts: str) -> subprocess.CompletedProcess:
    """import-linter on the project at ``root`` (its pyproject.toml, its packages)."""
    exe = Path(sys.executable).with_name("lint-imports")
    args = [str(exe), "--no-cache", "--no-logo", *(a for c in contracts for a in ("--contract", c))]
    env = {"PATH": str(exe.parent), "PYTHONPATH": str(root)}
    return subprocess.run(args, cwd=root, env=env, capture_output=True, text=True, timeout=120)


def test_import_linter_contracts_hold():
    out = _lint_imports(REPO)
    assert out.returncode == 0, out.stdout + out.stderr
    for contract in ("Layers point one way", "never import streamlit", "No import cycles",
                     "stats is pure", "charts draw results", "pages hold layout only"):  # fmt: skip
        assert any(contract in line and "KEPT" in line for line in out.stdout.splitlines()), (
            f"{contract!r} not checked:\n{out.stdout}"
        )


def _copy_project(dst: Path) -> Path:
    for pkg in ("analysis", "judges", "pages"):
        shutil.copytree(REPO / pkg, dst / pkg, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO / "pyproject.toml", dst / "pyproject.toml")
    return dst


def _append(path: Path, line: str) -> None:
    path.write_text(path.read_text() + f"\n{line}\n")


def test_an_upward_import_breaks_the_layers_contract(tmp_path):
    root = _copy_project(tmp_path)
    _append(root / "analysis/core/taxonomy.py", "import analysis.views.overview  # noqa")
    out = _lint_imports(root, "layers")
    assert out.returncode == 1, out.stdout
    assert "BROKEN" in out.stdout
    assert "analysis.core.taxonomy -> analysis.views.overview" in out.stdout


def test_judges_importing_a_view_breaks_the_layers_contract(tmp_path):
    root = _copy_project(tmp_path)
    _append(root / "judges/plan.py", "from analysis.views import samples  # noqa")
    out = _lint_imports(root, "layers")
    assert out.returncode == 1 and "judges.plan -> analysis.views.samples" in out.stdout


def test_a_cycle_between_siblings_breaks_the_acyclic_contract(tmp_path):
    # store ↔ writer was such a cycle (hidden behind a function-level import) before the split.
    root = _copy_project(tmp_path)
    _append(root / "analysis/core/store.py", "def _seed():\n    from analysis.core import writer")
    out = _lint_imports(root, "no-cycles")
    assert out.returncode == 1 and "BROKEN" in out.stdout, out.stdout


def test_streamlit_in_stats_breaks_two_contracts(tmp_path):
    root = _copy_project(tmp_path)
    _append(root / "analysis/stats/means.py", "import streamlit  # noqa")
    out = _lint_imports(root, "no-streamlit", "pure-stats")
    assert out.returncode == 1 and "analysis.stats.means -> streamlit" in out.stdout


def test_modules_stay_small():
    """~400 lines at most per module of the package (tests and fixtures aside)."""
    sizes = {
        str(p.relative_to(REPO)): len(p.read_text().splitlines())
        for pkg in ("analysis", "judges", "pages")
        for p in (REPO / pkg).rglob("*.py")
    }
    sizes["app.py"] = len((REPO / "app.py").read_text().splitlines())
    big = {k: v for k, v in sizes.items() if v > 420}
    assert not big, f"split these modules by role: {big}"


def test_requirements_pins_match_the_package_metadata():
    import tomllib

    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]

    def pins(name: str) -> set[str]:
        lines = (REPO / name).read_text().splitlines()
        return {x.split("#")[0].strip() for x in lines if x.strip() and x[0] not in "#-"}

    assert pins("requirements.txt") == set(project["dependencies"])
    extras = project["optional-dependencies"]
    assert pins("requirements-local-judge.txt") == set(extras["local-judge"])
    assert pins("requirements-dev.txt") == set(extras["dev"])

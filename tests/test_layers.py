"""Layering rules: analysis/ and judges/ never import streamlit; pages hold no SQL."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def _modules(package: str) -> list[str]:
    return [
        ".".join(p.relative_to(REPO).with_suffix("").parts).removesuffix(".__init__")
        for p in sorted((REPO / package).rglob("*.py"))
        if p.name != "__main__.py"
    ]


def test_analysis_and_judges_never_import_streamlit():
    mods = _modules("analysis") + _modules("judges")
    assert "analysis.store" in mods and "judges" in mods
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

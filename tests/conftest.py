"""Shared fixtures: real FLASK files from ../shared/flask, real DuckDB files in tmp dirs."""

from __future__ import annotations

import importlib
import os
import shutil
from pathlib import Path
from typing import NoReturn

import pytest

os.environ["HF_HUB_OFFLINE"] = "1"  # no hub downloads in tests, ever

REPO = Path(__file__).resolve().parents[1]
FLASK_DIR = Path(os.environ.get("FINEGRAIN_FLASK_DIR", REPO.parent / "shared" / "flask"))


FLASK_FIX = "put a checkout of the FLASK repository there, or set FINEGRAIN_FLASK_DIR"
# published/ is not in FLASK's repository: the project's shared data folder carries it.
PUBLISHED_FIX = "copy the shared folder's flask/published there, or set FINEGRAIN_FLASK_DIR"


def missing(what: str, fix: str | None = None) -> NoReturn:
    """An optional thing a test needs is absent: skip locally, with the reason and the fix, but
    fail under CI=true, where a skip would hide a broken CI setup. (CI is read at each call, so
    a test can check both ways.)"""
    reason = what if fix is None else f"{what}: {fix}"
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"{reason} (CI=true: CI must provide it)", pytrace=False)
    pytest.skip(reason)


def require(path: Path, what: str, fix: str | None = None) -> None:
    """Skip (locally) or fail (under CI=true) when a test resource is absent."""
    if not path.exists():
        missing(f"{what} not found at {path}", fix)


def require_modules(*names: str, fix: str) -> None:
    """Skip (locally) or fail (under CI=true) unless every named module imports."""
    absent = []
    for name in names:
        try:
            importlib.import_module(name)
        except ImportError:
            absent.append(name)
    if absent:
        missing(f"{' and '.join(absent)} not installed", fix)


@pytest.fixture(scope="session")
def flask_dir() -> Path:
    require(
        FLASK_DIR / "evaluation_set" / "flask_evaluation.jsonl", "the FLASK data", FLASK_FIX
    )  # fmt: skip
    return FLASK_DIR


@pytest.fixture(scope="session")
def flask_db(flask_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store with the real FLASK folder imported once per session (copy it to modify)."""
    from analysis.core.store import Store
    from analysis.ingest.flask_source import import_flask

    path = tmp_path_factory.mktemp("flask") / "flask.duckdb"
    import_flask(Store(path), str(flask_dir))
    return path


@pytest.fixture
def flask_store(flask_db: Path, tmp_path: Path):
    """A private copy of the FLASK store for a test that writes."""
    from analysis.core.store import Store

    path = tmp_path / "store.duckdb"
    shutil.copy(flask_db, path)
    return Store(path)


@pytest.fixture
def empty_store(tmp_path: Path):
    from analysis.core.store import Store

    s = Store(tmp_path / "empty.duckdb")
    s.ensure()
    return s


@pytest.fixture(scope="session")
def demo_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The simulated demo with its judge panel, as the app and ``finegrain demo`` build it,
    once per session (copy it to modify: see ``app_db``)."""
    from analysis.core.store import Store
    from analysis.ingest.demo_panel import build_and_write_demo_with_panel

    path = tmp_path_factory.mktemp("demo") / "demo.duckdb"
    build_and_write_demo_with_panel(Store(path))
    return path


@pytest.fixture(scope="session")
def base_demo_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The base demo without its simulated judge panel (analysis/ingest/demo_panel.py): what
    the golden files of tests/data/golden were written from, and must stay."""
    from analysis.core.store import Store
    from analysis.ingest.demo import build_and_write_demo

    path = tmp_path_factory.mktemp("base_demo") / "demo.duckdb"
    build_and_write_demo(Store(path))
    return path


@pytest.fixture
def app_db(demo_db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """A private copy of the demo that the app opens (FINEGRAIN_DB), with caches cleared."""
    import streamlit as st

    path = tmp_path / "app.duckdb"
    shutil.copy(demo_db, path)
    monkeypatch.setenv("FINEGRAIN_DB", str(path))
    st.cache_data.clear()
    yield path
    st.cache_data.clear()

"""Shared fixtures: real FLASK files from ../shared/flask, real DuckDB files in tmp dirs."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

os.environ["HF_HUB_OFFLINE"] = "1"  # no hub downloads in tests, ever

REPO = Path(__file__).resolve().parent.parent
FLASK_DIR = Path(os.environ.get("FINEGRAIN_FLASK_DIR", REPO.parent / "shared" / "flask"))
IN_CI = os.environ.get("CI", "").lower() == "true"


def require(path: Path, what: str) -> None:
    """Skip (locally) or fail (under CI=true) when a test resource is absent."""
    if path.exists():
        return
    message = f"{what} not found at {path}"
    if IN_CI:
        pytest.fail(f"{message}; CI must provide it")
    pytest.skip(message)


@pytest.fixture(scope="session")
def flask_dir() -> Path:
    require(FLASK_DIR / "evaluation_set" / "flask_evaluation.jsonl", "the FLASK data")
    return FLASK_DIR


@pytest.fixture(scope="session")
def flask_db(flask_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store with the real FLASK folder imported once per session (copy it to modify)."""
    from analysis.flask_source import import_flask
    from analysis.store import Store

    path = tmp_path_factory.mktemp("flask") / "flask.duckdb"
    import_flask(Store(path), str(flask_dir))
    return path


@pytest.fixture
def flask_store(flask_db: Path, tmp_path: Path):
    """A private copy of the FLASK store for a test that writes."""
    from analysis.store import Store

    path = tmp_path / "store.duckdb"
    shutil.copy(flask_db, path)
    return Store(path)


@pytest.fixture
def empty_store(tmp_path: Path):
    from analysis.store import Store

    s = Store(tmp_path / "empty.duckdb")
    s.ensure()
    return s


@pytest.fixture(scope="session")
def demo_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The simulated demo, built once per session (copy it to modify: see ``app_db``)."""
    from analysis.demo import build_and_write_demo
    from analysis.store import Store

    path = tmp_path_factory.mktemp("demo") / "demo.duckdb"
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

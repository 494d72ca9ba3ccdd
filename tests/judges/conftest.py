"""Fixtures the judging tests share."""

from __future__ import annotations

import pytest

from analysis.core.store import Store
from tests.store_fixtures import demo_copy


@pytest.fixture
def store(demo_db, tmp_path) -> Store:
    return demo_copy(demo_db, tmp_path)

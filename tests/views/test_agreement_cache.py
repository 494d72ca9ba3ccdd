"""The agreement preparation cache: loading and pairing are shared by every seed, number of
resamples, level and slice of the same query; the resamples are not; and nothing a cached call
left behind changes a later result (each equals the one computed in an empty cache)."""

from __future__ import annotations

import shutil

import numpy as np
import pytest
from pandas.testing import assert_frame_equal

from analysis.core.filters import Filters
from analysis.core.store import Store
from analysis.views import agreement_data, memo
from analysis.views.agreement import AgreementQuery, agreement

DEMO_A = "gpt-4 (simulated)"
SECTIONS = ("stats", "slices", "ceiling", "ranks", "pairs", "counts")


def _clear() -> None:
    agreement_data._cache.clear()
    memo._RESAMPLES.clear()


@pytest.fixture
def store(demo_db):
    _clear()
    yield Store(demo_db)
    _clear()


def _query(**kw) -> AgreementQuery:
    return AgreementQuery(Filters("demo"), DEMO_A, "kind:human", **{"n_boot": 60, **kw})


def test_seeds_and_levels_share_the_aligned_items_but_not_the_resamples(store):
    first = agreement_data.aligned(store, _query(seed=1))
    again = agreement_data.aligned(store, _query(seed=2, n_boot=40, level="system", by="model"))
    assert again.pairs is first.pairs and again.rows is first.rows
    assert first.weights.shape == (60, len(first.instances))
    assert again.weights.shape == (40, len(first.instances))
    # Each row of the resamples draws every instance once on average: n draws in all.
    assert (first.weights.sum(1) == len(first.instances)).all()
    assert not np.array_equal(first.weights, again.weights[:40])
    # Shared by every caller: nobody may change them in place.
    with pytest.raises(ValueError):
        first.weights[0, 0] = 99


def test_another_filter_or_scorer_is_prepared_apart(store):
    base = agreement_data.aligned(store, _query())
    other = agreement_data.aligned(
        store, AgreementQuery(Filters("demo"), "annotator_1", "kind:human", n_boot=60)
    )
    assert other.pairs is not base.pairs
    assert list(other.a.judges) == ["annotator_1"]


@pytest.mark.parametrize(
    ("level", "by", "skill"),
    [("pooled", "domain", None), ("system", "model", None), ("instance", None, "comprehension")],
)
def test_a_result_after_other_cached_calls_equals_the_one_from_an_empty_cache(
    store, level, by, skill
):
    for seed in (0, 5):  # fill the cache: the same items, other seeds and levels
        agreement(store, _query(seed=seed, level="pooled", by="domain", skill=skill))
    q = _query(seed=7, level=level, by=by, skill=skill)
    warm = agreement(store, q)
    _clear()
    cold = agreement(store, q)
    for name in SECTIONS:
        assert_frame_equal(getattr(warm, name), getattr(cold, name), check_exact=True)
    assert warm.notes == cold.notes and warm.humans == cold.humans


def test_a_write_to_the_store_is_seen(demo_db, tmp_path):
    """The cache is keyed by the store's version: after a write, the items are loaded again."""
    shutil.copy(demo_db, tmp_path / "demo.duckdb")
    store = Store(tmp_path / "demo.duckdb")
    before = agreement_data.aligned(store, _query())
    with store.write() as con:
        con.execute(
            "DELETE FROM scores WHERE dataset = 'demo' AND judge = ? AND instance_id = ?",
            [DEMO_A, before.pairs["instance_id"].iloc[0]],
        )
    after = agreement_data.aligned(store, _query())
    assert after.pairs is not before.pairs
    assert len(after.pairs) < len(before.pairs)

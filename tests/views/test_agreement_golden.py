"""No agreement statistic changed by a single bit: every value of ``agreement()`` and
``rater_agreement()`` on the demo and two small stores (half points; real values, the raw
path) equals the value stored before the performance work (tests/data/golden/agreement.json,
written by bench/agreement_golden.py from the code before the change). Compared with ``==`` on
``float.hex``; the independent-implementation tests check the values themselves. (The rater
cases' CI bounds were rewritten once when their resamples stopped depending on row order:
bench/agreement_golden.py says why.)"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "data" / "golden" / "agreement.json"


def _generator():
    spec = importlib.util.spec_from_file_location(
        "agreement_golden", ROOT / "bench" / "agreement_golden.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def current(base_demo_db, tmp_path_factory):
    gen = _generator()
    # The base demo (no judge panel): the golden values were written from it.
    stores = gen.build_stores(tmp_path_factory.mktemp("golden"), base_demo_db)
    return gen.snapshot(stores)


@pytest.fixture(scope="module")
def golden():
    return json.loads(GOLDEN.read_text())


def _diff(name: str, want: dict, got: dict) -> list[str]:
    """Where two snapshots differ, field by field (frames: columns, then rows or hash)."""
    out = []
    for key in sorted(set(want) | set(got)):
        w, g = want.get(key), got.get(key)
        if w == g:
            continue
        if isinstance(w, dict) and isinstance(g, dict) and "rows" in w and "rows" in g:
            bad = [i for i, (x, y) in enumerate(zip(w["rows"], g["rows"], strict=False)) if x != y]
            out.append(
                f"{name}.{key}: columns {w['columns'] == g['columns']}, dtypes {w['dtypes']} vs "
                f"{g['dtypes']}, rows {w['n_rows']} vs "
                f"{g['n_rows']}, first differing row {bad[:1]}: "
                f"{[w['rows'][i] for i in bad[:1]]} vs {[g['rows'][i] for i in bad[:1]]}"
            )
        else:
            out.append(f"{name}.{key}: {str(w)[:300]} vs {str(g)[:300]}")
    return out


def test_the_golden_file_covers_every_case(golden):
    gen = _generator()
    assert set(golden["agreement"]) == {name for name, _, _ in gen.CASES}
    assert set(golden["raters"]) == {name for name, _, _ in gen.RATER_CASES}
    # Each level, each slice field, a filter, a response subset, both small stores.
    assert golden["agreement"]["demo_by_domain"]["slices"]["n_rows"] > 0
    assert golden["agreement"]["continuous"]["ceiling"]["n_rows"] > 0


@pytest.mark.parametrize("section", ["agreement", "raters"])
def test_every_statistic_is_bit_identical_to_the_stored_values(current, golden, section):
    problems = []
    for name, want in golden[section].items():
        got = current[section][name]
        if section == "raters":
            want, got = {"frame": want}, {"frame": got}
        problems += _diff(name, want, got)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize(
    ("skill", "by", "level"),
    [
        (None, "domain", "system"),
        ("comprehension", "difficulty", "instance"),
        (None, "model", "pooled"),
    ],
)
def test_a_section_alone_has_the_values_of_the_full_computation(demo_db, skill, by, level):
    """The page computes the section on screen; each is, to the last bit, the same as in the
    computation of every section (the slices: the rows the page shows of them)."""
    from pandas.testing import assert_frame_equal

    from analysis.core.filters import Filters
    from analysis.core.store import Store
    from analysis.views.agreement import AgreementQuery, agreement, for_skill

    store = Store(demo_db)
    q = AgreementQuery(Filters("demo"), _generator().DEMO_A, "kind:human", level, skill, by,
                       n_boot=200, seed=3)  # fmt: skip
    full = agreement(store, q)
    for section in ("stats", "ceiling", "ranks"):
        alone = agreement(store, q, sections=(section,))
        assert_frame_equal(getattr(alone, section), getattr(full, section), check_exact=True)
        others = {"stats", "slices", "ceiling", "ranks"} - {section}
        assert all(getattr(alone, k).empty for k in others)
    shown = agreement(store, q, sections=("slices_shown",)).slices
    want = for_skill(full.slices, skill).reset_index(drop=True)
    assert len(shown) == len(want) > 0
    assert_frame_equal(shown, want, check_exact=True)


def test_rater_resamples_do_not_depend_on_the_stores_row_order(tmp_path):
    """The same ratings written in opposite orders give the same α and the same CI."""
    from pandas.testing import assert_frame_equal

    from analysis.core.filters import Filters
    from analysis.core.store import Store
    from analysis.ingest.score_files import import_scores
    from analysis.views.agreement import rater_agreement

    rows = _generator().small_rows("halves")
    frames = []
    for name, order in (("fwd", rows), ("rev", rows.iloc[::-1])):
        order.to_csv(tmp_path / f"{name}.csv", index=False)
        store = Store(tmp_path / f"{name}.duckdb")
        import_scores(store, tmp_path / f"{name}.csv", dataset="halves", scale=(0, 10))
        frames.append(rater_agreement(store, Filters("halves"), "kind:human", n_boot=50, seed=2))
    assert not frames[0].empty
    assert_frame_equal(frames[0], frames[1])

"""Batch prices (judges/prices.py, judges/data/prices.json) and the estimate's wording for a
batch run (judges/plan.py ``Estimate.lines``). Expected values are written by hand."""

from __future__ import annotations

import json

import pytest

from analysis.core.errors import InputError
from judges.plan import Estimate
from judges.prices import PRICES_FILE, Price, load_prices, price_of


def write(tmp_path, rows: dict) -> str:
    path = tmp_path / "prices.json"
    path.write_text(json.dumps(rows), encoding="utf-8")
    return str(path)


@pytest.fixture
def table(tmp_path) -> dict[str, Price]:
    return load_prices(
        write(
            tmp_path,
            {
                "_comment": "skipped",
                "four": [2, 8, 1.5, 3],  # batch columns that are not half: they are used
                "two": [3, 12],  # no batch columns: half
                "free-batch": [1, 2, 0, 0],  # 0 is a price, not "none given"
                "gpt-4o": [2.5, 10.0, 1.25, 5.0],
                "gpt-4": [30, 60],
                "gpt-4o-mini": [0.15, 0.6, 0.075, 0.3],
            },
        )
    )


def test_rows_of_two_and_four_numbers(table):
    assert "_comment" not in table
    assert table["four"] == Price(2.0, 8.0, 1.5, 3.0)
    assert table["two"] == Price(3.0, 12.0)


@pytest.mark.parametrize(
    "model, listed, batch",
    [
        ("four", Price(2.0, 8.0, 1.5, 3.0), Price(1.5, 3.0)),
        ("two", Price(3.0, 12.0), Price(1.5, 6.0)),
        ("free-batch", Price(1.0, 2.0, 0.0, 0.0), Price(0.0, 0.0)),
        ("gpt-4o", Price(2.5, 10.0, 1.25, 5.0), Price(1.25, 5.0)),
        # Prefixes: the longest known one (gpt-4o, not gpt-4; gpt-4o-mini, not gpt-4o).
        ("gpt-4o-2024-08-06", Price(2.5, 10.0, 1.25, 5.0), Price(1.25, 5.0)),
        ("gpt-4o-mini-2024-07-18", Price(0.15, 0.6, 0.075, 0.3), Price(0.075, 0.3)),
        ("gpt-4-0613", Price(30.0, 60.0), Price(15.0, 30.0)),
    ],
)
def test_price_of_list_and_batch(table, model, listed, batch):
    assert price_of(model, table) == listed
    assert price_of(model, table, batch=True) == batch
    assert price_of(model, table, batch=False) == listed


@pytest.mark.parametrize("model", ["claude-3-opus", "gpt", "", "GPT-4O"])
def test_unknown_model_has_no_price(table, model):
    assert price_of(model, table) is None
    assert price_of(model, table, batch=True) is None


def test_batch_cost_of_a_million_tokens_each(table):
    # 1M prompt at 1.5 + 1M completion at 3.0 (the row's batch columns).
    assert price_of("four", table, batch=True).cost(1_000_000, 1_000_000) == pytest.approx(4.5)
    # Half of 3 + half of 12.
    assert price_of("two", table, batch=True).cost(1_000_000, 1_000_000) == pytest.approx(7.5)
    # 2,000 prompt tokens at 1.5/M + 500 completion tokens at 6/M = 0.003 + 0.003.
    assert price_of("two", table, batch=True).cost(2_000, 500) == pytest.approx(0.006)


@pytest.mark.parametrize(
    "row, problem",
    [
        ([1, 2, 3], "3 numbers"),
        ([1], "1 numbers"),
        ([1, 2, 3, 4, 5], "5 numbers"),
        ([], "0 numbers"),
        (5, ""),
        (["a", "b"], ""),
        ({"in": 1, "out": 2}, ""),
    ],
    ids=["three", "one", "five", "none", "scalar", "not-numbers", "object"],
)
def test_a_bad_row_names_the_file(tmp_path, row, problem):
    path = write(tmp_path, {"ok": [1, 2], "bad": row})
    with pytest.raises(InputError) as e:
        load_prices(path)
    assert e.value.file == path
    assert e.value.message.startswith(path + ": ")
    assert "[input, output, batch input, batch output]" in e.value.message
    assert problem in e.value.message


@pytest.mark.parametrize(
    "text", ["{not json", '["gpt-4o", 1, 2]', ""], ids=["not-json", "a-list", "empty"]
)
def test_a_bad_file_names_the_file(tmp_path, text):
    path = tmp_path / "prices.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as e:
        load_prices(path)
    assert e.value.file == str(path)


def test_a_missing_file_names_the_file(tmp_path):
    path = tmp_path / "absent.json"
    with pytest.raises(InputError) as e:
        load_prices(path)
    assert e.value.file == str(path)


# --- the shipped table --------------------------------------------------------------------


def test_every_shipped_row_has_batch_columns_of_half_the_list_price():
    raw = json.loads(PRICES_FILE.read_text(encoding="utf-8"))
    rows = {k: v for k, v in raw.items() if not k.startswith("_")}
    assert len(rows) >= 10
    for model, row in rows.items():
        assert len(row) == 4, model
        list_in, list_out, batch_in, batch_out = row
        # Doubling a float is exact, so half the list price compares with ==.
        assert batch_in * 2 == list_in, model
        assert batch_out * 2 == list_out, model
    loaded = load_prices()
    assert set(loaded) == set(rows)
    for model, (list_in, list_out, batch_in, batch_out) in rows.items():
        assert price_of(model, loaded) == Price(list_in, list_out, batch_in, batch_out)
        assert price_of(model, loaded, batch=True) == Price(batch_in, batch_out)


def test_shipped_gpt_4o_mini_batch_cost():
    prices = load_prices()
    mini = price_of("gpt-4o-mini", prices, batch=True)
    assert mini == Price(0.075, 0.3)
    assert mini.cost(1_000_000, 1_000_000) == pytest.approx(0.075 + 0.3)
    assert price_of("gpt-4o-mini", prices).cost(1_000_000, 1_000_000) == pytest.approx(0.75)
    # A dated snapshot costs what its family does.
    assert price_of("gpt-4o-2024-08-06", prices, batch=True) == Price(1.25, 5.0)


# --- Estimate.lines -----------------------------------------------------------------------

LIVE = [
    "1,200 calls to make, 34 answered by the cache (free)",
    "≈ 1,234,567 prompt + 89,000 completion tokens",
    "cost ≈ $1,234.57",
    "time ≈ 1.5 min (rough)",
]
WINDOW = "time: within 24 h (the batch service's window; often much less)"


@pytest.mark.parametrize(
    "extra, expected",
    [
        ({}, LIVE),
        ({"window_h": 24}, [LIVE[0], LIVE[1], "cost ≈ $1,234.57 at batch prices", WINDOW]),
        (
            {"window_h": 24, "waiting": 3},
            [
                LIVE[0] + ", 3 waiting in a pending batch",
                LIVE[1],
                "cost ≈ $1,234.57 at batch prices",
                WINDOW,
            ],
        ),
        ({"waiting": 1500}, [LIVE[0] + ", 1,500 waiting in a pending batch", *LIVE[1:]]),
        (
            {"window_h": 0.5},
            [*LIVE[:2], "cost ≈ $1,234.57 at batch prices", WINDOW.replace("24", "0.5")],
        ),
    ],
    ids=["live", "batch", "batch-waiting", "live-waiting", "half-hour"],
)
def test_estimate_lines(extra, expected):
    est = Estimate(1200, 34, 1_234_567, 89_000, 1234.5678, 90.0, **extra)
    assert est.lines() == expected


def test_estimate_lines_unknown_price():
    est = Estimate(2, 0, 10, 20, None, 12.0)
    assert est.lines() == [
        "2 calls to make, 0 answered by the cache (free)",
        "≈ 10 prompt + 20 completion tokens",
        "cost unknown (add the model to the price table)",
        "time ≈ 0.2 min (rough)",
    ]

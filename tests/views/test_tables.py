"""Tables for people and CSV exports (analysis/views/tables.py, views/source_tasks.py).

Expected values are written by hand; CSVs are read back with pandas and the csv module."""

from __future__ import annotations

import csv
import io
import math
from datetime import datetime

import numpy as np
import pandas as pd
import pytest

from analysis.views.source_tasks import task_label
from analysis.views.tables import (
    HEADERS,
    csv_bytes,
    digits_for,
    fmt_ci,
    fmt_num,
    for_people,
    header,
    judge_label,
    neutralise,
    skill_label,
)


@pytest.mark.parametrize(
    ("value", "digits", "expected"),
    [
        (3.14159, 2, "3.14"),
        (3.14159, 3, "3.142"),
        (2, 2, "2.00"),
        (np.int64(7), 0, "7"),
        (np.float32(0.5), 1, "0.5"),
        (-1.235, 2, "-1.24"),  # -1.235 is stored as -1.2350000000000000977: rounds away
        (-0.0001, 2, "0.00"),  # never "-0.00"
        (-0.004, 2, "0.00"),
        (-0.006, 2, "-0.01"),
        (None, 2, ""),
        (float("nan"), 2, ""),
        (np.nan, 3, ""),
        (pd.NA, 2, ""),
        (float("inf"), 2, "∞"),
        (float("-inf"), 2, "−∞"),
        (1234.5, 1, "1234.5"),  # no thousands separator: the text parses back as a number
    ],
)
def test_fmt_num(value, digits, expected):
    assert fmt_num(value, digits) == expected


def test_fmt_num_default_is_two_decimals():
    assert fmt_num(3.456) == "3.46"


@pytest.mark.parametrize(
    ("mean", "lo", "hi", "digits", "expected"),
    [
        (3.41, 3.3, 3.52, 2, "3.41 [3.30, 3.52]"),
        (3.405, 3.3, 3.52, 2, "3.40 [3.30, 3.52]"),  # 3.405 is 3.40499999…: half-even irrelevant
        (0.4567, 0.1, 0.9, 3, "0.457 [0.100, 0.900]"),
        (3.41, None, None, 2, "3.41"),
        (3.41, np.nan, 3.5, 2, "3.41"),
        (3.41, 3.3, np.nan, 2, "3.41"),
        (None, 3.3, 3.5, 2, ""),
        (np.nan, np.nan, np.nan, 2, ""),
        (-0.2, -0.51, 0.11, 2, "-0.20 [-0.51, 0.11]"),
    ],
)
def test_fmt_ci(mean, lo, hi, digits, expected):
    assert fmt_ci(mean, lo, hi, digits) == expected


@pytest.mark.parametrize(
    ("column", "expected"),
    [
        ("mean", "Mean"),
        ("ci_low", "95% CI low"),
        ("ci_high", "95% CI high"),
        ("n", "Scores (n)"),
        ("n_instances", "Instances"),
        ("n_na", "N/A scores"),
        ("mean_full", "Mean (full set)"),
        ("ci_high_hard", "95% CI high (FLASK-Hard)"),
        ("n_na_hard", "N/A scores (FLASK-Hard)"),
        ("source_task", "Source task"),
        ("p_holm", "p (Holm)"),
        ("something_else", "something_else"),
        ("Overall", "Overall"),
    ],
)
def test_header(column, expected):
    assert header(column) == expected


def test_headers_has_every_common_column():
    for col in ("mean", "ci_low", "ci_high", "n", "n_instances", "n_na", "mean_full"):
        assert col in HEADERS
        assert "_" not in HEADERS[col]


@pytest.mark.parametrize(
    ("column", "expected"),
    [
        ("mean", 2),
        ("ci_low", 2),
        ("mean_hard", 2),
        ("diff", 2),
        ("value", 3),
        ("p", 3),
        ("p_holm", 3),
        ("rel_change_%", 1),
    ],
)
def test_digits_for(column, expected):
    assert digits_for(column) == expected


@pytest.mark.parametrize(
    ("skill", "labels", "expected"),
    [
        ("robustness", None, "Logical Robustness"),
        ("commonsense", None, "Commonsense Understanding"),
        ("helpfulness", {"helpfulness": "Helpful"}, "Helpful"),
        ("robustness", {"robustness": "Own name"}, "Own name"),
        ("unknown", None, "unknown"),
        (None, None, None),
    ],
)
def test_skill_label(skill, labels, expected):
    assert skill_label(skill, labels) == expected


@pytest.mark.parametrize(
    ("judge", "kind", "expected"),
    [
        ("gpt-4", "llm", "gpt-4 (llm)"),
        ("alice", "human", "alice (human)"),
        ("gpt-4 (simulated)", "llm", "gpt-4 (simulated, llm)"),
        ("gpt-4 (simulated) ", "llm", "gpt-4 (simulated, llm)"),
        ("a (b) c", "llm", "a (b) c · llm"),
        ("x)", "human", "x) · human"),
        ("gpt-4", None, "gpt-4 (llm)"),
    ],
)
def test_judge_label_has_one_pair_of_brackets(judge, kind, expected):
    label = judge_label(judge, kind)
    assert label == expected
    assert label.count("(") <= max(judge.count("("), 1)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("Mbpp", "MBPP"),
        ("Gsm8k", "GSM8K"),
        ("gsm8k", "GSM8K"),
        ("Humaneval", "HumanEval"),
        ("Truthfulqa", "TruthfulQA"),
        ("Mmlu", "MMLU"),
        ("theoremqa", "TheoremQA"),
        ("Wikitablequesitons", "WikiTableQuestions"),
        ("Bigbench: cs algorithms", "BIG-bench: CS algorithms"),
        ("Bigbench: mnist ascii", "BIG-bench: MNIST ASCII"),
        ("Bigbench: minute mysteries qa", "BIG-bench: minute mysteries QA"),
        ("Agieval - math (amc + aime)", "AGIEval: math (AMC + AIME)"),
        (
            "inverse scaling prize: pattern-matching-suppression classification",
            "Inverse Scaling Prize: pattern-matching-suppression classification",
        ),
        ("Haiku generation", "Haiku generation"),  # not an acronym: as written
        ("my own task", "my own task"),
        ("Unknown: thing", "Unknown: thing"),
        (None, ""),
    ],
)
def test_task_label(raw, expected):
    assert task_label(raw) == expected


def test_for_people_text():
    frame = pd.DataFrame(
        {
            "model": ["m1", "m2", "m3"],
            "skill": ["robustness", "factuality", "own"],
            "source_task": ["Mbpp", None, "Gsm8k"],
            "mean": [3.4123, np.nan, 2.0],
            "ci_low": [3.3, np.nan, -0.0001],
            "n": [10, 0, 3],
            "n_na": [1.0, np.nan, 2.0],  # a count that went float by a merge
            "p_holm": [0.12345, 0.5, np.nan],
            "significant": [True, False, True],
            "domains": [np.array(["Culture", "Language"]), [], ["Math"]],
            "remark": ["x", None, "z"],
        }
    )
    out = for_people(frame, labels={"own": "Own criterion"}, counts=("n_na",))
    assert list(out.columns) == [
        "Model",
        "Skill",
        "Source task",
        "Mean",
        "95% CI low",
        "Scores (n)",
        "N/A scores",
        "p (Holm)",
        "Significant (Holm p < 0.05)",
        "Domains",
        "remark",
    ]
    assert list(out["Skill"]) == ["Logical Robustness", "Factuality", "Own criterion"]
    assert list(out["Source task"]) == ["MBPP", "", "GSM8K"]
    assert list(out["Mean"]) == ["3.41", "", "2.00"]
    assert list(out["95% CI low"]) == ["3.30", "", "0.00"]
    assert list(out["Scores (n)"]) == [10, 0, 3]  # complete integer counts stay numbers
    assert list(out["N/A scores"]) == ["1", "", "2"]
    assert list(out["p (Holm)"]) == ["0.123", "0.500", ""]
    assert list(out["Significant (Holm p < 0.05)"]) == ["yes", "no", "yes"]
    assert list(out["Domains"]) == ["Culture, Language", "", "Math"]
    assert list(out["remark"]) == ["x", "", "z"]
    assert "None" not in out.astype(str).to_numpy()
    assert "nan" not in out.astype(str).to_numpy()


def test_for_people_statistics_table_has_three_decimals_and_labels():
    frame = pd.DataFrame(
        {
            "skill": ["All criteria (pooled)", "correctness"],
            "statistic": ["Spearman ρ", "MAE"],
            "value": [0.41234, 0.5],
            "ci_low": [0.3, np.nan],
            "ci_high": [0.52, np.nan],
            "n": [120, 1],
        }
    )
    out = for_people(frame)
    assert out.to_dict("records") == [
        {"Skill": "All criteria (pooled)", "Statistic": "Spearman ρ", "Value": "0.412",
         "95% CI low": "0.300", "95% CI high": "0.520", "n": 120},
        {"Skill": "Logical Correctness", "Statistic": "MAE", "Value": "0.500",
         "95% CI low": "", "95% CI high": "", "n": 1},
    ]  # fmt: skip


def test_for_people_overrides_and_dates():
    frame = pd.DataFrame(
        {"mean": [1.23456], "when": [datetime(2024, 5, 6, 7, 8, 9)], "axis": ["efficiency"]}
    )
    out = for_people(frame, headers={"mean": "Average"}, digits={"mean": 4})
    assert out.to_dict("records") == [
        {"Average": "1.2346", "when": "2024-05-06 07:08", "Axis": "Logical Efficiency"}
    ]


def test_for_people_keeps_numbers_for_exports():
    frame = pd.DataFrame({"skill": ["robustness"], "mean": [3.41234], "ci_low": [np.nan]})
    out = for_people(frame, text=False)
    assert out["Mean"].iloc[0] == 3.41234
    assert math.isnan(out["95% CI low"].iloc[0])
    assert out["Skill"].iloc[0] == "Logical Robustness"


def test_for_people_empty_frame():
    out = for_people(pd.DataFrame({"mean": pd.Series([], dtype=float), "n": []}))
    assert list(out.columns) == ["Mean", "Scores (n)"]
    assert out.empty


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ('=HYPERLINK("x")', '\'=HYPERLINK("x")'),
        ("+1", "'+1"),
        ("-cmd", "'-cmd"),
        ("-1+2", "'-1+2"),
        ("@SUM(A1)", "'@SUM(A1)"),
        ("\tTAB", "'\tTAB"),
        ("plain", "plain"),
        ("a=b", "a=b"),
        ("", ""),
        (-1.5, -1.5),  # a number stays a number
        (-3, -3),
        (None, None),
    ],
)
def test_neutralise(value, expected):
    assert neutralise(value) == expected


def _read(data: bytes) -> pd.DataFrame:
    return pd.read_csv(io.BytesIO(data), keep_default_na=False, na_values=[""])


def test_csv_bytes_round_trip():
    frame = pd.DataFrame(
        {
            "Model": ['=HYPERLINK("x")', "plain", "-cmd"],
            "Domains": [np.array(["Culture", "Language"]), ["+1", "Math"], []],
            "Mean": [-1.25, 3.0, np.nan],
            "Count": [1, 2, 3],
            "Mixed": ["-1+2", -4.5, "@SUM(A1)"],
            "Flag": [True, False, True],
        }
    )
    data = csv_bytes(frame)
    assert data.startswith(b"\xef\xbb\xbf")  # UTF-8 with a byte-order mark
    back = _read(data)
    assert list(back["Model"]) == ['\'=HYPERLINK("x")', "plain", "'-cmd"]
    assert [s.split(";") for s in back["Domains"].fillna("")] == [
        ["Culture", "Language"],
        ["'+1", "Math"],  # the cell starts with "+": the whole cell is neutralised once
        [""],
    ]
    assert back["Mean"].iloc[:2].tolist() == [-1.25, 3.0]
    assert math.isnan(back["Mean"].iloc[2])
    assert back["Count"].tolist() == [1, 2, 3]
    assert back["Mixed"].tolist() == ["'-1+2", "-4.5", "'@SUM(A1)"]
    assert back["Flag"].tolist() == [True, False, True]


def test_csv_list_cell_starting_with_formula_is_neutralised():
    data = csv_bytes(pd.DataFrame({"Domains": [["=1+1", "x"]]}))
    assert _read(data)["Domains"].tolist() == ["'=1+1;x"]


def test_csv_headers_are_neutralised():
    frame = pd.DataFrame({'=HYPERLINK("x")': [1.5], "ok": ["a"]})
    rows = list(csv.reader(io.StringIO(csv_bytes(frame).decode("utf-8-sig"))))
    assert rows == [['\'=HYPERLINK("x")', "ok"], ["1.5", "a"]]


def test_csv_numbers_keep_full_precision():
    frame = pd.DataFrame({"Mean": [1 / 3, 2 / 3]})
    back = _read(csv_bytes(frame))
    assert back["Mean"].tolist() == [1 / 3, 2 / 3]


def test_sample_facts_use_labels_and_proper_task_names():
    from analysis.views.sample_detail import SampleDetail, facts

    d = SampleDetail(
        "ds", "7", "m", "instr", "", None, "Gsm8k", 3, ("Math", "Coding"),
        ("correctness", "own criterion"), True,
    )  # fmt: skip
    assert facts(d) == (
        "level 3 · task GSM8K · domains Math, Coding · skills Logical Correctness, "
        "own criterion · FLASK-Hard"
    )
    bare = SampleDetail("ds", "8", "m", "", "", None, None, None, (), (), False)
    assert facts(bare) == "level unlabeled · task – · domains – · skills –"


def test_parquet_keeps_types_and_gives_repeated_headers_their_own_names():
    import io

    from analysis.views.tables import parquet_bytes

    rows = [[1.5, "=x", ["a", "b"], 2], [None, "y", [], 3]]
    frame = pd.DataFrame(rows, columns=["Mean", "Model", "Domains", "Mean"])
    back = pd.read_parquet(io.BytesIO(parquet_bytes(frame)))
    assert list(back.columns) == ["Mean", "Model", "Domains", "Mean (2)"]
    assert back["Mean"].dtype == float and back["Mean (2)"].tolist() == [2, 3]
    assert back["Model"].tolist() == ["=x", "y"]  # not neutralised: no spreadsheet runs Parquet
    assert [list(v) for v in back["Domains"]] == [["a", "b"], []]

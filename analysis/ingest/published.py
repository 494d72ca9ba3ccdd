"""Figures printed in the FLASK paper, kept as our own data files with their citation.

Ye et al., "FLASK: Fine-grained Language Model Evaluation based on Alignment Skill Sets",
ICLR 2024, arXiv 2307.10928 v4. Pages show them as reference overlays; the simulated demo is
calibrated against them. The files' header comments say which table each column comes from.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pandas as pd

DATA_DIR = Path(__file__).with_name("data")
SKILL_SCORES_FILE = DATA_DIR / "published_skill_scores.csv"
AGREEMENT_FILE = DATA_DIR / "published_agreement.csv"
CITATION = (
    'Ye et al., "FLASK: Fine-grained Language Model Evaluation based on Alignment Skill Sets", '
    "ICLR 2024 (arXiv 2307.10928 v4)"
)


@cache
def _read(path: Path) -> pd.DataFrame:
    return pd.read_csv(path, comment="#")


def published_skill_scores() -> pd.DataFrame:
    """GPT-4-judged mean score per subset (full / hard), model and skill (Tables 9 and 10).

    Columns: subset, model_id, paper_name, skill, mean_score. A fresh copy on every call.
    """
    return _read(SKILL_SCORES_FILE).copy()


def published_means(subset: str = "full") -> pd.DataFrame:
    """The published means of one subset as a model_id × skill table."""
    df = published_skill_scores()
    if subset not in set(df["subset"]):
        raise ValueError(f"unknown subset '{subset}'; expected one of {sorted(set(df['subset']))}")
    return df[df["subset"] == subset].pivot(index="model_id", columns="skill", values="mean_score")


def published_agreement() -> pd.DataFrame:
    """Per-skill agreement figures (Table 2; length and three-judge columns from Tables 5, 4).

    Columns: skill, human_human_alpha, gpt4_repeat_alpha, human_gpt4_pearson,
    length_score_pearson, three_judges_alpha; the row skill == "overall" is the paper's
    all-skill figure.
    """
    return _read(AGREEMENT_FILE).copy()

"""A real store whose every name a chart shows is hostile text: markup plotly would read
(``<b>``, ``<a href>``, ``<img onerror>``, ``<script>``), markdown, a hover-template
placeholder and an ampersand. Written through the score importer, as a user's file would be,
so every name passes the real name rules (analysis/core/names.py) on its way in.

Three models, one LLM judge, two human raters and two criteria of the dataset's own; twelve
instances over three FLASK domains and three difficulty levels, so that every page's charts
(leaderboard, coverage, radar, paired comparison, difficulty and domain heatmaps, difficulty
lines, the agreement bars, confusion heatmap, scatter and the humans' ceiling) are drawn."""

from __future__ import annotations

import csv
import itertools
from pathlib import Path

from analysis.core.store import Store
from analysis.ingest.score_files import import_scores

# Where a link would lead: a loopback port nobody listens on (a request there is recorded by
# the browser test, and refused by the machine if it were ever made).
HREF_HOST = "127.0.0.1:9"

MODELS = (
    f'<b>bold</b><a href="http://{HREF_HOST}/x">link</a>',
    "<img src=x onerror=alert(1)>",
    f"**md** [md](http://{HREF_HOST}/m) 5%{{y}}",
)
JUDGE = f'<script>alert(2)</script><a href="http://{HREF_HOST}/j">J</a>'
RATERS = (  # the human raters (annotator names: at most 60 characters)
    f'<b>rater</b><a href="http://{HREF_HOST}/h">h</a>',
    "<i>R&amp;D</i> & <u>two</u>",
)
# Criteria short enough that no chart cuts them (a radar axis keeps 2 lines of 14).
CRITERIA = ("<b>crit</b>", "<a href=x>c</a>")
DATASET = "<b>set</b>"
DOMAINS = ("Math", "Coding", "History")
INSTANCES = 12

# Every hostile name; each must reach some chart verbatim.
NAMES = (*MODELS, JUDGE, *RATERS, *CRITERIA)


def _score(*parts: int) -> int:
    """A deterministic 1-5 score that differs between scorers (the agreement is not perfect)."""
    return sum((i + 1) * p for i, p in enumerate(parts)) % 5 + 1


def hostile_store(path: Path) -> Path:
    """Write the hostile dataset into a new store at ``path`` (one import per scorer, each a
    CSV file as a user would give it)."""
    scorers = [(JUDGE, "llm", 0), *((r, "human", k + 1) for k, r in enumerate(RATERS))]
    for who, kind, seed in scorers:
        rows = []
        for i, (m, model), (c, crit) in itertools.product(
            range(INSTANCES), enumerate(MODELS), enumerate(CRITERIA)
        ):
            rows.append({
                "instance_id": f"q{i}", "model": model, "judge": who, "kind": kind,
                "skill": crit, "score": _score(i, m, c, seed), "scale_min": 1, "scale_max": 5,
                "domain": DOMAINS[i % 3], "difficulty": i % 3 + 1,
                "instruction": f"instruction {i}",
            })  # fmt: skip
        file = path.parent / f"scores-{seed}.csv"
        with file.open("w", newline="", encoding="utf-8") as f:
            writer = csv.DictWriter(f, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
        import_scores(Store(path), file, dataset=DATASET)
    return path

"""The Stability figure: one marker per judge and criterion with its CI, the humans' α and
FLASK's published α as references, unstable cells ringed; hostile names stay text."""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis.charts.judges_stability import stability_chart
from analysis.views.agreement import SCOPE_ALL, SCOPE_CRITERION
from analysis.views.judge_stability import Stability, _empty_table
from tests.charts.test_untrusted import EVIL, assert_no_markup_from_names


def _result(judges=(EVIL, "plain judge")) -> Stability:
    rows = []
    for k, judge in enumerate(judges):
        for scope, skill, a in ((SCOPE_CRITERION, "correctness", 0.9), (SCOPE_CRITERION, "c2", 0.4),
                                (SCOPE_ALL, None, 0.7)):  # fmt: skip
            rows.append({"judge": judge, "scope": scope, "skill": skill,
                         "alpha_ordinal": a - k / 10, "alpha_ordinal_low": a - 0.1 - k / 10,
                         "alpha_ordinal_high": a + 0.05 - k / 10, "n_items": 40, "n_runs": 2,
                         "unstable": a + 0.05 - k / 10 < 0.667,
                         "unstable_alpha_ordinal": a + 0.05 - k / 10 < 0.667})  # fmt: skip
    table = pd.concat([_empty_table(), pd.DataFrame(rows)], ignore_index=True)
    humans = pd.DataFrame(
        {"scope": [SCOPE_CRITERION, SCOPE_ALL], "skill": ["correctness", None],
         "statistic": "alpha_ordinal", "value": [0.6, 0.5], "ci_low": [0.5, 0.4],
         "ci_high": [0.7, 0.6], "n_units": [30, 60]}
    )  # fmt: skip
    published = pd.DataFrame({"skill": ["correctness", "readability"],
                              "gpt4_repeat_alpha": [0.925, 0.329]})  # fmt: skip
    return Stability(table, humans, published, tuple(judges), (), (), {"c2": EVIL})


def test_markers_references_and_flags():
    fig = stability_chart(_result())
    by_name = {t.name: t for t in fig.data}
    plain = by_name["plain judge"]
    assert np.allclose(np.asarray(plain.y, float), [0.8, 0.3, 0.6])
    assert np.allclose(np.asarray(plain.error_y.array), 0.05)  # hi − value
    assert np.allclose(np.asarray(plain.error_y.arrayminus), 0.1)  # value − lo
    humans = by_name["humans' α among themselves (reference)"]
    assert np.allclose(humans.y, [0.6, 0.5]) and np.allclose(np.round(humans.x), [0, 2])
    flask = by_name["FLASK paper: GPT-4, 3 runs at temperature 1.0"]
    assert np.allclose(flask.y, [0.925])  # readability is not among this data's criteria
    ringed = next(t for t in fig.data if t.name.startswith("unstable"))
    assert len(ringed.x) == 3  # c2 of both judges and the plain one's pooled: CI below 0.667
    ticks = list(fig.layout.xaxis.ticktext)
    assert ticks[1] != EVIL and "&lt;a href" in ticks[1] and ticks[2] == "All criteria (pooled)"


def test_hostile_judge_and_criterion_names_stay_text():
    assert_no_markup_from_names(stability_chart(_result()))


def test_nothing_repeated_draws_the_empty_figure():
    empty = Stability(_empty_table(), pd.DataFrame(), pd.DataFrame(), (), (), (), {})
    fig = stability_chart(empty)
    assert "two or more runs" in fig.layout.annotations[0].text

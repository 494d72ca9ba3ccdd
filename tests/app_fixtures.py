"""Shared by the AppTest files of the pages: open a page through the router, open the Judges
page on a tab, and read plotly's numeric arrays out of a chart's JSON."""

from __future__ import annotations

import base64
from pathlib import Path

import numpy as np
from streamlit.testing.v1 import AppTest

APP = str(Path(__file__).resolve().parents[1] / "app.py")
PAGE = "pages/judges.py"


def open_page(page: str, state: dict | None = None) -> AppTest:
    """The router once (it sets the sidebar's filters), then ``page``. Widget state is set
    before the first run: AppTest drops the router's widgets on later runs."""
    at = AppTest.from_file(APP, default_timeout=180)
    for k, v in (state or {}).items():
        at.session_state[k] = v
    at.run()
    at.switch_page(page)
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def judges_page(section: str, state: dict | None = None) -> AppTest:
    """The Judges page with ``section`` its open tab."""
    return open_page(PAGE, {"jd_section": section, **(state or {})})


def plotly_array(v) -> np.ndarray:
    """Plotly ships numeric arrays as {'dtype', 'bdata', 'shape'?} (base64) in the JSON."""
    if isinstance(v, dict) and "bdata" in v:
        out = np.frombuffer(base64.b64decode(v["bdata"]), dtype=v["dtype"])
        return out.reshape([int(n) for n in str(v["shape"]).split(",")]) if "shape" in v else out
    rows = v and isinstance(v[0], list)
    return np.asarray(
        [[np.nan if x is None else x for x in row] for row in v] if rows
        else [np.nan if x is None else x for x in v], dtype=float,
    )  # fmt: skip

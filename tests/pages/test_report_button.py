"""The Overview's report button (AppTest): a click makes the report of the sidebar's view with a
progress bar, then offers it as one HTML file named after the dataset and the day."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage
from streamlit.testing.v1 import AppTest

from tests.report_fixtures import Parsed, figures

REPO = Path(__file__).resolve().parents[2]
APP = str(REPO / "app.py")


@pytest.fixture
def files(monkeypatch: pytest.MonkeyPatch) -> dict[str, tuple[bytes, str | None]]:
    """(bytes, file name) behind every download button AppTest renders, by media file id."""
    seen: dict[str, tuple[bytes, str | None]] = {}
    original = MemoryMediaFileStorage.load_and_get_id

    def record(self, path_or_data, mimetype, kind, filename=None):
        file_id = original(self, path_or_data, mimetype, kind, filename)
        seen[file_id] = (path_or_data, filename)
        return file_id

    monkeypatch.setattr(MemoryMediaFileStorage, "load_and_get_id", record)
    return seen


def test_report_button_makes_the_sidebars_view(app_db, files):
    at = AppTest.from_file(APP, default_timeout=120)
    at.session_state["models::demo"] = ["gpt4", "bard"]  # the sidebar's view: two models
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    assert not at.get("download_button") or all(
        "report_html" not in b.proto.id for b in at.get("download_button")
    )  # nothing is made before the click
    at.button(key="report_make").click()
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    (button,) = [b for b in at.get("download_button") if b.proto.id.endswith("report_html")]
    data, name = files[Path(button.proto.url).stem]
    assert name == f"finegrain-report-demo-{datetime.now(UTC):%Y-%m-%d}.html"
    html = data.decode("utf-8")
    (board,) = figures(html)["leaderboard"]
    assert sorted(board["data"][0]["y"]) == ["bard", "gpt4"]
    assert "SIMULATED DATA" in " ".join(Parsed(html).texts)

"""What a person sees, in Debian chromium: search, filter and select on the Samples page; three
items annotated from the keyboard and mouse, a browser reload, the answers still there and in
the store as a human judge; and hostile model/judge text that must show verbatim and do nothing."""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import urlparse

import duckdb
import pytest

from analysis.core.store import Store
from tests.live_app import ARTIFACTS, StreamlitServer, click_row, launch_browser, settled
from tests.samples_fixtures import DATASET, write_mini

pytestmark = pytest.mark.browser
from playwright import sync_api  # noqa: E402


def _store(tmp_path: Path) -> tuple[Path, dict]:
    path = tmp_path / "b.duckdb"
    return path, write_mini(Store(path))


def _search_box(page):
    return page.locator("[data-testid='stTextInput'] input[aria-label='Search']")


def _loopback_only(page) -> list[str]:
    """Record every request; anything not to 127.0.0.1 is recorded and blocked."""
    seen: list[str] = []

    def route(r):
        seen.append(r.request.url)
        host = urlparse(r.request.url).hostname
        r.continue_() if host == "127.0.0.1" else r.abort()

    page.route("**/*", route)
    page.on("request", lambda req: seen.append(req.url))
    return seen


def test_search_filter_select_then_annotate_three_and_reload(tmp_path):
    db, frames = _store(tmp_path)
    ARTIFACTS.mkdir(exist_ok=True)
    with StreamlitServer(db) as url, sync_api.sync_playwright() as p:
        browser = launch_browser(p)
        page = browser.new_page(viewport={"width": 1400, "height": 1500})
        requests = _loopback_only(page)
        page.goto(f"{url}/samples")
        # Filter: the sidebar's model filter, then search.
        page.get_by_text("72 responses match").wait_for(timeout=120_000)
        models = page.locator("[data-testid='stSidebar'] [data-testid='stMultiSelect']").first
        settled(page)
        models.click()
        page.get_by_role("option", name="beta", exact=True).click()
        page.keyboard.press("Escape")
        page.get_by_text("24 responses match").wait_for(timeout=60_000)
        settled(page)
        _search_box(page).fill("haystack")
        _search_box(page).press("Enter")
        r = frames["responses"]
        want = r[r["text"].str.lower().str.contains("haystack") & (r["model"] == "beta")]
        want = sorted(want["instance_id"], key=int)
        page.get_by_text(f"{len(want)} responses match").wait_for(timeout=60_000)
        # Select three rows; the detail view shows the first, as text.
        for row in range(3):
            click_row(page, row)
            page.get_by_text(f"{row + 1} selected").wait_for(timeout=30_000)
        text = r.set_index(["instance_id", "model"]).loc[(want[0], "beta"), "text"]
        page.locator("[data-testid='stText']", has_text=text).first.wait_for(timeout=30_000)
        assert f"instance={want[0]}" in page.url and "model=beta" in page.url
        page.get_by_role("button", name="Add to annotate queue").click()
        page.get_by_text("Annotate these: 3").wait_for(timeout=30_000)
        page.screenshot(path=str(ARTIFACTS / "samples.png"), full_page=True)

        # Annotate: name, then three forms (the first entirely from the keyboard).
        page.get_by_role("link", name="Annotate").click()
        name = page.get_by_label("Your name")
        name.wait_for(timeout=60_000)
        name.fill("alice")
        name.press("Enter")
        page.get_by_text("0 of 3 answered").wait_for(timeout=60_000)
        radios = page.locator("[data-testid='stRadio']")
        radios.first.wait_for()
        settled(page)
        radios.first.locator("input").first.focus()
        for _skill in range(3):
            page.keyboard.press("ArrowDown")  # from "1" to "2" (selects it)
            page.keyboard.press("Tab")  # next skill, then the comment box
        page.keyboard.type("first, by keyboard")
        page.keyboard.press("Tab")  # the Save button
        page.keyboard.press("Enter")
        page.get_by_text("1 of 3 answered").wait_for(timeout=60_000)
        for n in (2, 3):
            page.get_by_text(f"Item {n} of 3").wait_for(timeout=60_000)  # the next form is up
            settled(page)
            for k in range(3):
                radios.nth(k).get_by_text("N/A" if k == 1 else "4", exact=True).click()
            page.get_by_label("Comment (optional)").fill(f"item {n}")
            page.get_by_role("button", name="Save and next").click()
            page.get_by_text(f"{n} of 3 answered").wait_for(timeout=60_000)
        assert "annotator=alice" in page.url

        # Reload the browser page: a new session; the answers are still there.
        page.reload()
        page.get_by_text("3 of 3 answered").wait_for(timeout=120_000)
        assert page.get_by_label("Your name").input_value() == "alice"
        page.get_by_label("Item", exact=True).fill("1")
        page.get_by_label("Item", exact=True).press("Enter")
        # Item 3 was on screen and answered too: wait for item 1's saved comment itself, not
        # for a mark the previous form also shows.
        sync_api.expect(page.get_by_label("Comment (optional)")).to_have_value(
            "first, by keyboard", timeout=60_000
        )
        page.get_by_text("✓ answered").wait_for(timeout=60_000)
        page.screenshot(path=str(ARTIFACTS / "annotate.png"), full_page=True)
        browser.close()
        outside = [u for u in requests if urlparse(u).hostname != "127.0.0.1"]
        assert requests and not outside, outside
    # The server has stopped: read the file directly.
    with duckdb.connect(str(db), read_only=True) as con:
        kind = con.execute("SELECT kind FROM judges WHERE judge = 'alice'").fetchone()
        got = con.execute(
            "SELECT s.instance_id, s.skill, s.score, g.rationale FROM latest_scores s "
            "JOIN judgments g USING (judgment_id) WHERE s.judge = 'alice'"
        ).fetchall()
    assert kind == ("human",)
    assert sorted({i for i, *_ in got}, key=int) == want[:3]
    first = [(s, v) for i, s, v, c in got if c == "first, by keyboard"]
    assert len(first) == 3 and all(v == 2.0 for _, v in first)  # ArrowDown from 1 = 2
    rest = [(s, v) for i, s, v, c in got if c != "first, by keyboard"]
    assert len(rest) == 6 and sorted(v for _, v in rest if v is not None) == [4.0] * 4
    assert sum(v is None for _, v in rest) == 2  # the middle skill: N/A


def test_link_on_a_fresh_server_opens_the_response_and_its_dataset(tmp_path):
    """A shared link is the first request a fresh server sees; it names the dataset that is
    not the sidebar's default. (AppTest drops sidebar state on reruns, so this is a browser
    test.)"""
    from analysis.ingest.score_files import import_scores

    db, _ = _store(tmp_path)
    csv = tmp_path / "other.csv"
    csv.write_text("instance_id,model,skill,score,response\n1,m,robustness,3,other text\n")
    import_scores(Store(db), csv, judge="j", kind="llm", dataset="other")  # newest: default
    with StreamlitServer(db) as url, sync_api.sync_playwright() as p:
        browser = launch_browser(p)
        page = browser.new_page(viewport={"width": 1400, "height": 1400})
        page.goto(f"{url}/samples?dataset={DATASET}&instance=3&model=beta")
        text = page.locator("[data-testid='stText']", has_text="100% sure_thing")
        text.first.wait_for(timeout=120_000)
        assert text.first.inner_text() == "Response of beta to 3. 100% sure_thing."
        # the sidebar switched to mini: its 72 responses (the default dataset has 1)
        page.get_by_text("72 responses match").wait_for(timeout=60_000)
        assert "dataset=mini&instance=3&model=beta" in page.url
        browser.close()


HOST = "203.0.113.7"  # TEST-NET-3: never routable; any request to it is a failure
LONG = "x" * 3000 + "END"
HOSTILE = {
    "instruction": f"<script>window.__pwned='instruction'</script> Explain ![a](http://{HOST}/i.png)",
    "reference": f"[click me](http://{HOST}/r) <iframe src='http://{HOST}/f'></iframe>",
    "response": (
        f"<img src=http://{HOST}/x.png onerror=\"window.__pwned='img'\">\n"
        f"<script>alert('xss')</script>\n![pixel](http://{HOST}/p.png)\n"
        f"[link](http://{HOST}/l) **bold?** $x^2$\n{LONG}\n"
        "RTL: \u202egnp.exe\u202c and zero\u200bwidth\u200djoiner\u2060."
    ),
    "rationale": (
        f"<img src=x onerror=\"window.__pwned='rationale'\"><script>window.__pwned=1</script> "
        f"![r](http://{HOST}/r.png) \u202eevil\u202c z\u200bw"
    ),
}


def _hostile_store(tmp_path: Path) -> Path:
    """Imported through the ordinary score-file importer, as a user's file would be."""
    from analysis.ingest.score_files import import_scores

    src = tmp_path / "hostile.jsonl"
    rows = [
        {"instance_id": "1", "model": "m<b>1</b>", "judge": "judge <i>x</i>", "kind": "llm",
         "skill": s, "score": v, "instruction": HOSTILE["instruction"],
         "reference": HOSTILE["reference"], "response": HOSTILE["response"],
         "rationale": HOSTILE["rationale"], "dataset": "hostile"}
        for s, v in (("robustness", 4), ("correctness", "N/A"), ("readability", 2))
    ]  # fmt: skip
    src.write_text("".join(json.dumps(r) + "\n" for r in rows))
    db = tmp_path / "hostile.duckdb"
    import_scores(Store(db), src)
    return db


def test_hostile_text_is_shown_verbatim_and_does_nothing(tmp_path):
    db = _hostile_store(tmp_path)
    from analysis.views import sample_detail

    d = sample_detail.detail(Store(db), "hostile", "1", "m<b>1</b>")
    assert (d.instruction, d.reference, d.response) == (
        HOSTILE["instruction"], HOSTILE["reference"], HOSTILE["response"])  # fmt: skip
    assert d.judges[0].rationale == HOSTILE["rationale"]
    from analysis.views import queues

    queues.add(Store(db), queues.ANNOTATE, "hostile", [("1", "m<b>1</b>")])
    with StreamlitServer(db) as url, sync_api.sync_playwright() as p:
        browser = launch_browser(p)
        page = browser.new_page(viewport={"width": 1400, "height": 1600})
        requests = _loopback_only(page)
        dialogs: list[str] = []
        page.on("dialog", lambda dlg: (dialogs.append(dlg.message), dlg.dismiss()))
        page.goto(f"{url}/samples?dataset=hostile&instance=1&model=m%3Cb%3E1%3C%2Fb%3E")
        texts = page.locator("[data-testid='stText']")
        page.locator("[data-testid='stText']", has_text="END").first.wait_for(timeout=120_000)
        page.wait_for_timeout(1000)  # let any image, script or handler have its chance
        shown = texts.all_inner_texts()
        for field in ("instruction", "reference", "response", "rationale"):
            assert HOSTILE[field] in shown, field  # exactly, character for character
        body = page.locator("body").inner_text()
        assert "judge <i>x</i>" in body and "m<b>1</b>" in body  # names as text too
        assert page.evaluate("() => window.__pwned") is None
        assert page.locator("img[src*='203.0.113'], iframe, a[href*='203.0.113']").count() == 0
        page.screenshot(path=str(ARTIFACTS / "samples-hostile.png"), full_page=True)

        # The Annotate page shows the same texts, unblinded, just as inertly.
        page.goto(f"{url}/annotate?annotator=eve")
        page.get_by_text("0 of 1 answered").wait_for(timeout=120_000)
        page.get_by_text("Blind", exact=True).click()
        page.get_by_text("Other scorers").wait_for(timeout=60_000)
        shown = page.locator("[data-testid='stText']").all_inner_texts()
        for field in ("instruction", "reference", "response"):
            assert HOSTILE[field] in shown, field
        assert "m<b>1</b>" in page.locator("body").inner_text()
        assert page.evaluate("() => window.__pwned") is None
        browser.close()
    assert dialogs == []
    assert requests and all(urlparse(u).hostname == "127.0.0.1" for u in requests), [
        u for u in requests if urlparse(u).hostname != "127.0.0.1"
    ]

"""The browser side of bench/browser.py: a page with an observer that notes when the app is
drawn, and the widget changes a person makes (open a select, pick an option, type a word).

"Drawn": the script run the action started has finished (``data-test-script-state``), nothing
is stale, no spinner is left, every plot on screen has drawn its traces (at least the page's
expected number), every dataframe on screen has its canvas (a collapsed expander's content is
not drawn), and nothing changed in the sidebar or the main area for QUIET_MS. The time taken
is that of the last change, so the quiet window itself is not counted.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

QUIET_MS = 700
TIMEOUT_S = 120
RUN_WAIT_S = 20  # a widget change whose script run was not seen: see Tab.change
SEARCH_WORD = "the"

# Installed before any page script: the time of the last change in the sidebar or main area,
# and how many script runs started (with the first one's start and the last one's end).
OBSERVE = """
window.__lastMut = 0; window.__change = 0; window.__runs = 0;
const inApp = n => { const e = n.nodeType === 1 ? n : n.parentElement;
  return !!(e && e.closest("[data-testid='stMain'], [data-testid='stSidebar']")); };
new MutationObserver(records => {
  for (const r of records) {
    if (r.type === 'attributes' && r.attributeName === 'data-test-script-state') {
      const state = r.target.getAttribute('data-test-script-state');
      if (state === 'running') { window.__runs++; window.__runStart ??= performance.now(); }
      if (state === 'notRunning' && window.__runs) window.__runEnd = performance.now();
    } else if (inApp(r.target)) { window.__lastMut = performance.now(); }
  }
}).observe(document, {subtree: true, childList: true, attributes: true, characterData: true});
"""
DRAWN = """
([expected, runsBefore, quiet]) => {
  const app = document.querySelector("[data-testid='stApp']");
  if (!app || app.getAttribute('data-test-script-state') !== 'notRunning') return false;
  if (runsBefore !== null && window.__runs <= runsBefore) return false;  // null: no run asked
  if (document.querySelector("[data-stale='true'], [data-testid='stSpinner'], "
                             + "[data-testid='stSkeleton']")) return false;
  // What is on screen: a collapsed expander's table or chart is not drawn until it opens.
  const shown = sel => [...document.querySelectorAll(sel)].filter(e => e.checkVisibility());
  const plots = shown('.js-plotly-plot');
  const drawn = p => p._fullLayout && p.querySelector('.main-svg') && (!(p._fullData || []).length
    || p.querySelector('.trace, .point, .heatmaplayer image, .barlayer path, .scatterlayer path'));
  if (plots.length < expected || !plots.every(drawn)) return false;
  if (!shown("[data-testid='stDataFrame']").every(d => d.querySelector('canvas'))) return false;
  return performance.now() - window.__lastMut >= quiet;
}
"""

# What a page that never counts as drawn is waiting for (in the error message).
WHY = """
() => ({
  state: document.querySelector("[data-testid='stApp']")?.getAttribute('data-test-script-state'),
  runs: window.__runs, stale: document.querySelectorAll("[data-stale='true']").length,
  spinners: document.querySelectorAll("[data-testid='stSpinner'], [data-testid='stSkeleton']")
    .length,
  plots: [...document.querySelectorAll('.js-plotly-plot')].map(p => [p.checkVisibility(),
    !!p._fullLayout, (p._fullData || []).length]),
  tables: [...document.querySelectorAll("[data-testid='stDataFrame']")].map(d =>
    [d.checkVisibility(), !!d.querySelector('canvas')]),
  quiet_ms: performance.now() - window.__lastMut,
})
"""


class NotDrawn(RuntimeError):
    """The page did not count as drawn in time (the message says what it was waiting for)."""


class Tab:
    """One browser page with the observer installed; measures navigations and changes."""

    def __init__(self, browser) -> None:
        self.context = browser.new_context(viewport={"width": 1400, "height": 1000})
        self.context.add_init_script(OBSERVE)
        self.page = self.context.new_page()

    def visit(self, url: str, expected: int) -> float:
        """Seconds from the navigation's start to the page drawn."""
        self.page.goto(url, wait_until="commit", timeout=TIMEOUT_S * 1000)
        return self._drawn(expected, runs_before=0) / 1000  # performance.now(): since navigation

    def change(self, action, expected: int) -> float:
        """Seconds from the change (``mark``, just before the click or key that changes the
        widget's value) to the page drawn again.

        A rerun normally shows as a new script run. Under load the browser may draw the
        run's start and end in one go (no "running" state to see), or the click may land
        before the widget listens: after RUN_WAIT_S with no run seen, a widget that shows
        its new value counts as changed once the page is quiet; one that does not is changed
        again (once)."""
        for attempt in (1, 2):
            runs = self.page.evaluate("window.__runs")
            action(self.page)
            try:
                end = self._drawn(expected, runs, RUN_WAIT_S)
            except NotDrawn:
                if action.done(self.page):
                    end = self._drawn(expected, None)
                elif attempt == 2:
                    raise
                else:
                    continue
            return (end - self.page.evaluate("window.__change")) / 1000
        raise AssertionError("unreachable")

    def _drawn(self, expected: int, runs_before: int | None, timeout_s: float = TIMEOUT_S) -> float:
        from playwright.sync_api import TimeoutError as PlaywrightTimeout

        try:
            self.page.wait_for_function(
                DRAWN, arg=[expected, runs_before, QUIET_MS], timeout=timeout_s * 1000, polling=50
            )
        except PlaywrightTimeout:
            state = self.page.evaluate(WHY)
            raise NotDrawn(f"{self.page.url} not drawn in {timeout_s} s: {state}") from None
        return self.page.evaluate("window.__lastMut")

    def plots(self) -> int:
        """The plots on screen."""
        return self.page.evaluate(
            "[...document.querySelectorAll('.js-plotly-plot')].filter(e => e.checkVisibility())"
            ".length"
        )

    def close(self) -> None:
        self.context.close()


# ------------------------------------------------------------------ widget changes
@dataclass(frozen=True)
class Step:
    """A change a person makes (``act``) and how to see that the widget took it (``done``)."""

    act: Callable[[Any], None]
    done: Callable[[Any], bool]

    def __call__(self, page) -> None:
        self.act(page)


def mark(page) -> None:
    """The change starts now: the next click or key sets the widget's new value (opening a
    dropdown before it, or closing it after, changes nothing)."""
    page.evaluate("window.__change = performance.now()")


def _scope(page, where: str):
    return page.locator(f"[data-testid='st{'Sidebar' if where == 'sidebar' else 'Main'}']")


def _box(page, label: str, where: str):
    return _scope(page, where).get_by_role("combobox", name=label, exact=True)


def _tag(page, label: str, where: str, option: str):
    """A multiselect's button that removes the picked ``option`` (absent when not picked)."""
    widget = (
        _scope(page, where)
        .locator("[data-testid='stMultiSelect']")
        .filter(has=page.get_by_role("combobox", name=label, exact=True))
    )
    return widget.get_by_role("button", name=f"Remove {option}", exact=True)


def _options(page) -> list[str]:
    page.get_by_role("option").first.wait_for(timeout=30_000)
    return [t.strip() for t in page.get_by_role("option").all_inner_texts()]


def _choose(label: str, where: str, option: str) -> Step:
    def act(page) -> None:
        _box(page, label, where).click()
        choice = page.get_by_role("option", name=option, exact=True).first
        choice.wait_for()
        mark(page)
        choice.click()

    return Step(act, lambda page: _box(page, label, where).input_value() == option)


def select_steps(page, label: str, where: str, avoid: str | None) -> tuple:
    """(to another option, back to the current one) for a selectbox."""
    box = _box(page, label, where)
    box.click()
    options = _options(page)
    page.keyboard.press("Escape")
    now = box.input_value()  # the input shows the current option's label
    taken = {now, _box(page, avoid, where).input_value() if avoid else now}
    # The last one: the lists open with the groups (all humans, all LLM judges), and a group
    # may be the other side itself (one LLM judge), which draws no chart.
    other = [o for o in options if o not in taken][-1]
    return _choose(label, where, other), _choose(label, where, now)


def multi_steps(page, label: str, where: str, avoid: str | None) -> tuple:
    """(add the first option not yet picked, remove it again) for a multiselect."""
    box = _box(page, label, where)
    box.click()
    option = next(o for o in _options(page) if o != "Select all")  # Streamlit's own entry
    page.keyboard.press("Escape")

    def add(page) -> None:
        _box(page, label, where).click()
        choice = page.get_by_role("option", name=option, exact=True).first
        choice.wait_for()
        mark(page)
        choice.click()
        page.keyboard.press("Escape")

    def remove(page) -> None:
        tag = _tag(page, label, where, option).first
        tag.wait_for()
        mark(page)
        tag.click()  # its own remove button: a key press may land before the box has focus

    def picked(page) -> bool:
        return _tag(page, label, where, option).count() > 0

    return Step(add, picked), Step(remove, lambda page: not picked(page))


def search_steps(page, label: str, where: str, avoid: str | None) -> tuple:
    def typed(text: str) -> Step:
        def act(page) -> None:
            box = page.get_by_role("textbox", name=label, exact=True)
            box.fill(text)
            mark(page)
            box.press("Enter")  # a text input sends its value on Enter

        # Enter was pressed with the text in the box: the app has it.
        box = lambda page: page.get_by_role("textbox", name=label, exact=True)  # noqa: E731
        return Step(act, lambda page: box(page).input_value() == text)

    return typed(SEARCH_WORD), typed("")


STEPS = {"select": select_steps, "multi": multi_steps, "search": search_steps}

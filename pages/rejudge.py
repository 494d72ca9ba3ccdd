"""Re-judge: score a selection of responses again with another judge (backend, model, server,
temperature, prompt and rubric), see the estimate, run with progress and cancel, then compare
before and after, and the change in agreement with human labels on exactly that selection.

Large selections go through the OpenAI Batch API (backend openai-batch): the page waits on the
batch and shows its parts; batch runs whose answers are not stored yet are listed from the
store (so they outlive the session and the app), each to resume or cancel at the service."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import streamlit as st

from analysis.core.errors import FinegrainError
from analysis.views import guidance_work, rejudge, scorers
from judges import plan as judge_plan
from judges.config import Setting, default, page_settings, value_type
from judges.jobs import JudgeJob
from judges.prompts import available_templates
from judges.runner import RunOptions
from pages.common import bind, cached, empty_state, filters, plain, show_error, store

# The form's session keys are rj_<field>, but for these (kept from before: tests set them).
KEYS = {"prompt_version": "rj_prompt", "use_reference": "rj_ref"}
MAX_LIMIT = 50_000  # "by filters", through the batch service (the command line takes any size)
LIVE_MAX = 5_000  # live calls from the page (each prompt is held in the app's memory meanwhile)
LARGE = 1_000  # from here on, the page suggests the batch service (half the price)


def _start(name: str, s: Setting) -> Any:
    """A widget's first value: the backend's variable (the operator's server), nothing for a
    file, the field's default, or the declaration's suggestion for a field without one."""
    if s.env:
        return os.environ.get(s.env, "")
    if s.widget == "file":
        return ""  # empty: the field's default (the store's rubric)
    value = default(name)
    return s.suggest if value is None else value


def _widget(cell: Any, name: str, s: Setting, backend: str | None) -> Any:
    key = KEYS.get(name, f"rj_{name}")
    help_ = s.page_help or f"{s.help[:1].upper()}{s.help[1:]}."
    start = _start(name, s)
    if s.widget == "choice":
        return cell.selectbox(s.label, s.choices, key=key, help=help_)
    if s.widget == "template":
        return cell.selectbox(s.label, available_templates(), key=key, help=help_)
    if s.widget == "toggle":
        return cell.toggle(s.label, value=bool(start), key=key, help=help_)
    if s.widget == "number":
        kind, _ = value_type(name)
        lo, hi, step = (None if b is None else kind(b) for b in (s.min, s.max, s.step))
        return cell.number_input(s.label, lo, hi, kind(start), step, key=key, help=help_)
    disabled = not rejudge.applies(s, backend)
    return cell.text_input(s.label, value=start or "", key=key, disabled=disabled, help=help_)


def _cells(per_row: int = 4) -> Iterator[Any]:
    while True:
        yield from st.columns(per_row)


def judge_form() -> tuple[dict[str, Any], str]:
    """One widget per setting a visitor may choose (judges/config.py declares them), and the
    prompt file that may replace the prompt version. Returns the raw values and that file."""
    values: dict[str, Any] = {}
    prompt_file = ""
    cells = _cells()
    for fld, s in page_settings():
        values[fld.name] = _widget(next(cells), fld.name, s, values.get("backend"))
        if s.widget == "template":
            prompt_file = next(cells).text_input(
                "…or a prompt file",
                key="rj_prompt_file",
                help="In the store's folder: our JSON template, or FLASK's prompt.jsonl#2",
            )
    return values, prompt_file


def _batch_options(concurrency: int) -> RunOptions:
    return RunOptions(concurrency=concurrency, poll_s=float(st.session_state.get("rj_poll_s", 10)))


def _start_job(job: JudgeJob) -> None:
    st.session_state["rj_job"] = job.start()
    st.session_state.pop("rj_cancel_lines", None)


def _cancel_at_service(run_id: str) -> bool:
    """Ask the service to cancel the run's unfinished batches; the lines say what it did."""
    from judges.batch_run import cancel_run  # the batch client (openai SDK) only when used

    try:
        st.session_state["rj_cancel_lines"] = cancel_run(store(), run_id)
    except FinegrainError as e:
        show_error(e)
        return False
    return True


def _resume(run_id: str, *, cancel_first: bool = False) -> None:
    """Tend the batch run in the background (after cancelling it at the service: its answered
    requests are then stored, the rest recorded as failed)."""
    lines = []
    if cancel_first:
        if not _cancel_at_service(run_id):
            return
        lines = st.session_state["rj_cancel_lines"]
    try:
        _start_job(JudgeJob.resuming(store(), run_id, _batch_options(1)))
    except FinegrainError as e:
        show_error(e)
        return
    st.session_state["rj_cancel_lines"] = lines  # shown with the job's progress
    st.rerun()


def pending_section(dataset: str) -> None:
    """Batch runs of this dataset whose answers are not all stored (from the store: they show
    after a restart), each with Resume and Cancel at the service."""
    pending = cached(rejudge.pending_batches)(dataset)
    if not pending.runs:
        return
    job: JudgeJob | None = st.session_state.get("rj_job")
    busy = bool(job and not job.done)
    st.subheader("Batches at the service")
    st.caption(
        "These batch runs have answers not yet stored. Resume waits for the service and stores "
        "them (nothing is sent again); Cancel at the service stops the unfinished requests, "
        "stores what was answered and records the rest as failed."
    )
    st.dataframe(pending.table, hide_index=True, key="rj_pending")
    for run_id, judge in pending.runs:
        row = st.columns([3, 1, 1.4], vertical_alignment="center")
        row[0].text(f"run {run_id} · {judge}")  # a judge's name is the store's text
        if row[1].button("Resume", key=f"rj_resume::{run_id}", disabled=busy):
            _resume(run_id)
        if row[2].button("Cancel at the service", key=f"rj_stop::{run_id}", disabled=busy):
            _resume(run_id, cancel_first=True)


def _batch_progress(j: JudgeJob) -> None:
    p = j.progress
    # A resumed run counts what it still has to store (parts stored before are not in it).
    stored, total = (p.done, p.items) if p else (0, len(j.selection.items))
    st.progress(min(stored / max(total, 1), 1.0), text=f"{stored:,} of {total:,} answers stored")
    if p is None:
        st.caption("Preparing the requests and sending them to the batch service…")
    else:
        st.caption(
            f"{p.pending:,} requests not stored yet, {p.at_service:,} of them answered by the "
            f"service; checked every {j.options.poll_s:g} s"
        )
        st.text("\n".join(p.batches))  # the service's words (batch ids, its errors): text
    for line in st.session_state.get("rj_cancel_lines", []):
        st.text(line)
    left, right = st.columns(2)
    if left.button("Stop waiting", icon=":material/pause:", key="rj_stop_waiting",
                   help="The batch goes on at the service; Resume it below later."):  # fmt: skip
        j.cancel.set()
    if right.button("Cancel the batch", icon=":material/cancel:", key="rj_cancel_batch",
                    disabled=j.run_id is None,
                    help="The service stops its unfinished requests; the answered ones are "
                    "stored when it has."):  # fmt: skip
        # The job holds the run: it stops first, then the run is cancelled and resumed.
        st.session_state["rj_cancel_after"] = j.run_id
        j.cancel.set()


@st.fragment(run_every=0.5)
def _progress() -> None:
    j: JudgeJob | None = st.session_state.get("rj_job")
    if j is None:
        return
    if not j.done:
        if j.batch:
            _batch_progress(j)
            return
        p = j.progress
        done = p.done if p else 0
        st.progress(
            min(done / max(len(j.selection.items), 1), 1.0),
            text=f"{done:,} of {len(j.selection.items):,} responses judged",
        )
        if st.button("Cancel", icon=":material/stop:", key="rj_cancel"):
            j.cancel.set()
        return
    if st.session_state.get("rj_shown") != id(j):
        st.session_state["rj_shown"] = id(j)
        if j.error is None:  # the sidebar shows this judge's scores on every page (app.py)
            st.session_state["judged"] = (j.selection.dataset, j.judge)
        st.rerun()  # the whole page, to show the results below


def results(job: JudgeJob) -> None:
    """A finished job: its summary, then before/after and agreement with the humans."""
    if job.error is not None:
        show_error(job.error)
        return
    report = "\n".join(f"- {plain(line)}" for line in job.summary.lines())
    # Never a success while the run failed or answers wait in the journal (lines() says why);
    # nor a batch left at the service (stopped waiting), nor one whose requests the service
    # did not answer (cancelled, expired, failed: lines() says how to send them again).
    s = job.summary
    warn = s.cancelled or s.pending or (job.batch and s.errors)
    box = st.error if s.incomplete else st.warning if warn else None
    (box or st.success)(report)
    ds = job.selection.dataset
    judges = cached(scorers.scorer_choices)(ds)
    llms = [j for j in judges.options if not j.startswith("kind:") and j != job.judge]
    if not llms:
        st.info("No other judge of this dataset to compare with.")
        return
    before = st.selectbox("Compare with (before)", llms, key=f"rj_before::{ds}")
    result = cached(rejudge.compare)(ds, job.selection.items, before, job.judge)
    st.subheader("Before and after, per sample and skill")
    st.dataframe(
        rejudge.before_after_table(result, before, job.judge), hide_index=True, key="rj_table"
    )
    st.subheader("Agreement with human labels on exactly this selection")
    if result.has_humans and not result.agreement.empty:
        st.dataframe(rejudge.agreement_table(result), hide_index=True, key="rj_agreement")
    else:
        st.caption("No human labels on these responses: annotate them on the Annotate page.")


def job_area() -> None:
    _progress()
    job: JudgeJob | None = st.session_state.get("rj_job")
    if job is not None and job.done:
        after = st.session_state.pop("rj_cancel_after", None)
        if after:  # "Cancel the batch" stopped the job: now cancel at the service, then store
            _resume(after, cancel_first=True)
        results(job)


f = filters()
ds = f.dataset
st.title("Re-judge")
st.caption(
    "Score chosen responses again with another judge. Answers are stored as they arrive and "
    "reused when the same prompt is asked again, so a cancelled or interrupted run can be "
    "finished later without paying twice. API keys come from the environment only."
)
pending_section(ds)

bind("source", f"rj_source::{ds}", rejudge.SOURCES)  # in the URL, like the limit below
source = st.radio(
    "What to re-judge",
    list(rejudge.SOURCES),
    format_func=rejudge.SOURCES.get,
    horizontal=True,
    key=f"rj_source::{ds}",
)
limit = 0
if source == "filters":
    bind("limit", "rj_limit", default=50, valid=lambda n: 1 <= n <= MAX_LIMIT, absent=50)
    limit = st.number_input("At most (by filters)", 1, MAX_LIMIT, key="rj_limit")
items = cached(rejudge.selection)(f, source, int(limit or 50))
if not items:  # an empty queue (fill it, or use the filters), or an empty slice
    empty_state(cached(guidance_work.rejudge_selection)(f, source))
    job_area()  # a resumed batch run's progress and result show all the same
    st.stop()
st.caption(f"{len(items):,} responses selected.")

with st.container(border=True):
    form_values, prompt_file = judge_form()
    c1, c2, c3 = st.columns([1, 1, 2])
    concurrency = c1.number_input("Concurrent calls", 1, 128, 8, key="rj_concurrency")
    c2.number_input(
        "Check batches every (s)", 0.5, 3600.0, 10.0, 1.0, key="rj_poll_s",
        help="How often a batch run (backend openai-batch, or a Resume) asks the service",
    )  # fmt: skip
    key_env = default("api_key_env")
    c3.caption(
        f"API key: ${key_env} is {'set' if os.environ.get(key_env) else 'not set'}; it is sent "
        "only to OpenAI or $OPENAI_BASE_URL, never to another URL typed here."
    )
if form_values["backend"] == "openai" and len(items) >= LARGE:
    st.info(
        f"{len(items):,} responses: the backend openai-batch sends the same prompts through "
        "OpenAI's Batch API, which costs half the price of live calls because the service "
        "answers within 24 hours (often much sooner) instead of at once. The judge, its cache "
        "and its scores are the same; the page waits for the batch, and a batch left waiting "
        "can be resumed later, even after a restart.",
        icon=":material/savings:",
    )

cap = MAX_LIMIT if form_values["backend"] == "openai-batch" else LIVE_MAX
if len(items) > cap:
    st.warning(
        f"{len(items):,} responses selected: the page judges at most {LIVE_MAX:,} with live "
        f"calls and {MAX_LIMIT:,} through the batch service (backend openai-batch). Lower "
        "'At most', or use `finegrain judge` on the command line, which takes any size.",
        icon=":material/warning:",
    )
    job_area()
    st.stop()
try:
    config = rejudge.visitor_config(store(), form_values, prompt_file)
except FinegrainError as e:
    show_error(e)
    st.stop()
st.session_state["rj_config"] = config  # what was built from the form (tests compare it)
selection = judge_plan.Selection(ds, items=items)
estimate = cached(rejudge.estimate)(config, f, source, int(limit or 50), int(concurrency))
st.markdown(f"**Estimate for {plain(config.judge)}**")
st.markdown("\n".join(f"- {plain(line)}" for line in estimate.lines()))

job: JudgeJob | None = st.session_state.get("rj_job")
if st.button(
    "Run", type="primary", icon=":material/play_arrow:", disabled=bool(job and not job.done)
):
    _start_job(JudgeJob(store(), config, selection, _batch_options(int(concurrency))))
job_area()

"""The report's sections made of the store's text: the header with the simulated-data banner,
the provenance (dataset, judges and their settings, filters), the judges' leaderboard and the
exemplar responses. Every value is escaped by ``report_page``'s helpers."""

from __future__ import annotations

from typing import Any

import pandas as pd

from analysis.charts.report_page import pairs, para, pre, table, text
from analysis.views.report_data import Exemplar, ReportData
from analysis.views.sample_detail import facts, score_lines

DATASET_FIELDS = {
    "dataset": "Dataset",
    "title": "Title",
    "source": "Source",
    "imported_at": "Imported",
    "instances": "Instances",
    "models": "Models",
    "responses": "Responses",
    "judges": "Scorers",
    "scores": "Scores (latest)",
    "description": "Description",
}
JUDGE_HEADERS = {
    "judge": "Scorer",
    "kind": "Kind",
    "backend": "Backend",
    "model": "Model",
    "prompt_version": "Prompt version",
    "params": "Settings",
    "scores": "Scores",
    "models": "Models scored",
}


def no_scores(data: ReportData, what: str) -> str:
    """Why a part is empty, and the next step."""
    if not data.filters.judge:
        return (
            f"No judge has scored this dataset yet: {what}. Import scores (`finegrain "
            "import-scores FILE`) or run a judge (`finegrain judge …`), then make the report "
            "again."
        )
    return f"No scores from {data.filters.judge} match this view's filters: {what}."


def header(data: ReportData) -> str:
    prov = data.provenance
    title = prov.dataset.get("title") or data.filters.dataset
    out = [
        f"<header><h1>Finegrain report: {text(title)}</h1>",
        para(f"Generated {data.generated_at:%Y-%m-%d %H:%M} UTC from dataset "
             f"'{data.filters.dataset}' (source: {prov.dataset.get('source')}).", "meta"),
        "</header>",
    ]  # fmt: skip
    if prov.simulated:
        seed = prov.dataset.get("seed")
        seed_text = "" if seed is None or pd.isna(seed) else f" (seed {int(seed)})"
        out.append(
            '<div class="simulated" role="alert"><strong>SIMULATED DATA</strong>'
            + para(
                f"Every score in this report is simulated{seed_text}: generated to look like "
                "the FLASK paper's figures. They are not real model or human judgments."
            )
            + "</div>"
        )
    return "".join(out)


def provenance_section(data: ReportData) -> str:
    prov = data.provenance
    rows = [(name, prov.dataset.get(key)) for key, name in DATASET_FIELDS.items()]
    rows.append(("Simulated", "yes" if prov.simulated else "no"))
    rows = [(k, _when(v)) for k, v in rows]
    judges = prov.judges.rename(columns=JUDGE_HEADERS)
    return "".join(
        [
            "<h3>Dataset</h3>",
            pairs(rows),
            "<h3>Scorers and their settings</h3>",
            para(
                "From the store's judges table: backend, model, prompt version and parameters "
                "(never an API key; any setting named like a credential is hidden).",
                "caption",
            ),
            table(judges) if not judges.empty else para("No scores in this dataset yet.", "note"),
            "<h3>Filters applied</h3>",
            pairs(prov.filters),
        ]
    )


def _when(value: Any) -> Any:
    if isinstance(value, pd.Timestamp):
        return f"{value:%Y-%m-%d %H:%M}"
    return value


def exemplars_section(data: ReportData) -> str:
    if not data.exemplars:
        return para(no_scores(data, "no exemplar responses"), "note")
    out = [
        para(
            f"Per skill, the response the judge ({data.filters.judge}) scored highest and the "
            "one it scored lowest in this view (ties: the first by instance and model), with "
            "the instruction and every scorer's scores and rationale. Shown as plain text, "
            "exactly as stored.",
            "caption",
        )
    ]
    skill = None
    for ex in data.exemplars:
        if ex.skill != skill:
            if skill is not None:
                out.append("</div>")
            skill = ex.skill
            out.append(f'<div class="skill"><h3>{text(ex.label)}</h3>')
        out.append(_exemplar(ex))
    out.append("</div>")
    return "".join(out)


def _exemplar(ex: Exemplar) -> str:
    s = ex.sample
    which = "Highest" if ex.which == "best" else "Lowest"
    head = f"{which} scored: {ex.score:g} · model {s.model} · instance {s.instance_id} · {facts(s)}"
    parts = [
        f'<div class="exemplar" data-which="{text(ex.which)}">',
        f'<div class="head">{text(head)}</div>',
        '<div class="label">Instruction</div>',
        pre(s.instruction),
        '<div class="label">Reference answer</div>',
        pre(s.reference),
        '<div class="label">Response</div>',
        pre(s.response, "(no response stored)"),
    ]
    for view in s.judges:
        parts.append(f"<h4>{text(view.judge)} ({text(view.kind)})</h4>")
        parts.append(pre(score_lines(view)))
        parts.append('<div class="label">Rationale</div>')
        parts.append(pre(view.rationale, "(no rationale stored)"))
    parts.append("</div>")
    return "".join(parts)

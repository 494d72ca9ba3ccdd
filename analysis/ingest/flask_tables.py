"""The FLASK batch's tables, built from what flask_files parsed: instances and responses as
Arrow tables made from columns (the writer hands them to DuckDB as they are: no pandas frame
of Python objects in between), judgments and scores as pandas frames (the writer filters them
by run), and the import report's counts.
"""

from __future__ import annotations

import pandas as pd
import pyarrow as pa

from analysis.core.writer import JUDGMENT_COLS, SCORE_COLS, Batch

INSTANCES_SCHEMA = pa.schema(
    [("dataset", pa.string()), ("instance_id", pa.string()), ("instruction", pa.string()),
     ("reference", pa.string()), ("source_task", pa.string()), ("difficulty", pa.int8()),
     ("domains", pa.list_(pa.string())), ("skills", pa.list_(pa.string())),
     ("flask_hard", pa.bool_())]
)  # fmt: skip


def _columns(chunks: list[tuple[str, list, list]]) -> tuple[list, list, list]:
    """(instance ids, models, texts) of the responses, each (model, instance) once: the first
    wins (the model's output file is read before the review file that repeats it as
    target_txt). A chunk (one file) never repeats an instance, so only a model with two
    chunks needs the check."""
    ids = [iid for _, chunk, _ in chunks for iid in chunk]
    models = [model for model, chunk, _ in chunks for _ in chunk]
    texts = [text for _, _, chunk in chunks for text in chunk]
    if len({model for model, _, _ in chunks}) == len(chunks):
        return ids, models, texts
    seen: set = set()
    keys = zip(models, ids, strict=True)
    keep = [i for i, k in enumerate(keys) if not (k in seen or seen.add(k))]
    return [ids[i] for i in keep], [models[i] for i in keep], [texts[i] for i in keep]


def assemble(
    batch: Batch, full: dict, hard: dict, responses: list, judgments: list, scores: list
) -> None:
    """The batch's tables. Instances and responses are Arrow tables built from columns (the
    writer hands them to DuckDB as they are); judgments and scores stay pandas frames."""
    by_text = {row[1]: iid for iid, row in full.items()}
    hard_match = {hid: by_text.get(row[1]) for hid, row in hard.items()}
    matched = {m for m in hard_match.values() if m}
    rows = [("flask", *row, row[0] in matched) for row in full.values()] + [
        ("flask-hard", *row, True) for row in hard.values()
    ]
    columns = list(zip(*rows, strict=True))
    batch.instances = pa.Table.from_arrays(
        [pa.array(c, type=f.type) for c, f in zip(columns, INSTANCES_SCHEMA, strict=True)],
        schema=INSTANCES_SCHEMA,
    )
    ids, models, texts = _columns(responses)
    # FLASK-Hard reuses the full set's responses: same instruction, same answers.
    hard_of: dict[str, list[str]] = {}
    for hid, fid in hard_match.items():
        if fid:
            hard_of.setdefault(fid, []).append(hid)
    shared = [(hid, i) for i, iid in enumerate(ids) if iid in hard_of for hid in hard_of[iid]]
    batch.responses = pa.table(
        {
            "dataset": ["flask"] * len(ids) + ["flask-hard"] * len(shared),
            "instance_id": ids + [hid for hid, _ in shared],
            "model": models + [models[i] for _, i in shared],
            "text": texts + [texts[i] for _, i in shared],
        }
    )
    batch.judgments = pd.DataFrame(judgments, columns=JUDGMENT_COLS)
    batch.scores = pd.DataFrame(scores, columns=SCORE_COLS)
    n_models = len(set(models))
    report = batch.report
    report.missing_responses = len(full) * n_models - len(ids)
    report.parse_failures = sum(j[7] != "ok" for j in judgments)
    report.counts = {
        "FLASK instances": len(full),
        "FLASK-Hard instances": len(hard),
        "models": n_models,
        "responses": len(ids),
        "FLASK-Hard responses (shared with the full set)": len(shared),
        "judge scores": len(batch.scores),
    }
    report.notes.append(
        f"FLASK-Hard: {len(matched)} of {len(hard)} instructions found in the "
        "full set (flagged there for the FLASK-Hard filter)"
    )

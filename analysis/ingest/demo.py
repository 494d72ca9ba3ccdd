"""The simulated demo: a FLASK-shaped dataset built from a seed alone, so a fresh clone has data.

Shape: 1,740 instructions with the real set's mix of skills (3 each), domains, difficulty levels
and source tasks (counts below, taken from FLASK's evaluation_set/flask_evaluation.jsonl), 89 of
the expert-level ones flagged FLASK-Hard; 8 models; one simulated GPT-4 judge on everything and
3 simulated annotators on 200 instances × all 8 models (8 rather than the paper's 4: more pairs
and 8 model means for the system-level correlation; the 200 are stratified so every skill has
~45 of them, where a random draw leaves rare skills ~17 and their α unreadable).

Scores come from a latent quality model. Per (instance, model, skill) the true quality is
``σ_T·Z_T`` (an instance effect, a response effect shared by the response's skills, and a
skill-specific part); the judge sees it plus noise ``σ_J·Z_J``, each annotator plus ``σ_H·Z_r``
and its own leniency; scores are the latent rounded and clipped to 1..5. Locations are solved
exactly (normal CDF of the rounding bins) so each model's expected judge mean per skill equals
the paper's Table 9 figure, and on the FLASK-Hard instances its Table 10 figure. The noise
shares per skill were calibrated by simulation (``_NOISE``) so the annotators' Krippendorff α
(interval) and the human-mean-vs-judge Pearson per skill land on the paper's Table 2.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from analysis.core.errors import InputError
from analysis.core.store import Store
from analysis.core.taxonomy import DIFFICULTY_LEVELS, SKILL_ORDER, SKILLS
from analysis.core.writer import (
    INSTANCE_COLS,
    JUDGMENT_COLS,
    RESPONSE_COLS,
    SCORE_COLS,
    Batch,
    DatasetRecord,
    ImportReport,
    JudgeRecord,
    RunRecord,
    write_batch,
)
from analysis.ingest.demo_model import (
    ANNOTATORS,
    MODELS,
    N_HUMAN_INSTANCES,
    human_subset,
    response_lengths,
    simulate_instances,
    simulate_scores,
)

# Work a user added to a dataset (annotations, judging runs): runs the demo did not write.
USER_RUNS_OF_DATASET = """
SELECT r.judge, count(DISTINCT j.judgment_id) AS judgments
FROM runs r JOIN judgments j USING (run_id)
WHERE r.dataset = ? AND NOT starts_with(r.run_id, ?)
GROUP BY r.judge ORDER BY r.judge
"""


DEMO_DATASET = "demo"
DEFAULT_SEED = 20231
JUDGE = "gpt-4 (simulated)"


_PARSE_FAIL = 0.005
_FILLER = ("This simulated response stands in for a real model answer; its length and scores "
           "are drawn from a model of FLASK's published results. ")  # fmt: skip


def _instance_frame(inst: pd.DataFrame) -> pd.DataFrame:
    labels = np.array([SKILLS[s].label for s in SKILL_ORDER])
    rows = []
    for iid, sk, doms, level, task in inst[
        ["instance_id", "skill_idx", "domains", "level", "source_task"]
    ].itertuples(index=False):
        where = ", ".join(doms) or "no domain"
        need = ", ".join(labels[sk]).lower()
        lvl = DIFFICULTY_LEVELS.get(level, "unlabeled difficulty")
        rows.append((f"[simulated] Instruction {iid} ({where}; {lvl}): a {task}-style request "
                     f"that calls for {need}. Not a real instruction: demo data.",
                     f"[simulated] Reference answer to instruction {iid}."))  # fmt: skip
    text, ref = zip(*rows, strict=True)
    return pd.DataFrame({
        "dataset": DEMO_DATASET, "instance_id": inst["instance_id"], "instruction": text,
        "reference": ref, "source_task": inst["source_task"],
        "difficulty": inst["level"].astype("Int64").mask(inst["level"] == 0),
        "domains": inst["domains"], "skills": [list(np.array(SKILL_ORDER)[s])
                                               for s in inst["skill_idx"]],
        "flask_hard": inst["flask_hard"],
    })[INSTANCE_COLS]  # fmt: skip


def _response_frame(ids: np.ndarray, lengths: np.ndarray) -> pd.DataFrame:
    filler = _FILLER * (int(lengths.max()) // len(_FILLER) + 1)
    iid, model = np.repeat(ids, len(MODELS)), np.tile(MODELS, len(ids))
    text = [(h := f"[simulated] Answer of {m} to instruction {i}. ") + filler[: max(n - len(h), 0)]
            for i, m, n in zip(iid, model, lengths.ravel(), strict=True)]  # fmt: skip
    return pd.DataFrame({"dataset": DEMO_DATASET, "instance_id": iid, "model": model,
                         "text": text})[RESPONSE_COLS]  # fmt: skip


def _score_json(keys: np.ndarray, vals: np.ndarray) -> list[str]:
    """One FLASK-style scores object per row: lower-case skill names, "N/A" for N/A."""
    out = [{k: ("N/A" if np.isnan(v) else int(v)) for k, v in zip(ks, vs, strict=True)}
           for ks, vs in zip(keys, vals, strict=True)]  # fmt: skip
    return [json.dumps(o) for o in out]


def _long_scores(run_id: str, judge: str, ids: np.ndarray, sk: np.ndarray, vals: np.ndarray,
                 keep: np.ndarray) -> pd.DataFrame:  # fmt: skip
    """(instances, models, 3) scores → SCORE_COLS rows for the judgments in ``keep``."""
    n, m, _ = vals.shape
    frame = pd.DataFrame({
        "run_id": run_id, "dataset": DEMO_DATASET,
        "instance_id": np.repeat(ids, m * 3), "model": np.tile(np.repeat(MODELS, 3), n),
        "judge": judge, "skill": np.array(SKILL_ORDER)[np.repeat(sk, m, axis=0)].ravel(),
        "score": vals.ravel(),
    })  # fmt: skip
    return frame[np.repeat(keep.ravel(), 3)][SCORE_COLS]


def _judge_frames(seed: int, rng: np.random.Generator, inst: pd.DataFrame, judge: np.ndarray,
                  lengths: np.ndarray) -> tuple[pd.DataFrame, pd.DataFrame, RunRecord]:  # fmt: skip
    run_id = f"demo-{seed}-{JUDGE}"
    n, m = len(inst), len(MODELS)
    ids = inst["instance_id"].to_numpy()
    sk = np.stack(inst["skill_idx"].to_numpy())
    labels = np.array([SKILLS[s].label.lower() for s in SKILL_ORDER])[sk]  # (N, 3)
    flat = judge.reshape(n * m, 3)
    best = np.argmax(np.nan_to_num(flat, nan=-1), 1)
    worst = np.argmin(np.nan_to_num(flat, nan=9), 1)
    lab = np.repeat(labels, m, axis=0)
    rows = np.arange(n * m)
    rationale = [f"[simulated] Feedback: strongest on {b}, weakest on {w}."
                 for b, w in zip(lab[rows, best], lab[rows, worst], strict=True)]  # fmt: skip
    failed = rng.random(n * m) < _PARSE_FAIL
    blobs = _score_json(lab, flat)
    raw = [f"{r}\n{'(output cut off before the scores)' if f else b}"
           for r, b, f in zip(rationale, blobs, failed, strict=True)]  # fmt: skip
    prompt_tokens = 750 + lengths.ravel() // 4
    completion_tokens = 90 + rng.integers(0, 120, n * m)
    judgments = pd.DataFrame({
        "run_id": run_id, "dataset": DEMO_DATASET, "instance_id": np.repeat(ids, m),
        "model": np.tile(MODELS, n), "judge": JUDGE, "raw_output": raw,
        "rationale": np.where(failed, None, rationale),
        "parse_status": np.where(failed, "failed", "ok"),
        "error": np.where(failed, "no scores object in the judge output", None),
        "latency_ms": np.rint(rng.lognormal(np.log(6000), 0.4, n * m)),
        "prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
    })[JUDGMENT_COLS]  # fmt: skip
    scores = _long_scores(run_id, JUDGE, ids, sk, judge, ~failed.reshape(n, m))
    run = RunRecord(run_id, JUDGE, DEMO_DATASET, f"simulated (seed {seed})", n * m,
                    int((~failed).sum()), int(failed.sum()), int(prompt_tokens.sum()),
                    int(completion_tokens.sum()))  # fmt: skip
    return judgments, scores, run


def _human_frames(
    seed: int, rng: np.random.Generator, inst: pd.DataFrame, human: np.ndarray, humans: np.ndarray
) -> tuple[pd.DataFrame, pd.DataFrame, list[RunRecord]]:
    ids = inst["instance_id"].to_numpy()[human]
    sk = np.stack(inst["skill_idx"].to_numpy())[human]
    labels = np.array([SKILLS[s].label.lower() for s in SKILL_ORDER])[sk]
    m = len(MODELS)
    judgments, scores, runs = [], [], []
    for r, name in enumerate(ANNOTATORS):
        run_id = f"demo-{seed}-{name}"
        vals = humans[r]
        judgments.append(pd.DataFrame({
            "run_id": run_id, "dataset": DEMO_DATASET, "instance_id": np.repeat(ids, m),
            "model": np.tile(MODELS, len(ids)), "judge": name,
            "raw_output": _score_json(np.repeat(labels, m, axis=0), vals.reshape(-1, 3)),
            "rationale": None, "parse_status": "ok", "error": None,
            "latency_ms": np.rint(rng.lognormal(np.log(90_000), 0.5, len(ids) * m)),
            "prompt_tokens": None, "completion_tokens": None,
        })[JUDGMENT_COLS])  # fmt: skip
        scores.append(_long_scores(run_id, name, ids, sk, vals, np.ones((len(ids), m), bool)))
        runs.append(RunRecord(run_id, name, DEMO_DATASET, f"simulated (seed {seed})",
                              len(ids) * m, len(ids) * m, 0))  # fmt: skip
    return pd.concat(judgments, ignore_index=True), pd.concat(scores, ignore_index=True), runs


def build_demo(seed: int = DEFAULT_SEED, human_instances: int = N_HUMAN_INSTANCES) -> Batch:
    """The whole demo as a Batch; a pure function of ``seed`` (nothing is read but our own
    published-figures file)."""
    rng = np.random.default_rng(seed)
    inst = simulate_instances(rng)
    human = human_subset(rng, inst, human_instances)
    sim = simulate_scores(rng, inst, human)
    lengths = response_lengths(inst, sim["resp_eff"], sim["length_eff"], rng)
    j_judg, j_scores, j_run = _judge_frames(seed, rng, inst, sim["judge"], lengths)
    h_judg, h_scores, h_runs = _human_frames(seed, rng, inst, human, sim["humans"])
    batch = Batch(
        datasets=[DatasetRecord(
            DEMO_DATASET, "Simulated demo", f"simulated (seed {seed})", simulated=True,
            seed=seed, description=(
                f"Simulated, not real model output: {len(inst):,} FLASK-shaped instructions, "
                f"{len(MODELS)} models, a simulated GPT-4 judge on all responses and "
                f"{len(ANNOTATORS)} simulated annotators on {human_instances} instances; "
                "skill means follow the FLASK paper (Ye et al., ICLR 2024, Tables 9-10)."))],
        instances=_instance_frame(inst),
        responses=_response_frame(inst["instance_id"].to_numpy(), lengths),
        judges=[JudgeRecord(JUDGE, "llm", "simulation", "gpt-4", "flask-skill-specific",
                            {"simulated": True, "seed": seed})]
        + [JudgeRecord(a, "human", "simulation", params={"simulated": True, "seed": seed})
           for a in ANNOTATORS],
        runs=[j_run, *h_runs],
        judgments=pd.concat([j_judg, h_judg], ignore_index=True),
        scores=pd.concat([j_scores, h_scores], ignore_index=True),
        mode="replace",
        replace_datasets=True,
    )  # fmt: skip
    batch.report.parse_failures = j_run.n_failed
    batch.report.counts = {
        "instances": len(inst), "FLASK-Hard instances": int(inst["flask_hard"].sum()),
        "models": len(MODELS), "responses": len(batch.responses),
        "judgments": len(batch.judgments), "scores": len(batch.scores),
        "judge scores": len(j_scores), "human scores": len(h_scores),
    }  # fmt: skip
    batch.report.notes.append(f"simulated data (seed {seed}); rebuilt from scratch")
    return batch


def user_work(store: Store) -> list[tuple[str, int]]:
    """(judge, judgments) a user added to the demo dataset: annotations, judging runs."""
    if not store.exists():
        return []
    store.ensure()
    with store.read() as con:
        return con.execute(USER_RUNS_OF_DATASET, [DEMO_DATASET, "demo-"]).fetchall()


def build_and_write_demo(
    store: Store, seed: int = DEFAULT_SEED, *, force: bool = False
) -> ImportReport:
    """(Re)build the demo dataset in ``store``: its old rows go, in the same transaction.

    Refuses, unless ``force``, when a user's own work (annotations, judging runs) would go too.
    """
    work = [] if force else user_work(store)
    if work:
        who = ", ".join(f"{judge} ({n} judgments)" for judge, n in work)
        raise InputError(
            "demo", None, None,
            f"rebuilding the demo would delete work added to it: {who}. Export it first, or "
            "rebuild with --force to delete it.",
        )  # fmt: skip
    return write_batch(store, build_demo(seed), source=f"simulated demo (seed {seed})")

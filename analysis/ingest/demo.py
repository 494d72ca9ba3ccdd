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

Texts (``demo_texts``) are written from templates after the scores: instructions and reference
answers for each instance's genre, topic, difficulty and skills, responses whose flaws follow
the judge's scores and whose lengths follow the simulated ones, and FLASK-style rationales.
Every one starts with "[simulated] ".
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from analysis.core.errors import InputError
from analysis.core.store import Store
from analysis.core.taxonomy import SKILL_ORDER, SKILLS
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
from analysis.ingest.demo_texts import DemoTexts, build_texts

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


def _instance_frame(inst: pd.DataFrame, texts: DemoTexts) -> pd.DataFrame:
    return pd.DataFrame({
        "dataset": DEMO_DATASET, "instance_id": inst["instance_id"],
        "instruction": texts.instructions, "reference": texts.references,
        "source_task": inst["source_task"],
        "difficulty": inst["level"].astype("Int64").mask(inst["level"] == 0),
        "domains": inst["domains"], "skills": [list(np.array(SKILL_ORDER)[s])
                                               for s in inst["skill_idx"]],
        "flask_hard": inst["flask_hard"],
    })[INSTANCE_COLS]  # fmt: skip


def _response_frame(ids: np.ndarray, texts: DemoTexts) -> pd.DataFrame:
    return pd.DataFrame({"dataset": DEMO_DATASET, "instance_id": np.repeat(ids, len(MODELS)),
                         "model": np.tile(MODELS, len(ids)),
                         "text": texts.responses})[RESPONSE_COLS]  # fmt: skip


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
                  texts: DemoTexts) -> tuple[pd.DataFrame, pd.DataFrame, RunRecord]:  # fmt: skip
    run_id = f"demo-{seed}-{JUDGE}"
    n, m = len(inst), len(MODELS)
    ids = inst["instance_id"].to_numpy()
    sk = np.stack(inst["skill_idx"].to_numpy())
    labels = np.array([SKILLS[s].label.lower() for s in SKILL_ORDER])[sk]  # (N, 3)
    lab = np.repeat(labels, m, axis=0)
    failed = rng.random(n * m) < _PARSE_FAIL
    blobs = _score_json(lab, judge.reshape(n * m, 3))
    raw = [f"{r}\n{'(output cut off before the scores)' if f else b}"
           for r, b, f in zip(texts.rationales, blobs, failed, strict=True)]  # fmt: skip
    # The judge reads the rubric and instruction (~750 tokens) and the response (~4 chars each).
    prompt_tokens = 750 + np.array([len(t) for t in texts.responses]) // 4
    completion_tokens = 90 + rng.integers(0, 120, n * m)
    judgments = pd.DataFrame({
        "run_id": run_id, "dataset": DEMO_DATASET, "instance_id": np.repeat(ids, m),
        "model": np.tile(MODELS, n), "judge": JUDGE, "raw_output": raw,
        "rationale": np.where(failed, None, texts.rationales),
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
    # Texts draw on their own generator (seeded from ``seed``), never on ``rng``: the scores
    # and everything else drawn from ``rng`` stay what they were before texts existed.
    texts = build_texts(inst, sim["judge"], lengths, MODELS, seed)
    j_judg, j_scores, j_run = _judge_frames(seed, rng, inst, sim["judge"], texts)
    h_judg, h_scores, h_runs = _human_frames(seed, rng, inst, human, sim["humans"])
    batch = Batch(
        datasets=[DatasetRecord(
            DEMO_DATASET, "Simulated demo", f"simulated (seed {seed})", simulated=True,
            seed=seed, description=(
                f"Simulated, not real model output: {len(inst):,} FLASK-shaped instructions "
                "written from templates, "
                f"{len(MODELS)} models, a simulated GPT-4 judge on all responses and "
                f"{len(ANNOTATORS)} simulated annotators on {human_instances} instances; "
                "skill means follow the FLASK paper (Ye et al., ICLR 2024, Tables 9-10)."))],
        instances=_instance_frame(inst, texts),
        responses=_response_frame(inst["instance_id"].to_numpy(), texts),
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

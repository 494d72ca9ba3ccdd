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
from scipy.special import ndtr

from analysis import queries
from analysis.batch import (
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
from analysis.errors import InputError
from analysis.published import published_skill_scores
from analysis.store import Store
from analysis.taxonomy import DIFFICULTY_LEVELS, SKILL_ORDER, SKILLS

DEMO_DATASET = "demo"
DEFAULT_SEED = 20231
MODELS = ("vicuna_13b", "wizardlm_13b", "tulu_65b", "llama2_chat_70b",
          "chatgpt", "bard", "claude_v1", "gpt4")  # fmt: skip
JUDGE = "gpt-4 (simulated)"
ANNOTATORS = ("annotator_1", "annotator_2", "annotator_3")
N_HUMAN_INSTANCES = 200
_HUMAN_MIN_PER_SKILL = 45

# Counts in the real evaluation set. One real instance has 2 skills; every demo instance has 3,
# so comprehension carries the extra slot (1168 → 1169) to keep the total at 3 × 1,740.
SKILL_COUNTS = {
    "comprehension": 1169, "commonsense": 711, "factuality": 617, "correctness": 488,
    "completeness": 460, "readability": 450, "conciseness": 326, "insightfulness": 298,
    "robustness": 224, "efficiency": 182, "metacognition": 150, "harmlessness": 145,
}  # fmt: skip
DOMAIN_COUNTS = {
    "Culture": 391, "Humanities": 363, "Technology": 280, "Social Science": 278,
    "Language": 232, "Math": 230, "Coding": 207, "Natural Science": 172, "Health": 121,
    "History": 89,
}  # fmt: skip
DOMAINS_PER_INSTANCE = {0: 3, 1: 1111, 2: 626}  # sums to 2,363 labels = sum of DOMAIN_COUNTS
LEVEL_COUNTS = {1: 388, 2: 278, 3: 444, 4: 442, 5: 186, 0: 2}  # 0 = unlabeled (NULL)
# Source tasks: the big ones as in FLASK, BIG-bench / Inverse Scaling / ETHICS subtasks merged,
# 9-instance datasets kept by name, and the long tail of smaller ones pooled.
TASK_COUNTS = {
    "Self-instruct": 252, "Bigbench": 222, "Wizardlm": 216, "Koala": 176,
    "Inverse scaling prize": 82, "Vicuna": 80, "Mmlu": 57, "Ethics": 36, "Bbh": 26,
    "Leetcode": 20, "jailbreak_llms": 20, "theoremqa": 20, "Bbq": 11, "Commonsenseqa 2.0": 10,
    "Cicero": 10, "Conditionalqa": 10, "Gsm8k": 9, "Hotpotqa": 9, "Fever": 9, "Mbpp": 9,
    "Piqa": 9, "Finqa": 9, "Hh-rlhf": 9, "Prosocialdialog": 9, "Folio": 9, "Humaneval": 8,
    "Strategyqa": 8, "Truthfulqa": 7, "Saycan": 9, "Textbookqa": 9, "Fetaqa": 9, "Cola": 9,
    "Faviq": 9, "Contractnli": 9, "Hades": 9, "Delta-nli": 9, "Timedial": 9, "Prm800k": 9,
    "Soda": 9, "Haiku generation": 9, "Asqa": 9, "Shp": 9, "Scone": 9, "Cosqa": 9, "Romqa": 9,
    "Concode": 9, "E-care": 9, "Fairytaleqa": 9, "Hhh-alignment": 9, "Agieval - math": 9,
    "Other academic datasets": 190,
}  # fmt: skip
N_INSTANCES = sum(TASK_COUNTS.values())  # 1,740
N_HARD = 89  # FLASK-Hard: expert-level instances

# Per skill: (ψ = share of the judge's latent variance that is true quality, annotator noise
# SD σ_H). Calibrated offline: simulate annotators on all 1,740 instances (4 seeds), bisect on
# σ_H to hit Table 2's α and on ψ to hit its Pearson. Rounding to integers, ceilings at 5,
# leniency and N/A all lower both figures; the simulation includes them.
_JUDGE_SD = 1.1
_NOISE = {
    "robustness": (0.70, 1.01), "correctness": (0.93, 0.66), "efficiency": (0.37, 0.92),
    "factuality": (0.87, 1.18), "commonsense": (0.90, 0.90), "comprehension": (0.61, 1.34),
    "insightfulness": (0.50, 1.10), "completeness": (0.63, 0.92), "metacognition": (0.93, 0.91),
    "readability": (0.24, 1.45), "conciseness": (0.42, 1.23), "harmlessness": (0.87, 0.83),
}  # fmt: skip
# N/A rate per skill: mostly "the skill does not apply here" (shared by all raters).
_NA_RATE = {"metacognition": 0.12, "harmlessness": 0.10, "insightfulness": 0.04,
            "efficiency": 0.04, "conciseness": 0.02}  # fmt: skip
_NA_DEFAULT = 0.01
_PARSE_FAIL = 0.005
_LEVEL_OFFSET = np.array([0.0, 0.3, 0.15, 0.0, -0.15, -0.3])  # index = level, 0 = unlabeled
_LENIENCY = np.array([-0.25, -0.10, 0.05])  # per annotator; humans a little harsher than GPT-4
_SELF_PREFERENCE = 0.15  # the judge rates gpt4's answers this much above what humans see
_LENGTH_BIAS = 0.35  # share of the judge's noise that tracks response length
_TRUE_PARTS = np.sqrt([0.25, 0.5, 0.25])  # instance, response, skill-specific variance shares
_FILLER = ("This simulated response stands in for a real model answer; its length and scores "
           "are drawn from a model of FLASK's published results. ")  # fmt: skip


def _allocate(rng: np.random.Generator, counts: np.ndarray, per_row: np.ndarray) -> np.ndarray:
    """Rows × categories 0/1 matrix with exact column totals ``counts`` and row totals ``per_row``.

    Row by row, systematic (Madow) sampling in integers with inclusion probability
    k·left_c / Σ left: exact totals, no category twice in a row (rows needing more picks go
    first, so no category ever needs more than one slot per remaining row).
    """
    left = np.asarray(counts, np.int64).copy()
    out = np.zeros((len(per_row), len(left)), bool)
    for row in np.argsort(-per_row, kind="stable"):
        k = int(per_row[row])
        if k == 0:
            continue
        total = int(left.sum())
        perm = rng.permutation(len(left))
        cum = np.cumsum(left[perm] * k)
        points = int(rng.integers(total)) + total * np.arange(k)
        picks = perm[np.searchsorted(cum, points, side="right")]
        out[row, picks] = True
        left[picks] -= 1
    return out


def _multiset(rng: np.random.Generator, counts: dict) -> np.ndarray:
    return rng.permutation(np.repeat(list(counts), list(counts.values())))


def _instances(rng: np.random.Generator) -> pd.DataFrame:
    n = N_INSTANCES
    skill_mat = _allocate(rng, np.array([SKILL_COUNTS[s] for s in SKILL_ORDER]), np.full(n, 3))
    n_dom = _multiset(rng, DOMAINS_PER_INSTANCE)
    dom_mat = _allocate(rng, np.array(list(DOMAIN_COUNTS.values())), n_dom)
    level = _multiset(rng, LEVEL_COUNTS).astype(int)
    hard = np.zeros(n, bool)
    hard[rng.choice(np.flatnonzero(level == 5), N_HARD, replace=False)] = True
    dom_names = np.array(list(DOMAIN_COUNTS))
    return pd.DataFrame({
        "instance_id": [str(i) for i in range(1, n + 1)],
        "skill_idx": list(np.nonzero(skill_mat)[1].reshape(n, 3)),
        "domains": [list(dom_names[row]) for row in dom_mat],
        "level": level,
        "source_task": _multiset(rng, TASK_COUNTS),
        "flask_hard": hard,
    })  # fmt: skip


def _human_subset(rng: np.random.Generator, inst: pd.DataFrame, size: int) -> np.ndarray:
    """``size`` instances for the annotators with at least ``_HUMAN_MIN_PER_SKILL`` per skill
    where possible: a random 200 gives rare skills (harmlessness, metacognition) ~17 instances
    and a per-skill α too noisy to read. Greedy: take a random instance among those covering
    the most skills still short, then fill up at random."""
    has = np.zeros((len(inst), 12), bool)
    has[np.arange(len(inst))[:, None], np.stack(inst["skill_idx"].to_numpy())] = True
    left = np.ones(len(inst), bool)
    short = np.full(12, min(_HUMAN_MIN_PER_SKILL, size // 4))
    for _ in range(size):
        gain = np.where(left, has[:, short > 0].sum(1), 0)
        if gain.max() == 0:
            break
        pick = rng.choice(np.flatnonzero(gain == gain.max()))
        left[pick], short = False, short - has[pick]
    rest = rng.permutation(np.flatnonzero(left))[: size - (~left).sum()]
    left[rest] = False
    return np.flatnonzero(~left)


def _expected_score(loc: np.ndarray, sd: np.ndarray) -> np.ndarray:
    """E[clip(round(N(loc, sd²)), 1, 5)] = 1 + Σ P(latent > bin edge)."""
    return 1 + sum(ndtr((loc - edge) / sd) for edge in (1.5, 2.5, 3.5, 4.5))


def _solve(target: np.ndarray, sd: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Location (models × skills) whose expected score, averaged over levels, is ``target``."""
    target = np.clip(target, 1.03, 4.97)  # 1.00 / 5.00 would need an infinite location
    lo, hi = np.full(target.shape, -6.0), np.full(target.shape, 14.0)
    for _ in range(40):
        mid = (lo + hi) / 2
        e = (weights * _expected_score(mid[..., None] + _LEVEL_OFFSET, sd[:, None])).sum(-1)
        lo, hi = np.where(e < target, mid, lo), np.where(e < target, hi, mid)
    return (lo + hi) / 2


def _targets(inst: pd.DataFrame, shift: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Target means (2 = [other, hard], models, skills) and each skill's level mix (other)."""
    pub = published_skill_scores()
    table = {sub: g.pivot(index="model_id", columns="skill", values="mean_score")
             .loc[list(MODELS), list(SKILL_ORDER)].to_numpy() - shift[:, None]
             for sub, g in pub.groupby("subset")}  # fmt: skip
    sk = np.stack(inst["skill_idx"].to_numpy())
    hard = inst["flask_hard"].to_numpy()
    n_all = np.bincount(sk.ravel(), minlength=12)
    n_hard = np.bincount(sk[hard].ravel(), minlength=12)
    # The non-hard instances carry whatever keeps the full-set mean on Table 9.
    other = (table["full"] * n_all - table["hard"] * n_hard) / (n_all - n_hard)
    weights = np.zeros((12, len(_LEVEL_OFFSET)))
    np.add.at(weights, (sk[~hard].ravel(), np.repeat(inst["level"].to_numpy()[~hard], 3)), 1)
    return np.stack([np.clip(other, 1, 5), table["hard"]]), weights / weights.sum(1)[:, None]


def _locations(targets: np.ndarray, weights: np.ndarray, sd: np.ndarray) -> np.ndarray:
    at_zero = np.eye(len(_LEVEL_OFFSET))[0]  # hard instances get no level offset
    return np.stack([_solve(targets[0], sd, weights), _solve(targets[1], sd, at_zero)])


def _discretise(latent: np.ndarray) -> np.ndarray:
    return np.clip(np.rint(latent), 1, 5)


def _pin(latent: np.ndarray, cell: np.ndarray, target: np.ndarray, valid: np.ndarray):
    """Scores whose realised mean per cell (group, model, skill) is as close to ``target`` as
    the integers allow: a per-cell shift of the latent, found by bisection. Without it the
    sampling error of small cells (FLASK-Hard: ~7 instances per skill) would swamp the table."""
    t, c, x = target.ravel(), cell[valid], latent[valid]
    n = np.maximum(np.bincount(c, minlength=t.size), 1)
    mean = lambda d: np.bincount(c, _discretise(x + d[c]), t.size) / n  # noqa: E731
    lo, hi = np.full(t.size, -2.5), np.full(t.size, 2.5)
    for _ in range(24):
        mid = (lo + hi) / 2
        below = mean(mid) < t
        lo, hi = np.where(below, mid, lo), np.where(below, hi, mid)
    best = np.where(np.abs(mean(lo) - t) < np.abs(mean(hi) - t), lo, hi)
    return _discretise(latent + best[cell])


def _noise_sds() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per skill: SD of true quality, of the judge's noise, of an annotator's noise."""
    psi = np.array([_NOISE[s][0] for s in SKILL_ORDER])
    sd_h = np.array([_NOISE[s][1] for s in SKILL_ORDER])
    return np.sqrt(psi) * _JUDGE_SD, np.sqrt(1 - psi) * _JUDGE_SD, sd_h


def _na_masks(rng: np.random.Generator, sk: np.ndarray, m: int, human: np.ndarray):
    """N/A mostly means "this skill does not apply here", so most of it is shared by raters."""
    p_na = np.array([_NA_RATE.get(s, _NA_DEFAULT) for s in SKILL_ORDER])[sk][:, None, :]
    shared = rng.random((len(sk), 1, 3)) < 0.7 * p_na
    judge = shared | (rng.random((len(sk), m, 3)) < 0.3 * p_na)
    humans = shared[human] | (rng.random((len(_LENIENCY), len(human), m, 3)) < 0.3 * p_na[human])
    return judge, humans


def _scores(rng: np.random.Generator, inst: pd.DataFrame, human: np.ndarray) -> dict:
    """Judge (N, M, 3) and annotator (3, H, M, 3) scores with NaN for N/A, plus the response
    effects that lengths depend on."""
    n, m = len(inst), len(MODELS)
    sk = np.stack(inst["skill_idx"].to_numpy())  # (N, 3)
    sd_t, sd_j, sd_h = _noise_sds()
    resp_eff, length_eff = rng.standard_normal((2, n, m))
    parts = (rng.standard_normal(n)[:, None, None], resp_eff[:, :, None],
             rng.standard_normal((n, m, 3)))  # fmt: skip
    true = sum(w * p for w, p in zip(_TRUE_PARTS, parts, strict=True)) * sd_t[sk][:, None, :]
    # Part of the judge's noise follows length (conciseness: the other way): length bias.
    sign = np.where(np.array(SKILL_ORDER)[sk] == "conciseness", -1.0, 1.0)[:, None, :]
    judge_noise = (
        np.sqrt(1 - _LENGTH_BIAS) * rng.standard_normal((n, m, 3))
        + np.sqrt(_LENGTH_BIAS) * sign * length_eff[:, :, None]
    ) * sd_j[sk][:, None, :]
    na_j, na_h = _na_masks(rng, sk, m, human)
    hard = inst["flask_hard"].to_numpy().astype(int)[:, None, None]
    cell = (hard * m + np.arange(m)[None, :, None]) * 12 + sk[:, None, :]
    offset = np.where(hard == 1, 0.0, _LEVEL_OFFSET[inst["level"].to_numpy()][:, None, None])
    targets, weights = _targets(inst, np.zeros(m))
    loc = _locations(targets, weights, np.full(12, _JUDGE_SD)).ravel()[cell] + offset
    judge = _pin(loc + true + judge_noise, cell, targets, ~na_j)
    shift = np.where(np.array(MODELS) == "gpt4", _SELF_PREFERENCE, 0.0)
    targets, weights = _targets(inst, shift)
    loc = _locations(targets, weights, np.hypot(sd_t, sd_h)).ravel()[cell] + offset
    noise_h = rng.standard_normal(na_h.shape) * sd_h[sk[human]][:, None]
    humans = _discretise(loc[human] + true[human] + _LENIENCY[:, None, None, None] + noise_h)
    judge[na_j], humans[na_h] = np.nan, np.nan
    return {"judge": judge, "humans": humans, "length_eff": length_eff, "resp_eff": resp_eff}


def _lengths(inst: pd.DataFrame, resp_eff: np.ndarray, length_eff: np.ndarray,
             rng: np.random.Generator) -> np.ndarray:  # fmt: skip
    """Response lengths in characters (N, M). FLASK found longer answers score higher across
    models (Table 5); the demo makes that trend explicit (stronger model → longer), though the
    real per-model lengths are noisier (LLaMA2-Chat, for one, is verbose)."""
    overall = published_skill_scores().query("subset == 'full'").groupby("model_id")[
        "mean_score"].mean().loc[list(MODELS)].to_numpy()  # fmt: skip
    median = 650 * np.exp(overall - 3.8)
    demand = rng.standard_normal(len(inst))[:, None]  # some instructions call for long answers
    log_len = np.log(median) + 0.6 * demand + 0.25 * resp_eff + 0.45 * length_eff
    return np.maximum(np.rint(np.exp(log_len)), 80).astype(int)


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
    inst = _instances(rng)
    human = _human_subset(rng, inst, human_instances)
    sim = _scores(rng, inst, human)
    lengths = _lengths(inst, sim["resp_eff"], sim["length_eff"], rng)
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
        return con.execute(queries.USER_RUNS_OF_DATASET, [DEMO_DATASET, "demo-"]).fetchall()


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

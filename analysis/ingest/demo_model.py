"""The simulated world behind the demo: FLASK-shaped instances and a latent quality model that
gives every (instance, model, skill) a true score, seen by the judge and by each annotator with
their own noise, leniency and biases. Pure numpy: ``demo.py`` turns it into store records.

Locations are solved exactly (normal CDF of the rounding bins) so each model's expected judge
mean per skill equals the paper's Table 9 figure (Table 10 on FLASK-Hard); the noise shares per
skill (``_NOISE``) were calibrated by simulation to land on the paper's Table 2.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis.core.taxonomy import SKILL_ORDER
from analysis.ingest.published import published_skill_scores

MODELS = ("vicuna_13b", "wizardlm_13b", "tulu_65b", "llama2_chat_70b",
          "chatgpt", "bard", "claude_v1", "gpt4")  # fmt: skip


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


_LEVEL_OFFSET = np.array([0.0, 0.3, 0.15, 0.0, -0.15, -0.3])  # index = level, 0 = unlabeled


_LENIENCY = np.array([-0.25, -0.10, 0.05])  # per annotator; humans a little harsher than GPT-4


_SELF_PREFERENCE = 0.15  # the judge rates gpt4's answers this much above what humans see


_LENGTH_BIAS = 0.35  # share of the judge's noise that tracks response length


_TRUE_PARTS = np.sqrt([0.25, 0.5, 0.25])  # instance, response, skill-specific variance shares


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


def simulate_instances(rng: np.random.Generator) -> pd.DataFrame:
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


def human_subset(rng: np.random.Generator, inst: pd.DataFrame, size: int) -> np.ndarray:
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
    # Imported here: scipy.special costs ~0.25 s, and the app imports this module on every
    # start but builds the demo only on an empty store.
    from scipy.special import ndtr

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


def simulate_scores(rng: np.random.Generator, inst: pd.DataFrame, human: np.ndarray) -> dict:
    """Judge (N, M, 3) and annotator (3, H, M, 3) scores with NaN for N/A, the response
    effects that lengths depend on, and what the demo panel's judges are built from: the true
    quality and the judge's location (N, M, 3), the judge's noise SD per skill (12), the part
    of its noise that follows length (N, M, 3: a property of the response, the same in every
    run) and the variance share of the rest."""
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
    judge_loc = loc  # the judge's location per score: the demo panel's judges see it too
    shift = np.where(np.array(MODELS) == "gpt4", _SELF_PREFERENCE, 0.0)
    targets, weights = _targets(inst, shift)
    loc = _locations(targets, weights, np.hypot(sd_t, sd_h)).ravel()[cell] + offset
    noise_h = rng.standard_normal(na_h.shape) * sd_h[sk[human]][:, None]
    humans = _discretise(loc[human] + true[human] + _LENIENCY[:, None, None, None] + noise_h)
    judge[na_j], humans[na_h] = np.nan, np.nan
    return {
        "judge": judge,
        "humans": humans,
        "length_eff": length_eff,
        "resp_eff": resp_eff,
        "true": true,
        "judge_loc": judge_loc,
        "judge_sd": sd_j,
        "judge_length_noise": np.sqrt(_LENGTH_BIAS)
        * sign
        * length_eff[:, :, None]
        * sd_j[sk][:, None, :],
        "judge_free_share": 1 - _LENGTH_BIAS,
    }


def response_lengths(inst: pd.DataFrame, resp_eff: np.ndarray, length_eff: np.ndarray,
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

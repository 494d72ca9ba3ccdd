"""The demo's simulated judge panel: LLM judges with known biases, so the Judges page has
something to find on a fresh clone, and its tests know what it must find.

Every panel judge scores the instances the simulated annotators scored (all 8 models), from the
same latent truth as the annotators and "gpt-4 (simulated)" (``demo_model.simulate_scores``,
replayed from the demo's seed): its latent is the judge's location plus the true quality plus
its own fresh noise (the gpt-4 judge's noise SD per skill), plus its bias, rounded and clipped
to 1..5. The biases, fixed here and stated in each judge's ``params``:

- ``lenient-judge (simulated)``: +0.8 on the latent of robustness, correctness and readability
  only. Clipping at 5 makes the shift seen in the scores smaller where scores are high.
- ``verbose-judge (simulated)``: +0.8 points per SD of the response's length within its
  instance (log length centred on the instance's mean; conciseness the other way, as for the
  gpt-4 judge): a long answer scores higher than its siblings, and the judge's mean is unbiased
  (the length term averages 0 in every instance).
- ``claude-judge (simulated)``: +0.7 on every skill of the responses of ``claude_v1`` only.
- A repeat run of ``gpt-4 (simulated)`` (temperature > 0) on 300 instances: the annotators'
  200 and 100 others. Same truth and the same length-tracking part of its noise (a property
  of the response), fresh noise otherwise. A repeat run (``runs.repeat_number`` 1): its scores
  are history from the start, so the judge's current scores stay the base demo's and only the
  Stability section reads the repeat.

Each judge has its share of unparseable outputs (``failed``) and of failed calls (``error``:
no output, no score), so the Failures section has data. The families of the judges and models
that self-preference compares go to the ``families`` table in the same transaction.
The panel draws on its own generator (seeded from the demo's seed), never on the base demo's:
the base demo stays what it was, row for row.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from analysis.core.store import Store
from analysis.core.taxonomy import SKILL_ORDER, SKILLS
from analysis.core.writer import (
    JUDGMENT_COLS,
    Batch,
    ImportReport,
    JudgeRecord,
    RunRecord,
    write_batch,
)
from analysis.ingest.demo import (
    DEFAULT_SEED,
    DEMO_DATASET,
    JUDGE,
    _long_scores,
    _score_json,
    build_and_write_demo,
)
from analysis.ingest.demo_model import (
    MODELS,
    N_HUMAN_INSTANCES,
    human_subset,
    response_lengths,
    simulate_instances,
    simulate_scores,
)

LENIENT = "lenient-judge (simulated)"
VERBOSE = "verbose-judge (simulated)"
CLAUDE = "claude-judge (simulated)"
PANEL = (LENIENT, VERBOSE, CLAUDE)

LENIENT_SKILLS = ("robustness", "correctness", "readability")
LENIENCY = 0.8
OWN_MODEL = "claude_v1"
SELF_PREFERENCE = 0.7
# Points per within-instance SD of log length: its within-instance correlation with length is
# about twice the humans' (0.64 against 0.33), and its per-skill means stay within 0.15 of
# theirs (a larger slope, clipped at 5, would lower the means of skills scored near 5).
VERBOSITY = 0.8
REPEAT_INSTANCES = 300
REPEAT_TEMPERATURE = 0.7
REPEAT_RUN_SUFFIX = "repeat-1"

FAMILIES = [
    ("judge", JUDGE, "openai"), ("judge", CLAUDE, "anthropic"),
    ("model", "gpt4", "openai"), ("model", "chatgpt", "openai"),
    ("model", "claude_v1", "anthropic"),
]  # fmt: skip

# The panel's generator: [demo seed, this tag], independent of the base demo's draws.
_PANEL_STREAM = 15
_NA_KEPT = 0.85  # share of the gpt-4 judge's N/As (mostly "does not apply") a panel judge shares
_NA_OWN = 0.01  # and its own, anywhere


@dataclass(frozen=True)
class PanelJudge:
    name: str
    model: str
    bias: str  # what was simulated, in words (judges.params)
    p_failed: float  # unparseable output
    p_error: float  # failed call: no output at all


JUDGES = (
    PanelJudge(LENIENT, "lenient-judge", f"lenient +{LENIENCY} on {', '.join(LENIENT_SKILLS)}",
               0.01, 0.0),
    PanelJudge(VERBOSE, "verbose-judge", f"length: +{VERBOSITY} per SD of the response's log "
               "length within its instance (conciseness reversed)", 0.02, 0.005),
    PanelJudge(CLAUDE, "claude-v1", f"self-preference +{SELF_PREFERENCE} on {OWN_MODEL}'s "
               "responses, every skill", 0.005, 0.015),
)  # fmt: skip
REPEAT = PanelJudge(JUDGE, "gpt-4", f"repeat run at temperature {REPEAT_TEMPERATURE}", 0.005, 0)

_BANDS = {1: "fails at it", 2: "has major flaws in it", 3: "is acceptable with clear gaps",
          4: "is good with minor slips", 5: "is excellent"}  # fmt: skip
_ERRORS = ("simulated: HTTP 429 Too Many Requests (gave up after 3 retries)",
           "simulated: request timed out after 60 s")  # fmt: skip


@dataclass(frozen=True)
class World:
    """The base demo's simulation, replayed from its seed (the draws ``build_demo`` makes)."""

    ids: np.ndarray  # instance ids (N,)
    sk: np.ndarray  # skill indices (N, 3)
    human: np.ndarray  # indices of the annotators' instances
    sim: dict
    lengths: np.ndarray  # (N, M) characters


def replay(seed: int) -> World:
    rng = np.random.default_rng(seed)
    inst = simulate_instances(rng)
    human = human_subset(rng, inst, N_HUMAN_INSTANCES)
    sim = simulate_scores(rng, inst, human)
    lengths = response_lengths(inst, sim["resp_eff"], sim["length_eff"], rng)
    return World(inst["instance_id"].to_numpy(), np.stack(inst["skill_idx"].to_numpy()), human,
                 sim, lengths)  # fmt: skip


def _length_z(lengths: np.ndarray) -> np.ndarray:
    """Log length centred within each instance, scaled by the pooled within-instance SD."""
    centred = np.log(lengths) - np.log(lengths).mean(1, keepdims=True)
    return centred / centred.std()


def _latent(w: World, rows: np.ndarray, name: str, rng: np.random.Generator) -> np.ndarray:
    """The judge's latent score (rows, M, 3) before rounding."""
    sim, sk = w.sim, w.sk[rows]
    sd = sim["judge_sd"][sk][:, None, :]
    z = rng.standard_normal((len(rows), len(MODELS), 3))
    base = sim["judge_loc"][rows] + sim["true"][rows]
    if name == JUDGE:  # the repeat: same response-bound part of its noise, the rest fresh
        return base + sim["judge_length_noise"][rows] + np.sqrt(sim["judge_free_share"]) * sd * z
    if name == VERBOSE:
        sign = np.where(np.array(SKILL_ORDER)[sk] == "conciseness", -1.0, 1.0)[:, None, :]
        lz = _length_z(w.lengths)[rows][:, :, None]
        return base + sd * z + VERBOSITY * sign * lz
    out = base + sd * z
    if name == LENIENT:
        out = out + LENIENCY * np.isin(np.array(SKILL_ORDER)[sk], LENIENT_SKILLS)[:, None, :]
    if name == CLAUDE:
        out = out + SELF_PREFERENCE * (np.array(MODELS) == OWN_MODEL)[None, :, None]
    return out


def _scores(w: World, rows: np.ndarray, name: str, rng: np.random.Generator) -> np.ndarray:
    vals = np.clip(np.rint(_latent(w, rows, name, rng)), 1, 5)
    shape = vals.shape
    na = (np.isnan(w.sim["judge"][rows]) & (rng.random(shape) < _NA_KEPT)) | (
        rng.random(shape) < _NA_OWN
    )
    vals[na] = np.nan
    return vals


def _rationale(judge: str, labels: np.ndarray, vals: np.ndarray) -> str:
    lines = [f"{lab.capitalize()}: the response {_BANDS[int(v)]} ({int(v)})." if v == v
             else f"{lab.capitalize()}: does not apply to this instruction (N/A)."
             for lab, v in zip(labels, vals, strict=True)]  # fmt: skip
    return f"[simulated] {judge} review.\n" + "\n".join(lines)


def _raw(rationale: str, blob: str, status: str, k: int) -> str | None:
    if status == "error":
        return None
    if status == "failed":  # cut off, or a scores object that does not close
        return f"{rationale}\n" + ("(output cut off before the scores)" if k % 2 else blob[:-1])
    return f"{rationale}\n{blob}"


def _run(w: World, rows: np.ndarray, j: PanelJudge, run_id: str, source: str,
         rng: np.random.Generator) -> tuple[pd.DataFrame, pd.DataFrame, RunRecord]:  # fmt: skip
    n, m, name = len(rows), len(MODELS), j.name
    vals = _scores(w, rows, name, rng)
    ids, sk = w.ids[rows], w.sk[rows]
    labels = np.repeat(np.array([SKILLS[s].label.lower() for s in SKILL_ORDER])[sk], m, axis=0)
    flat = vals.reshape(n * m, 3)
    u = rng.random(n * m)
    status = np.where(u < j.p_failed, "failed", np.where(u < j.p_failed + j.p_error, "error", "ok"))
    rationales = [_rationale(name, lab, v) for lab, v in zip(labels, flat, strict=True)]
    blobs = _score_json(labels, flat)
    raw = [_raw(r, b, s, k) for k, (r, b, s) in enumerate(zip(rationales, blobs, status,
                                                              strict=True))]  # fmt: skip
    called = status != "error"
    prompt = np.where(called, 750 + w.lengths[rows].ravel() // 4, 0)
    completion = np.where(called, 90 + rng.integers(0, 120, n * m), 0)
    judgments = pd.DataFrame({
        "run_id": run_id, "dataset": DEMO_DATASET, "instance_id": np.repeat(ids, m),
        "model": np.tile(MODELS, n), "judge": name, "raw_output": raw,
        "rationale": np.where(status == "ok", np.array(rationales, dtype=object), None),
        "parse_status": status,
        "error": np.select([status == "failed", status == "error"],
                           ["no scores object in the judge output",
                            np.array(_ERRORS)[np.arange(n * m) % 2]], None),
        "latency_ms": np.where(called, np.rint(rng.lognormal(np.log(6000), 0.4, n * m)), 60_000),
        "prompt_tokens": pd.array(prompt, dtype="Int64"),
        "completion_tokens": pd.array(completion, dtype="Int64"),
    })[JUDGMENT_COLS]  # fmt: skip
    judgments.loc[~called, ["prompt_tokens", "completion_tokens"]] = pd.NA
    scores = _long_scores(run_id, name, ids, sk, vals, (status == "ok").reshape(n, m))
    n_ok = int((status == "ok").sum())
    run = RunRecord(run_id, name, DEMO_DATASET, source, n * m, n_ok, n * m - n_ok,
                    int(prompt.sum()), int(completion.sum()))  # fmt: skip
    return judgments, scores, run


def repeat_rows(w: World, rng: np.random.Generator) -> np.ndarray:
    """The repeat run's instances: the annotators' ones and others at random, in id order."""
    others = np.setdiff1d(np.arange(len(w.ids)), w.human)
    extra = rng.choice(others, REPEAT_INSTANCES - len(w.human), replace=False)
    return np.sort(np.concatenate([w.human, extra]))


def build_panel(seed: int) -> Batch:
    """The panel as a Batch: a pure function of ``seed``, written after the base demo."""
    w = replay(seed)
    rng = np.random.default_rng([seed, _PANEL_STREAM])
    source = f"simulated panel (seed {seed})"
    parts = [_run(w, w.human, j, f"demo-{seed}-{j.name}", source, rng) for j in JUDGES]
    # Named as judges/repeat.py names a repeat (a later one from the app is number 2), and
    # marked as one: its scores are history, so gpt-4 (simulated)'s current scores stay the
    # base demo's.
    judgments, scores, run = _run(
        w, repeat_rows(w, rng), REPEAT, f"demo-{seed}-{JUDGE}-{REPEAT_RUN_SUFFIX}",
        f"repeat 1 on {DEMO_DATASET} at temperature {REPEAT_TEMPERATURE:g}", rng,
    )  # fmt: skip
    parts.append((judgments, scores, replace(run, repeat_number=1)))
    judges = [JudgeRecord(j.name, "llm", "simulation", j.model, "flask-skill-specific",
                          {"simulated": True, "seed": seed, "simulated_bias": j.bias})
              for j in JUDGES]  # fmt: skip
    batch = Batch(
        judges=judges, runs=[p[2] for p in parts],
        judgments=pd.concat([p[0] for p in parts], ignore_index=True),
        scores=pd.concat([p[1] for p in parts], ignore_index=True),
        families=list(FAMILIES), mode="merge",
    )  # fmt: skip
    batch.report.parse_failures = sum(p[2].n_failed for p in parts)
    batch.report.counts = {"panel judges": len(JUDGES), "panel judgments": len(batch.judgments),
                           "panel scores": len(batch.scores),
                           "repeat-run scores": len(parts[-1][1])}  # fmt: skip
    return batch


def build_and_write_demo_with_panel(
    store: Store, seed: int = DEFAULT_SEED, *, force: bool = False
) -> ImportReport:
    """The demo as the ``demo`` command and the app's first start build it: the base demo
    (``demo.build_and_write_demo``: one transaction, refusing to delete a user's work unless
    ``force``), then the panel in a transaction of its own (its repeat run supersedes scores
    the first wrote, as a re-judge does)."""
    return write_panel(store, seed, build_and_write_demo(store, seed, force=force))


def write_panel(store: Store, seed: int, report: ImportReport | None = None) -> ImportReport:
    """Write the panel in one transaction; fold its counts into the base demo's ``report``."""
    batch = build_panel(seed)
    counts = dict(batch.report.counts)  # the writer adds generic counts to its own report
    write_batch(store, batch, source=f"simulated demo panel (seed {seed})")
    if report is None:
        return batch.report
    report.counts.update(counts)
    report.parse_failures += batch.report.parse_failures
    report.notes.append(
        f"simulated judge panel: {', '.join(PANEL)} on the annotators' instances, and a repeat "
        f"run of {JUDGE} on {REPEAT_INSTANCES} instances"
    )
    return report

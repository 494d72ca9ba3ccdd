"""Texts of the simulated demo: instructions, reference answers, responses and the simulated
judge's rationales that read like the real thing, from templates and the seed alone.

An instance's source task and domains choose a genre (code, math, sensitive request, haiku,
multiple choice, claim check, open question), its domain a topic and vocabulary, its difficulty
an audience, and its three skills what the instruction asks for. Each model answers in its own
voice; each response shows, for every skill the simulated judge scored low, a visible flaw of
that kind (a wrong step, a missing part, a tangent …), and earns the sentences a strong answer
adds where it scored high. Its length follows the simulated one to within half a sentence
(worked code and maths, refusals and the longest 1% stop where their content does). The
judge's rationale comments on each skill in FLASK's manner and names the flaws the response
shows. Randomness comes from one ``random.Random(seed)`` drawn in a fixed order: the same seed
gives the same texts, and the score simulation's own generator is never touched.

Cost: about as much again as the rest of the build (half a second for the 13,920
responses); an instance's eight responses share its filled templates and sentence pool.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from analysis.core.taxonomy import SKILL_ORDER, SKILLS
from analysis.ingest.demo_blocks import TAG, Ask, Note, Plan, cap, fill, fit, pick
from analysis.ingest.demo_domains import DOMAINS, GENERAL_DOMAINS
from analysis.ingest.demo_phrases import (
    ASKS,
    AUDIENCES,
    BANDS,
    DEFAULT_VOICE,
    HARMS,
    MINOR,
    OVERALL,
    PERSONAS,
    PRAISE,
    VOICES,
    WEAK,
)  # fmt: skip
from analysis.ingest.demo_prose import (
    plan_choice,
    plan_claim,
    plan_haiku,
    plan_open,
    plan_safety,
    respond_choice,
    respond_claim,
    respond_haiku,
    respond_open,
    respond_safety,
)  # fmt: skip
from analysis.ingest.demo_worked import plan_code, plan_math, respond_code, respond_math
from analysis.ingest.demo_worked_phrases import ASKS as WORKED_ASKS

GENRES = {
    "open": (plan_open, respond_open), "choice": (plan_choice, respond_choice),
    "claim": (plan_claim, respond_claim), "safety": (plan_safety, respond_safety),
    "haiku": (plan_haiku, respond_haiku), "code": (plan_code, respond_code),
    "math": (plan_math, respond_math),
}  # fmt: skip

CODE_TASKS = {"Mbpp", "Humaneval", "Leetcode", "Concode", "Cosqa"}
MATH_TASKS = {"Gsm8k", "theoremqa", "Prm800k", "Agieval - math", "Finqa"}
SAFETY_TASKS = {"jailbreak_llms", "Hh-rlhf", "Hades", "Prosocialdialog", "Hhh-alignment"}
# Source tasks and their genres' shares: QA benchmarks ask multiple choice or check a claim.
_TASK_MIX = {
    **dict.fromkeys(("Mmlu", "Commonsenseqa 2.0", "Piqa", "Textbookqa", "Bbq", "Truthfulqa"),
                    (("choice", 0.8), ("claim", 0.1))),
    **dict.fromkeys(("Bigbench", "Bbh", "Inverse scaling prize"),
                    (("choice", 0.45), ("claim", 0.25))),
    **dict.fromkeys(("Fever", "Faviq", "Contractnli", "Delta-nli", "Folio", "Strategyqa",
                     "Hotpotqa", "Conditionalqa", "Romqa", "Timedial", "Cicero", "E-care",
                     "Ethics", "Scone", "Fetaqa", "Asqa", "Fairytaleqa", "Cola"),
                    (("claim", 0.7), ("choice", 0.1))),
}  # fmt: skip
_REDRAWS = 100
_PRACTICAL = {"Health", "Technology", "Natural Science", "Coding", "Math"}
_FALLBACK_CAUTION = "Double-check anything important before acting on it."
_PLAIN_FACTS = "the facts it relies on are accurate"
_NA = ("{L}: Not applicable to this instruction.", "{L}: N/A; nothing in the task calls for it.")


@dataclass(frozen=True)
class DemoTexts:
    """All texts of one demo build; responses and rationales are (instance, model)-major."""

    instructions: list[str]
    references: list[str]
    responses: list[str]
    rationales: list[str]


def _genre(task: str, domains: Sequence[str], rnd: random.Random) -> str:
    if "Coding" in domains or task in CODE_TASKS:
        return "code"
    if "Math" in domains or task in MATH_TASKS:
        return "math"
    if task in SAFETY_TASKS:
        return "safety"
    if task == "Haiku generation":
        return "haiku"
    u = rnd.random()
    for genre, share in _TASK_MIX.get(task, ()):
        if u < share:
            return genre
        u -= share
    return "open"


def _base_plan(iid: str, skills: tuple[str, ...], domains: Sequence[str], level: int,
               genre: str, rnd: random.Random) -> Plan:  # fmt: skip
    general = [d for d in domains if d in GENERAL_DOMAINS] or [pick(rnd, GENERAL_DOMAINS)]
    domain = DOMAINS[pick(rnd, general)]
    rest = [d for d in domains if d != domain.name]
    angle = DOMAINS[rest[0]] if rest and genre == "open" else None
    topic = pick(rnd, domain.topics)
    other, aside = rnd.sample([t for t in domain.topics if t is not topic], 2)
    harm, harm_note = HARMS["practical" if domain.name in _PRACTICAL else "views"]
    home = DOMAINS[{"code": "Coding", "math": "Math"}.get(genre, domain.name)]
    a1, a2, a3 = pick(rnd, home.aspects)
    slots = {
        "S": topic.subject, "S_cap": cap(topic.subject), "p": pick(rnd, topic.points[1:]),
        "o": other.subject, "op": pick(rnd, other.points), "q0": other.points[0],
        "t": aside.subject, "tp": pick(rnd, aside.points), "harm": harm, "harm_note": harm_note,
        "edge": pick(rnd, home.edges), "unsure": pick(rnd, home.unsure),
        "caution": pick(rnd, home.cautions) if home.cautions else _FALLBACK_CAUTION,
        "a1": a1, "a2": a2, "a3": a3, "n": str(150 if level <= 2 else 250),
        "c": pick(rnd, domain.contexts), "E": domain.experts, "E_cap": cap(domain.experts),
        "pct": str(rnd.randrange(55, 95)),
        "aud": pick(rnd, AUDIENCES.get(level, AUDIENCES[0])),
        **{f"p{i}": p for i, p in enumerate(topic.points)},
    }  # fmt: skip
    slots["fact"] = f"{slots['S']} {slots['p']}"
    return Plan(iid, genre, skills, level, domain, angle, slots, topic, other)


def _asks(plan: Plan, rnd: random.Random) -> list[str]:
    """What the instruction asks beyond its task, for one or two of the instance's skills."""
    chosen = rnd.sample(plan.skills, 1 if rnd.random() < 0.55 else 2)
    table = WORKED_ASKS.get(plan.genre)
    out = []
    for skill in sorted(chosen, key=plan.skills.index):
        template = table[skill] if table else pick(rnd, ASKS[skill])
        out.append(fill(template, plan.slots))
    return out


def _plan(row: tuple, rnd: random.Random) -> Plan:
    iid, skills, domains, level, task = row
    genre = _genre(task, domains, rnd)
    plan = _base_plan(iid, skills, domains, level, genre, rnd)
    GENRES[genre][0](plan, rnd)
    persona = [pick(rnd, PERSONAS)] if genre in ("open", "claim") and rnd.random() < 0.3 else []
    body = " ".join([*persona, plan.instruction])
    asks = _asks(plan, rnd) if genre not in ("safety", "haiku") else []
    sep = "\n\n" if "\n" in body else " "
    plan.instruction = TAG + body + (sep + " ".join(asks) if asks else "")
    plan.reference = TAG + plan.reference
    return plan


def _rows(inst: pd.DataFrame) -> list[tuple]:
    skills = [tuple(SKILL_ORDER[k] for k in s) for s in inst["skill_idx"]]
    levels = inst["level"].astype(int).tolist()
    return list(zip(inst["instance_id"], skills, inst["domains"], levels, inst["source_task"],
                    strict=True))  # fmt: skip


def plan_instances(inst: pd.DataFrame, rnd: random.Random) -> list[Plan]:
    """One plan per instance, in order; a plan whose instruction an earlier instance already
    has is drawn again, so no two instructions are the same."""
    plans, seen = [], set()
    for row in _rows(inst):
        for _ in range(_REDRAWS):
            plan = _plan(row, rnd)
            if plan.instruction not in seen:
                break
        else:  # never reached in practice (a few redraws at most), but never a duplicate
            plan.instruction += f" (Question {plan.iid}.)"
        seen.add(plan.instruction)
        plans.append(plan)
    return plans


def _ask(plan: Plan, scores: list[float], model: str, rnd: random.Random) -> Ask:
    """Flaws where the judge scored 1-2 (severe), and on half of the 3s; strong sentences at
    4-5. N/A (NaN) is neither."""
    flaws, severe, good = [], [], []
    for skill, v in zip(plan.skills, scores, strict=True):
        if v >= 4:
            good.append(skill)
        elif v <= 2:
            flaws.append(skill)
            severe.append(skill)
        elif v == 3 and rnd.random() < 0.5:
            flaws.append(skill)
    return Ask(VOICES.get(model, DEFAULT_VOICE), rnd, flaws, severe, good)


def response_text(plan: Plan, scores: list[float], model: str, target: int,
                  rnd: random.Random) -> tuple[str, list[Note]]:  # fmt: skip
    """One model's response of about ``target`` characters, and the notes on its flaws."""
    ask = _ask(plan, scores, model, rnd)
    head, body, tail = GENRES[plan.genre][1](plan, ask)
    return fit(head, body, tail, target, flat=ask.flat and plan.genre != "code")


def rationale(plan: Plan, scores: list[float], notes: list[Note], rnd: random.Random) -> str:
    """FLASK-style feedback: an overall verdict, then one line per skill that names the flaws
    the response shows (or what it does well)."""
    valid = [v for v in scores if v == v]  # NaN = N/A
    mean = sum(valid) / len(valid) if valid else 3.0
    verdicts = next(texts for floor, texts in OVERALL if mean >= floor)
    noted = dict(reversed(notes))  # the first note per skill
    lines = [TAG + pick(rnd, verdicts)]
    cache = plan.lines  # the same line recurs across an instance's models
    for skill, v in zip(plan.skills, scores, strict=True):
        if v != v:
            lines.append(pick(rnd, _NA).format(L=SKILLS[skill].label))
            continue
        band = int(v)
        key = (skill, band, int(rnd.random() * len(BANDS[band])), noted.get(skill))
        line = cache.get(key)
        if line is None:
            line = cache[key] = _line(plan, *key)
        lines.append(line)
    return "\n".join(lines)


def _line(plan: Plan, skill: str, band: int, which: int, note: str | None) -> str:
    label, minor = SKILLS[skill].label, MINOR[skill]
    praise = PRAISE[skill] if plan.slots["fact"] or skill != "factuality" else _PLAIN_FACTS
    x = plan.fill(praise) if band >= 4 else note
    if band == 3 and x is None:
        return f"{label}: Adequate, but {minor}."
    x = x or WEAK[skill]
    return BANDS[band][which].format(L=label, X=cap(x), x=x, m=minor)


def build_texts(inst: pd.DataFrame, judge: np.ndarray, lengths: np.ndarray,
                models: Sequence[str], seed: int) -> DemoTexts:  # fmt: skip
    """Every text of the demo. ``judge``: (instances, models, 3) simulated judge scores in the
    instance's skill order (NaN = N/A); ``lengths``: (instances, models) target lengths.

    One ``random.Random(seed)`` for everything, in a fixed order: deterministic for a seed
    and independent of the score simulation's generator."""
    return _build(inst, judge, lengths, models, random.Random(seed))


def _build(inst: pd.DataFrame, judge: np.ndarray, lengths: np.ndarray, models: Sequence[str],
           rnd: random.Random) -> DemoTexts:  # fmt: skip
    plans = plan_instances(inst, rnd)
    responses, rationales = [], []
    for plan, scores, targets in zip(plans, judge.tolist(), lengths.tolist(), strict=True):
        seen = set()
        for model, sc, target in zip(models, scores, targets, strict=True):
            text, notes = response_text(plan, sc, model, target, rnd)
            for longer in range(1, 6):  # two short answers came out the same: say a bit more
                if text not in seen:
                    break
                text, notes = response_text(plan, sc, model, target + 80 * longer, rnd)
            seen.add(text)
            responses.append(text)
            rationales.append(rationale(plan, sc, notes, rnd))
    return DemoTexts([p.instruction for p in plans], [p.reference for p in plans], responses,
                     rationales)  # fmt: skip

"""Who can be compared: a scorer is a judge's name or a group ``kind:human`` / ``kind:llm`` (the
mean of that kind's scorers per item). The pickers' options and defaults, and a spec resolved to
the judges it stands for."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pandas as pd

from analysis.core.errors import InputError, NotFoundError
from analysis.core.names import is_reserved, name_key, normalise_name
from analysis.core.store import Store
from analysis.core.taxonomy import SKILLS
from analysis.views import tables
from analysis.views.criteria import labels_in
from analysis.views.tables import judge_label

# Everyone who scored the dataset (latest scores), LLM judges first, then by how much they scored.
JUDGES_OF_DATASET = """
SELECT s.judge, any_value(j.kind) AS kind, count(*) AS n
FROM latest_scores s LEFT JOIN judges j USING (judge)
WHERE s.dataset = ?
GROUP BY s.judge
ORDER BY (any_value(j.kind) = 'llm') DESC, n DESC, s.judge
"""

SKILLS_OF_DATASET = "SELECT DISTINCT skill FROM latest_scores WHERE dataset = ?"


KINDS = ("human", "llm")


@dataclass(frozen=True)
class Scorer:
    spec: str  # as the user wrote it: a judge name or kind:human / kind:llm
    judges: tuple[str, ...]  # the scorers whose mean per item it stands for


def scorer_options(store: Store, dataset: str) -> pd.DataFrame:
    """Scorers of a dataset (judge, kind, n scores), humans and LLMs, for pickers."""
    with store.read() as con:
        return con.execute(JUDGES_OF_DATASET, [dataset]).df()


@dataclass(frozen=True)
class ScorerChoices:
    options: tuple[str, ...]  # groups first (kind:human, kind:llm), then each scorer
    labels: dict[str, str]
    default_a: str | None
    default_b: str | None
    skills: tuple[str, ...]  # the dataset's skills or criteria, in taxonomy order
    # skill id → the dataset's label (its own criteria's, else FLASK's: dataset_skills)
    skill_labels: dict[str, str] | None = None

    def skill_label(self, skill: str | None) -> str:
        """The Skill picker's text: the dataset's label; None: all skills."""
        return skill_label(skill, self.skill_labels)


def scorer_choices(store: Store, dataset: str) -> ScorerChoices:
    """What the page offers as A and B; by default the first LLM judge against the humans."""
    known = scorer_options(store, dataset)
    with store.read() as con:
        skills = skill_order(s for (s,) in con.execute(SKILLS_OF_DATASET, [dataset]).fetchall())
        names = labels_in(con, dataset)
    kinds = known["kind"].fillna("llm")
    groups = [f"kind:{k}" for k in KINDS if (kinds == k).any()]
    judges = list(known["judge"])
    labels = {"kind:human": "All humans (mean per item)", "kind:llm": "All LLM judges (mean)"}
    labels |= {j: judge_label(j, k) for j, k in zip(judges, kinds, strict=True)}
    llms = [j for j, k in zip(judges, kinds, strict=True) if k == "llm"]
    a = llms[0] if llms else (judges[0] if judges else None)
    humans = [j for j, k in zip(judges, kinds, strict=True) if k == "human"]
    # All humans, unless A is the only human: then A vs all humans would be A vs itself.
    b = "kind:human" if humans and humans != [a] else next((j for j in judges if j != a), None)
    return ScorerChoices(tuple(groups + judges), labels, a, b, tuple(skills), names)


def skill_label(skill: str | None, labels: Mapping[str, str] | None = None) -> str:
    """A criterion for people: ``labels`` (the dataset's, from views/criteria.py) when given,
    else FLASK's; None: all skills."""
    if skill is None:
        return "All skills"
    return str(tables.skill_label(skill, labels))


def resolve(spec: str, known: pd.DataFrame) -> Scorer:
    """A scorer spec → the judges it stands for; unknown names list what is known. Names are
    compared in NFC (analysis/core/names.py): "é" typed as e + a combining accent finds "é"."""
    spec = normalise_name(spec)
    if is_reserved(spec):  # kind:…, in any case or width
        spec = "kind:" + name_key(spec)[5:]
        kind = spec[5:]
        if kind not in KINDS:
            raise InputError(
                "--a/--b", None, None, f"unknown kind '{kind}'; use kind:human or kind:llm"
            )
        judges = tuple(sorted(known.loc[known["kind"].fillna("llm") == kind, "judge"]))
        if not judges:
            raise NotFoundError(f"This dataset has no scorer of kind '{kind}'.")
        return Scorer(spec, judges)
    stored = _by_nfc(known).get(spec)  # a store written before the NFC rule may hold NFD
    if stored is None:
        names = ", ".join(known["judge"]) or "none"
        raise NotFoundError(
            f"Unknown scorer '{spec}'. Known scorers of this dataset: {names}; or a group "
            "kind:human / kind:llm."
        )
    return Scorer(stored, (stored,))


def _by_nfc(known: pd.DataFrame) -> dict[str, str]:
    return {normalise_name(j): j for j in known["judge"]}


def rater_names(values: str | Sequence[str], known: pd.DataFrame) -> tuple[str, ...]:
    """The judges that ``--raters`` values stand for, each value a scorer's name, a group
    (kind:human) or NAME,NAME,…. A judge's name may hold a comma, so a value that is a known
    name is taken whole; otherwise it is split on commas, and every part must be known: else
    the error says to give such names with one ``--raters`` each."""
    names = _by_nfc(known)
    judges: list[str] = []
    for value in [values] if isinstance(values, str) else values:
        value = normalise_name(value)
        if not value:
            continue
        if value in names or is_reserved(value):
            judges += resolve(value, known).judges
            continue
        parts = [normalise_name(p) for p in value.split(",") if p.strip()]
        unknown = [p for p in parts if p not in names and not is_reserved(p)]
        if unknown and len(parts) > 1:
            raise NotFoundError(
                f"--raters '{value}' is not a scorer's name, and split on its commas it names "
                f"unknown scorers: {', '.join(repr(u) for u in unknown)}. Give a name that "
                "holds a comma whole, with one --raters each (--raters 'A, B' --raters C). "
                f"Known scorers: {', '.join(known['judge']) or 'none'}."
            )
        for part in parts:
            judges += resolve(part, known).judges
    return tuple(dict.fromkeys(judges))


def apart(a: Scorer, b: Scorer) -> tuple[Scorer, Scorer, list[str]]:
    """A scorer compared with a group it belongs to is compared with the rest of the group."""
    if set(a.judges) == set(b.judges):
        raise InputError("--a/--b", None, None, f"A and B are the same scorers ({a.spec})")
    shared = set(a.judges) & set(b.judges)
    if not shared:
        return a, b, []
    note = [f"The group excludes {', '.join(sorted(shared))}, the scorer it is compared with."]
    if len(a.judges) > len(b.judges):
        return Scorer(a.spec, tuple(j for j in a.judges if j not in shared)), b, note
    return a, Scorer(b.spec, tuple(j for j in b.judges if j not in shared)), note


def skill_order(skills) -> list[str]:
    order = {s: i for i, s in enumerate(SKILLS)}
    return sorted(set(skills), key=lambda s: (order.get(s, len(order)), s))

"""Judge prompts: versioned template files, rubrics (ours from the store, or FLASK's own files),
and the messages of one call.

Templates live in ``judges/templates/<version>.json``. A user's own file is named
``file:PATH``: our JSON format, or FLASK's ``prompt.jsonl`` (``file:PATH#2`` picks its
prompt_id 2, the one with a reference answer). Every prompt ends with a ``Score keys:`` line so
the parser can tell a complete answer from a partial one.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from analysis.core.errors import InputError, NotFoundError
from analysis.core.store import Store
from analysis.core.taxonomy import normalise_skill

SKILLS_TABLE = """
SELECT skill, label, ability, display_order, definition, rubric, scale_min, scale_max, custom
FROM skills WHERE NOT custom ORDER BY display_order, skill
"""

# A dataset's criteria: its own, else the shared skills (criteria belong to their dataset).
DATASET_SKILLS_TABLE = """
SELECT skill, label, ability, display_order, definition, rubric, scale_min, scale_max, custom
FROM dataset_skills WHERE dataset = ? ORDER BY display_order, skill
"""


TEMPLATES = Path(__file__).with_name("templates")
END_MARKS = ("[End of response]", "[The End of Assistant's Response]")
_FIELD = re.compile(r"\{(rubrics|instruction|reference_block|response|keys)\}")


@dataclass(frozen=True)
class PromptTemplate:
    version: str
    system: str
    user: str  # fields: rubrics, instruction, reference_block, response, keys
    reference_block: str  # fields: reference ("" disables the reference)
    rubric_item: str = "{key} — {label}: {definition}\n{levels}"
    rubric_level: str = "  Score {score}: {text}"


@dataclass(frozen=True)
class Rubric:
    skill: str
    label: str
    definition: str
    levels: tuple[str, ...]  # one text per integer score, lowest first
    scale_min: float = 1
    scale_max: float = 5


@dataclass(frozen=True)
class Item:
    """One response to judge on its instance's skills."""

    dataset: str
    instance_id: str
    model: str
    instruction: str
    reference: str | None
    response: str
    skills: tuple[str, ...]


def available_templates() -> list[str]:
    return sorted(p.stem for p in TEMPLATES.glob("*.json"))


def load_template(version: str) -> PromptTemplate:
    if version.startswith("file:"):
        return _load_file(version[5:])
    path = TEMPLATES / f"{version}.json"
    if not path.exists():
        known = ", ".join(available_templates())
        raise NotFoundError(
            f"Unknown prompt version '{version}'. Known: {known}; or file:PATH for your own."
        )
    return _from_json(json.loads(path.read_text(encoding="utf-8")), str(path))


def _from_json(d: dict, where: str) -> PromptTemplate:
    try:
        return PromptTemplate(
            d["version"],
            d["system"],
            d["user"],
            d.get("reference_block", ""),
            d.get("rubric_item", PromptTemplate.rubric_item),
            d.get("rubric_level", PromptTemplate.rubric_level),
        )
    except KeyError as e:
        raise InputError(where, None, str(e.args[0]), "missing in the prompt template") from e


def _load_file(spec: str) -> PromptTemplate:
    path, _, pick = spec.partition("#")
    p = Path(path)
    if not p.exists():
        raise InputError(path, None, None, "prompt file not found")
    if p.suffix == ".json":
        return _from_json(json.loads(p.read_text(encoding="utf-8")), path)
    return _from_flask_jsonl(p, int(pick) if pick else 2)


def _from_flask_jsonl(path: Path, prompt_id: int) -> PromptTemplate:
    """FLASK's gpt_review prompt.jsonl: {prompt1}{skills}{question}{sample_answer}{response}."""
    for line_no, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            d = json.loads(line)
        except json.JSONDecodeError as e:
            raise InputError(str(path), line_no, None, f"not JSON ({e.msg})") from e
        if d.get("prompt_id") != prompt_id:
            continue
        t = d["prompt_template"].format(
            prompt1=d["defaults"]["prompt1"],
            prompt2=d["defaults"]["prompt2"],
            skills="{rubrics}",
            question="{instruction}",
            sample_answer="{reference}",
            response="{response}",
        )
        with_ref = "{reference}" in t
        user = t.replace("[Ground truth Answer]\n{reference}\n\n", "{reference_block}")
        if "{reference_block}" not in user:
            user = user.replace(
                "[Instruction]\n{instruction}\n", "[Instruction]\n{instruction}\n{reference_block}"
            )
        block = "[Ground truth Answer]\n{reference}\n\n" if with_ref else ""
        return PromptTemplate(
            f"flask:{path.name}#{prompt_id}",
            d["system_prompt"],
            user.rstrip() + "\nScore keys: {keys}",
            block,
            "{label}: {definition}\n{levels}",
            "Score {score}: {text}",
        )
    raise InputError(str(path), None, "prompt_id", f"no prompt with prompt_id {prompt_id}")


def rubrics_from_store(store: Store, dataset: str | None = None) -> dict[str, Rubric]:
    """A dataset's criteria (its own, else our shared taxonomy) with their scales; without a
    dataset, the shared taxonomy."""
    with store.read() as con:
        if dataset is None:
            rows = con.execute(SKILLS_TABLE).fetchall()
        else:
            rows = con.execute(DATASET_SKILLS_TABLE, [dataset]).fetchall()
    return {
        skill: Rubric(skill, label, definition or label, tuple(rubric or ()), lo, hi)
        for skill, label, _ab, _o, definition, rubric, lo, hi, _c in rows
    }


def load_flask_rubrics(path: str | Path) -> dict[str, Rubric]:
    """FLASK's skillset_description.json: [{Skill, Criteria, Scoring: {"1": …, "5": …}}]."""
    p = Path(path)
    try:
        entries = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as e:
        raise InputError(str(p), None, None, f"cannot read the rubric file ({e})") from e
    out = {}
    for i, e in enumerate(entries, 1):
        skill = normalise_skill(str(e.get("Skill", "")))
        if skill is None:
            raise InputError(str(p), i, "Skill", f"unknown FLASK skill {e.get('Skill')!r}")
        levels = tuple(e["Scoring"][k] for k in sorted(e["Scoring"], key=int))
        out[skill] = Rubric(skill, e["Skill"], e["Criteria"], levels, 1, len(levels))
    return out


def _rubric_text(t: PromptTemplate, r: Rubric) -> str:
    lo = int(r.scale_min)
    levels = "\n".join(
        t.rubric_level.format(score=lo + i, text=text) for i, text in enumerate(r.levels)
    )
    if not levels:
        levels = t.rubric_level.format(score=f"{r.scale_min:g}–{r.scale_max:g}", text="scale")
    return t.rubric_item.format(key=r.skill, label=r.label, definition=r.definition, levels=levels)


# Any spelling of an end mark inside model text (case, spaces): it cannot close its block.
_END = re.compile(
    "|".join(r"\[\s*" + r"\s+".join(map(re.escape, m[1:-1].split())) + r"\s*\]" for m in END_MARKS),
    re.IGNORECASE,
)


def _defuse(text: str) -> str:
    return _END.sub(lambda m: m.group(0)[:-1].rstrip() + " (quoted)]", text)


def build_messages(
    t: PromptTemplate, item: Item, rubrics: dict[str, Rubric], use_reference: bool = True
) -> list[dict]:
    """The chat messages of one call. Model text is inserted as data, never as template: a
    response cannot close its own block (the end mark inside it is defused)."""
    missing = [s for s in item.skills if s not in rubrics]
    if missing:
        raise NotFoundError(f"No rubric for {', '.join(missing)}: add it to the rubric file.")
    has_ref = use_reference and bool(item.reference and item.reference.strip())
    ref = t.reference_block.replace("{reference}", item.reference or "") if has_ref else ""
    fields = {
        "rubrics": "\n\n".join(_rubric_text(t, rubrics[s]) for s in item.skills),
        "instruction": item.instruction,
        "reference_block": ref,
        "response": _defuse(item.response),
        "keys": ", ".join(item.skills),
    }
    # One pass over the template only: braces inside model text are never read as fields.
    user = _FIELD.sub(lambda m: fields[m.group(1)], t.user)
    return [{"role": "system", "content": t.system}, {"role": "user", "content": user}]

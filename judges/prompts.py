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
from analysis.ingest.file_checks import MB, regular_file

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
# A prompt or rubric is a few KB (FLASK's largest: 14 KB): a bigger file is not one, and a
# visitor must not make the server read the store or a log into memory.
PROMPT_FILE_LIMIT = 2 * MB
TEMPLATE_TEXTS = ("version", "system", "user", "reference_block", "rubric_item", "rubric_level")
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


def _from_json(d: object, where: str) -> PromptTemplate:
    if not isinstance(d, dict):
        raise InputError(
            where, None, None, f"expected a JSON object (version, system, user), got {_kind(d)}"
        )
    for key in TEMPLATE_TEXTS:
        if key in ("version", "system", "user") and key not in d:
            raise InputError(where, None, key, "missing in the prompt template")
        if key in d and not isinstance(d[key], str):
            raise InputError(where, None, key, f"expected text, got {_kind(d[key])}")
    t = PromptTemplate(
        d["version"],
        d["system"],
        d["user"],
        d.get("reference_block", ""),
        d.get("rubric_item", PromptTemplate.rubric_item),
        d.get("rubric_level", PromptTemplate.rubric_level),
    )
    _check_fields(t, where)
    return t


def _check_fields(t: PromptTemplate, where: str) -> None:
    """Format the rubric parts once with stand-ins: an unknown ``{field}`` or a lone brace
    is reported here, naming the file, not as a crash at the first call."""
    for name, text, fields in (
        ("rubric_item", t.rubric_item, {"key": "", "label": "", "definition": "", "levels": ""}),
        ("rubric_level", t.rubric_level, {"score": 1, "text": ""}),
    ):
        try:
            text.format(**fields)
        except (KeyError, IndexError, ValueError) as e:
            known = ", ".join("{" + f + "}" for f in fields)
            raise InputError(
                where, None, name, f"not a valid template ({e!r}); it may use {known}"
            ) from e


def _kind(value: object) -> str:
    return {dict: "an object", list: "a list", str: "text", type(None): "null"}.get(
        type(value), f"a {type(value).__name__}"
    )


def read_text(path: Path, name: str, expected: str) -> str:
    """The text of a prompt or rubric file, or an ``InputError`` naming ``name`` and what is
    wrong: not a regular file (a folder, a pipe, a device, a link loop), over
    ``PROMPT_FILE_LIMIT``, binary (the store itself) or not UTF-8, or empty."""
    try:
        regular_file(path, name, expected=expected, capped=False)  # the cap is ours, below
        with path.open("rb") as f:  # capped: the file may grow between the check and the read
            data = f.read(PROMPT_FILE_LIMIT + 1)
    except OSError as e:
        raise InputError(name, None, None, f"cannot be read ({e.strerror or e})") from e
    except ValueError as e:  # a NUL in the path
        raise InputError(name, None, None, f"not a usable file name ({e})") from e
    if len(data) > PROMPT_FILE_LIMIT:
        limit = f"over {PROMPT_FILE_LIMIT // MB} MB, too big for"
        raise InputError(name, None, None, f"{limit} {expected}")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise InputError(
            name, None, None, f"not UTF-8 text at byte {e.start + 1} (binary?); expected {expected}"
        ) from e
    if "\x00" in text:
        raise InputError(name, None, None, f"a binary file (NUL bytes); expected {expected}")
    if not text.strip():
        raise InputError(name, None, None, f"the file is empty; expected {expected}")
    return text


def _json(text: str, where: str, line: int | None = None) -> object:
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise InputError(where, line or e.lineno, None, f"not JSON ({e.msg})") from e
    except RecursionError as e:
        raise InputError(where, line, None, "not JSON a prompt could be: nested too deeply") from e


def _load_file(spec: str) -> PromptTemplate:
    path, _, pick = spec.partition("#")
    p = Path(path)
    if p.suffix == ".json":
        if pick:
            raise InputError(spec, None, None, "'#' picks a prompt of a .jsonl file only")
        return _from_json(_json(read_text(p, path, _PROMPT), path), path)
    if pick and not (pick.isascii() and pick.isdigit()):
        raise InputError(spec, None, None, f"'#{pick}' is not a prompt_id: write #1 or #2")
    return _from_flask_jsonl(p, int(pick) if pick else 2)


_PROMPT = "a prompt template (.json) or FLASK's prompt.jsonl"


def _from_flask_jsonl(path: Path, prompt_id: int) -> PromptTemplate:
    """FLASK's gpt_review prompt.jsonl: {prompt1}{skills}{question}{sample_answer}{response}."""
    text = read_text(path, str(path), _PROMPT)
    for line_no, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        d = _json(line, str(path), line_no)
        if not isinstance(d, dict):
            raise InputError(str(path), line_no, None, f"expected a JSON object, got {_kind(d)}")
        if d.get("prompt_id") != prompt_id:
            continue
        try:
            return _flask_prompt(d, path, prompt_id)
        except (KeyError, TypeError, AttributeError) as e:
            field = e.args[0] if isinstance(e, KeyError) else None
            problem = "missing" if field else "expected prompt_template, system_prompt and "
            problem += "" if field else "defaults {prompt1, prompt2} as text"
            raise InputError(str(path), line_no, field, problem) from e
        except (IndexError, ValueError) as e:
            raise InputError(
                str(path), line_no, "prompt_template", f"not a valid template ({e})"
            ) from e
    raise InputError(str(path), None, "prompt_id", f"no prompt with prompt_id {prompt_id}")


def _flask_prompt(d: dict, path: Path, prompt_id: int) -> PromptTemplate:
    t = d["prompt_template"].format(
        prompt1=d["defaults"]["prompt1"],
        prompt2=d["defaults"]["prompt2"],
        skills="{rubrics}",
        question="{instruction}",
        sample_answer="{reference}",
        response="{response}",
    )
    if not isinstance(d["system_prompt"], str):
        raise TypeError("system_prompt")
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
    entries = _json(read_text(p, str(p), _RUBRICS), str(p))
    if not isinstance(entries, list) or not entries:
        got = "an empty list" if entries == [] else _kind(entries)
        raise InputError(str(p), None, None, f"expected {_RUBRICS}, got {got}")
    out = {}
    for i, e in enumerate(entries, 1):
        r = _flask_rubric(e, str(p), i)
        out[r.skill] = r
    return out


_RUBRICS = "a rubric file: a JSON list of {Skill, Criteria, Scoring} (skillset_description.json)"


def _flask_rubric(e: object, where: str, i: int) -> Rubric:
    if not isinstance(e, dict):
        raise InputError(where, None, None, f"entry {i}: expected an object, got {_kind(e)}")
    for key, kind in (("Skill", str), ("Criteria", str), ("Scoring", dict)):
        if not isinstance(e.get(key), kind):
            got = "nothing" if key not in e else _kind(e[key])
            want = "text" if kind is str else 'an object {"1": text, …, "5": text}'
            raise InputError(where, None, key, f"entry {i}: expected {want}, got {got}")
    skill = normalise_skill(e["Skill"])
    if skill is None:
        raise InputError(where, None, "Skill", f"entry {i}: unknown FLASK skill {e['Skill']!r}")
    scoring = e["Scoring"]
    keys = [k for k in scoring if k.strip().isascii() and k.strip().isdigit()]
    texts = all(isinstance(v, str) for v in scoring.values())
    if not scoring or len(keys) != len(scoring) or not texts:
        raise InputError(where, None, "Scoring", f'entry {i}: expected {{"1": text, …, "5": text}}')
    levels = tuple(scoring[k] for k in sorted(keys, key=int))
    return Rubric(skill, e["Skill"], e["Criteria"], levels, 1, len(levels))


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

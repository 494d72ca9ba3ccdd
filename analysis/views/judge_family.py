"""Which family each LLM judge and each model belongs to ("openai", "anthropic", ...), as the
self-preference section reads it: a judge of family F scoring F's models.

The mapping is data people edit (the ``families`` table, schema 6). A name without a row has no
family and is left out of the self-preference comparison, said on the page: a guessed family
would decide the result behind the user's back. ``guess_families`` offers a guess from the names
that the user confirms before it is saved.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

import pandas as pd

from analysis.core.errors import InputError
from analysis.core.names import check_name, name_problem
from analysis.core.store import Store

KINDS = ("judge", "model")
COLUMNS = ["kind", "name", "family"]
SOURCE = "family mapping"  # what an InputError names as its "file"

READ_FAMILIES = "SELECT kind, name, family FROM families ORDER BY kind, name"
DELETE_FAMILIES = "DELETE FROM families"
UPSERT_FAMILY = "INSERT OR REPLACE INTO families (kind, name, family) VALUES (?, ?, ?)"
# The LLM judges and models of a dataset: what the editor lists so each can be given a family.
NAMES_OF_DATASET = """
SELECT 'judge' AS kind, s.judge AS name
FROM latest_scores s JOIN judges j USING (judge)
WHERE s.dataset = ? AND j.kind = 'llm'
GROUP BY s.judge
UNION ALL
SELECT 'model' AS kind, model AS name FROM responses WHERE dataset = ? GROUP BY model
ORDER BY kind, name
"""

# Name fragments → family, first match wins (so "gpt4all" before "gpt"). A fragment of five
# letters or more may appear anywhere in the lower-cased name; a shorter one must be a whole
# word of it, or start one followed by a digit ("gpt-4", "gpt4", "palm2", but not "optimus").
GUESSES: tuple[tuple[str, str], ...] = (
    ("gpt4all", "nomic"),
    ("chatgpt", "openai"),
    ("davinci", "openai"),
    ("openai", "openai"),
    ("gpt", "openai"),
    ("claude", "anthropic"),
    ("anthropic", "anthropic"),
    ("llama", "meta"),
    ("opt", "meta"),
    ("bard", "google"),
    ("gemini", "google"),
    ("gemma", "google"),
    ("palm", "google"),
    ("flan", "google"),
    ("vicuna", "lmsys"),
    ("alpaca", "stanford"),
    ("koala", "berkeley"),
    ("tulu", "allenai"),
    ("olmo", "allenai"),
    ("wizardlm", "microsoft"),
    ("orca", "microsoft"),
    ("phi", "microsoft"),
    ("mistral", "mistral"),
    ("mixtral", "mistral"),
    ("qwen", "alibaba"),
    ("deepseek", "deepseek"),
    ("falcon", "tii"),
    ("cohere", "cohere"),
    ("command", "cohere"),
    ("stablelm", "stability"),
    ("mpt", "mosaicml"),
    ("dolly", "databricks"),
)
LONG_FRAGMENT = 5
_WORD = re.compile(r"[a-z0-9]+")


def families(store: Store) -> pd.DataFrame:
    """The stored mapping: kind ('judge' / 'model'), name, family; sorted."""
    with store.read() as con:
        out = con.execute(READ_FAMILIES).df()
    return out if not out.empty else pd.DataFrame(columns=COLUMNS)


def family_of(store: Store) -> dict[str, dict[str, str]]:
    """The mapping as {'judge': {name: family}, 'model': {name: family}}."""
    table = families(store)
    return {
        k: dict(zip(g["name"], g["family"], strict=True))
        for k, g in table.groupby("kind")
        if k in KINDS
    } | {k: {} for k in KINDS if k not in set(table["kind"])}


def check_rows(rows: Iterable[Mapping[str, Any]] | pd.DataFrame) -> list[tuple[str, str, str]]:
    """Validated (kind, name, family) rows; raises InputError naming the row (1-based), the
    field and what was expected. A row without a family (the editor's unmapped names, an empty
    line) is dropped: that name stays unmapped. A name given twice must carry one family."""
    records = rows.to_dict("records") if isinstance(rows, pd.DataFrame) else list(rows)
    out: dict[tuple[str, str], str] = {}
    for line, row in enumerate(records, start=1):
        kind, name, family = (_text(row.get(c)) for c in COLUMNS)
        if not family and not name:
            continue
        if kind not in KINDS:
            raise InputError(SOURCE, line, "kind", f"'judge' or 'model' expected, got {kind!r}")
        if kind == "judge":  # the scorer rules too: no kind:… names
            name = check_name("judge", name, source=SOURCE, line=line, field="name")
        else:
            name = _named(name, line, "name", "model name")
        if not family:  # the editor lists unmapped names with an empty family: still unmapped
            continue
        family = _named(family, line, "family", "family name")
        if out.get((kind, name), family) != family:
            raise InputError(SOURCE, line, "family", (
                f"the {kind} {name!r} is given two families ({out[(kind, name)]!r} and "
                f"{family!r}); keep one row per name"))  # fmt: skip
        out[(kind, name)] = family
    return [(k, n, f) for (k, n), f in sorted(out.items())]


def write_families(
    con, rows: Iterable[Mapping[str, Any]] | pd.DataFrame, *, replace_all: bool = False
) -> int:
    """Inside the caller's write transaction (``with store.write() as con``): store ``rows``
    (validated first, so a bad row leaves the table untouched), each replacing the row of the
    same (kind, name); with ``replace_all`` the mapping becomes exactly ``rows``. Returns the
    rows written. Imports (the demo panel, an export folder) write families through the batch
    writer instead (``Batch.families``), in the transaction that writes their scores."""
    clean = check_rows(rows)
    if replace_all:
        con.execute(DELETE_FAMILIES)
    if clean:
        con.executemany(UPSERT_FAMILY, [list(r) for r in clean])
    return len(clean)


def set_families(store: Store, rows: Iterable[Mapping[str, Any]] | pd.DataFrame) -> int:
    """Replace the stored mapping by ``rows`` (kind, name, family; a row without a family
    leaves that name unmapped), in one transaction: all saved or, on a bad row (InputError),
    nothing changed. Returns the rows stored."""
    clean = [dict(zip(COLUMNS, r, strict=True)) for r in check_rows(rows)]
    # Checked before the file is opened too: a typo never takes the write lock.
    with store.write() as con:
        return write_families(con, clean, replace_all=True)


def guess_family(name: str) -> str | None:
    """A family guessed from a judge's or model's name, or None: e.g. "gpt-4 (simulated)" →
    openai, "claude_v1" → anthropic, "llama2_chat_70b" → meta."""
    low = str(name).lower()
    words = _WORD.findall(low)
    for fragment, family in GUESSES:
        if len(fragment) >= LONG_FRAGMENT:
            if fragment in low:
                return family
        elif any(_starts_word(w, fragment) for w in words):
            return family
    return None


def _starts_word(word: str, fragment: str) -> bool:
    rest = word[len(fragment) :]
    return word.startswith(fragment) and (not rest or rest[0].isdigit())


def editor_table(store: Store, dataset: str, guessed: bool = False) -> pd.DataFrame:
    """What the page's editor shows: every stored row, then each LLM judge and model of the
    dataset not mapped yet with an empty family (unmapped = left out), plus ``guess``. With
    ``guessed``, empty families are filled with their guess (``with_guesses``): a proposal the
    user reviews, saved only by ``set_families``."""
    stored = families(store)
    with store.read() as con:
        present = con.execute(NAMES_OF_DATASET, [dataset, dataset]).df()
    seen = set(zip(stored["kind"], stored["name"], strict=True))
    missing = present[[(k, n) not in seen for k, n in zip(present["kind"], present["name"],
                                                           strict=True)]]  # fmt: skip
    out = pd.concat([stored, missing.assign(family="")], ignore_index=True)
    out["family"] = out["family"].fillna("")
    out["guess"] = [guess_family(n) or "" for n in out["name"]]
    out = out[[*COLUMNS, "guess"]].reset_index(drop=True)
    return with_guesses(out) if guessed else out


def with_guesses(table: pd.DataFrame) -> pd.DataFrame:
    """The editor's table with every empty family filled by its guess (where there is one):
    what the "guess from names" button proposes, saved only when the user presses Save."""
    out = table.copy()
    fam = out["family"].fillna("").astype(str).str.strip()
    guess = out["name"].map(lambda n: guess_family(n) or "")
    out["family"] = fam.where(fam != "", guess)
    return out


def _text(value: Any) -> str:
    if value is None or (isinstance(value, float) and value != value):  # NaN: an empty cell
        return ""
    return str(value).strip() if isinstance(value, str) else str(value)


def _named(value: str, line: int, field: str, what: str) -> str:
    """A model or family name under the rules of names (analysis/core/names.py)."""
    clean, problem = name_problem("criterion", value)
    if problem:
        raise InputError(SOURCE, line, field, problem.replace("criterion name", what))
    return clean

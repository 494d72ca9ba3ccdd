"""The sidebar's global filters as one typed record, shared by every page and query."""

from __future__ import annotations

from dataclasses import dataclass


def filter_sql(f, *, alias: str = "s", inst: str = "i") -> tuple[str, list]:
    """WHERE fragment (without WHERE) for Filters over latest_scores ``s`` joined to instances
    ``i``; returns the SQL and its bound parameters."""
    where = [f"{alias}.dataset = ?"]
    params: list = [f.dataset]
    if f.judge:
        where.append(f"{alias}.judge = ?")
        params.append(f.judge)
    if f.models:
        where.append(f"list_contains(?::VARCHAR[], {alias}.model)")
        params.append(list(f.models))
    if f.domains:
        where.append(f"list_has_any({inst}.domains, ?::VARCHAR[])")
        params.append(list(f.domains))
    if f.difficulties:
        where.append(f"list_contains(?::INTEGER[], {inst}.difficulty::INTEGER)")
        params.append([int(d) for d in f.difficulties])
    if f.source_tasks:
        where.append(f"list_contains(?::VARCHAR[], {inst}.source_task)")
        params.append(list(f.source_tasks))
    if f.flask_hard_only:
        where.append(f"{inst}.flask_hard")
    return " AND ".join(where), params


@dataclass(frozen=True)
class Filters:
    """Which scores a page looks at. Empty tuples mean "all"."""

    dataset: str
    judge: str | None = None
    models: tuple[str, ...] = ()
    domains: tuple[str, ...] = ()
    difficulties: tuple[int, ...] = ()
    source_tasks: tuple[str, ...] = ()
    flask_hard_only: bool = False


@dataclass(frozen=True)
class FilterOptions:
    """What the sidebar can offer for one dataset."""

    judges: tuple[str, ...]
    judge_kinds: dict[str, str]
    models: tuple[str, ...]
    domains: tuple[str, ...]
    difficulties: tuple[int, ...]
    source_tasks: tuple[str, ...]
    has_flask_hard: bool

"""The sidebar's global filters as one typed record, shared by every page and query."""

from __future__ import annotations

from dataclasses import dataclass


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

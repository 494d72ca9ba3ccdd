"""Judge backends behind one small interface, found by name. Heavy imports happen only when a
backend is created (torch and transformers for the local one)."""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Protocol

from analysis.core.errors import FinegrainError, NotFoundError
from judges.config import JudgeConfig

# name → module path (imported lazily) holding a ``create(config, *, concurrency) -> Backend``
BACKENDS = {
    "openai": "judges.backends.openai_compat",
    "openai-batch": "judges.backends.openai_batch",  # a whole run as batches (judges/batch_run.py)
    "transformers": "judges.backends.local_model",
}


@dataclass(frozen=True)
class Completion:
    text: str
    prompt_tokens: int
    completion_tokens: int
    latency_ms: float


class CallError(FinegrainError):
    """A call that did not produce an answer. ``retryable`` calls are tried again with backoff
    (honouring ``retry_after`` seconds when the server gave one); the others fail the item."""

    title = "Judge call failed"

    def __init__(
        self, message: str, *, retryable: bool, status: int | None = None, retry_after=None
    ) -> None:
        super().__init__(message)
        self.retryable, self.status = retryable, status
        self.retry_after: float | None = retry_after


class Backend(Protocol):
    async def complete(self, messages: list[dict]) -> Completion: ...

    async def aclose(self) -> None: ...


def _module(config: JudgeConfig):
    if config.backend not in BACKENDS:
        known = ", ".join(sorted(BACKENDS))
        raise NotFoundError(f"Unknown judge backend '{config.backend}'. Known backends: {known}.")
    return importlib.import_module(BACKENDS[config.backend])


def check(config: JudgeConfig) -> None:
    """Fail before a run starts (nothing written) when the backend cannot work here: an unknown
    name, or an extra that is not installed (``MissingExtraError`` names the install command)."""
    available = getattr(_module(config), "check_available", None)
    if available is not None:
        available()


def create(config: JudgeConfig, *, concurrency: int = 8) -> Backend:
    """The backend a judge configuration names; an unknown name lists the known ones.
    ``concurrency``: how many calls the run keeps in flight (a remote backend sizes its
    connection pool to it)."""
    return _module(config).create(config, concurrency=concurrency)

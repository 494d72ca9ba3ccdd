"""The OpenAI Batch API (``--backend openai-batch``) through the official SDK: upload a request
file (Files API), create a batch, read its state, cancel it, download its output and error
files. The key goes where a live call's would (``server_and_key``). Every SDK error becomes a
``BatchError`` saying whether it is worth trying again; what is retried is decided by the run
(judges/batch_run.py): reads freely, a creation only after looking for the batch it may have
made already (a lost answer must not become a second, paid-for batch)."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any

import openai

from analysis.core.errors import FinegrainError
from judges.backends.openai_compat import server_and_key
from judges.config import JudgeConfig

ENDPOINT = "/v1/chat/completions"  # what a batch's requests call
# The service's states in which a batch changes no more.
TERMINAL = ("completed", "failed", "expired", "cancelled")
WINDOW = "24h"  # the only completion window the service offers
# How far back a batch made for a file is looked for (the service lists newest first).
FIND_PAGES = 10


class BatchError(FinegrainError):
    """The batch service refused or could not be reached; ``retryable``: worth trying again."""

    title = "Batch service error"

    def __init__(self, message: str, *, retryable: bool) -> None:
        super().__init__(message)
        self.retryable = retryable


@dataclass(frozen=True)
class BatchState:
    """What the service says of one batch."""

    batch_id: str
    status: str
    input_file_id: str
    output_file_id: str | None = None
    error_file_id: str | None = None
    total: int = 0
    completed: int = 0
    failed: int = 0
    errors: str | None = None  # why the service failed the batch (its validation errors)

    @property
    def finished(self) -> bool:
        return self.status in TERMINAL


def _state(b: Any) -> BatchState:
    counts = b.request_counts
    errors = None
    if b.errors is not None and b.errors.data:
        errors = "; ".join(
            (f"line {e.line}: " if e.line else "") + f"{e.code or 'error'}: {e.message or ''}"
            for e in b.errors.data[:10]
        )
    return BatchState(
        b.id,
        b.status,
        b.input_file_id,
        b.output_file_id,
        b.error_file_id,
        counts.total if counts else 0,
        counts.completed if counts else 0,
        counts.failed if counts else 0,
        errors,
    )


def _wrap(e: Exception, doing: str) -> BatchError:
    if isinstance(e, openai.APIStatusError):
        code = e.status_code
        retry = code in (408, 409, 429) or code >= 500
        if code in (401, 403):  # the service's text may quote part of the key: not kept
            return BatchError(f"{doing}: HTTP {code} (check the API key variable)", retryable=False)
        return BatchError(f"{doing}: HTTP {code}: {e.message}", retryable=retry)
    if isinstance(e, openai.APITimeoutError):
        return BatchError(f"{doing}: timed out", retryable=True)
    if isinstance(e, openai.APIConnectionError):
        return BatchError(f"{doing}: connection failed", retryable=True)
    return BatchError(f"{doing}: {type(e).__name__}: {e}", retryable=False)


class BatchClient:
    """The batch service at the judge's base URL (default $OPENAI_BASE_URL, else OpenAI)."""

    def __init__(self, config: JudgeConfig) -> None:
        from judges.backends import CallError

        try:
            self.base_url, key = server_and_key(config)
        except CallError as e:
            raise BatchError(e.message, retryable=False) from e
        self.key_env = config.api_key_env if key else None  # journalled: the resume's key
        self.model = config.model
        # No SDK retries: a retried creation whose first answer was lost would be a second batch.
        self.sdk = openai.OpenAI(
            api_key=key or "unused", base_url=self.base_url, max_retries=0, timeout=config.timeout_s
        )

    def upload(self, name: str, data: bytes) -> str:
        """The id of the uploaded request file."""
        try:
            return self.sdk.files.create(file=(name, data, "application/jsonl"), purpose="batch").id
        except openai.OpenAIError as e:
            raise _wrap(e, f"uploading {name}") from e

    def create(self, input_file_id: str, metadata: dict[str, str]) -> BatchState:
        try:
            b = self.sdk.batches.create(
                input_file_id=input_file_id,
                endpoint=ENDPOINT,
                completion_window=WINDOW,
                metadata=metadata,
            )
        except openai.OpenAIError as e:
            raise _wrap(e, "creating the batch") from e
        return _state(b)

    def find(self, input_file_id: str) -> BatchState | None:
        """The batch made for this file, if the service has one (a creation whose answer was
        lost, or a process killed before it wrote the batch's id down)."""
        try:
            page = self.sdk.batches.list(limit=100)
            for _ in range(FIND_PAGES):
                for b in page.data:
                    if b.input_file_id == input_file_id:
                        return _state(b)
                if not page.has_next_page():
                    return None
                page = page.get_next_page()
        except openai.OpenAIError as e:
            raise _wrap(e, "listing batches") from e
        return None

    def get(self, batch_id: str) -> BatchState:
        try:
            return _state(self.sdk.batches.retrieve(batch_id))
        except openai.OpenAIError as e:
            raise _wrap(e, f"reading batch {batch_id}") from e

    def cancel(self, batch_id: str) -> BatchState:
        try:
            return _state(self.sdk.batches.cancel(batch_id))
        except openai.OpenAIError as e:
            raise _wrap(e, f"cancelling batch {batch_id}") from e

    def download(self, file_id: str) -> bytes:
        try:
            return self.sdk.files.content(file_id).content
        except openai.OpenAIError as e:
            raise _wrap(e, f"downloading file {file_id}") from e

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.sdk.close()


def create(config: JudgeConfig, *, concurrency: int = 8) -> Any:
    """Not a call-by-call backend: a run with this backend is sent as batches by the runner."""
    raise FinegrainError(
        "openai-batch sends a whole judging run as batches (the judge command or Re-judge); "
        "for single calls use the openai backend.",
        title="Not available here",
    )

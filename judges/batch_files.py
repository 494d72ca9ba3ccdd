"""The OpenAI Batch API's files, as pure functions: a run's request lines (each the live chat
request's exact bytes, under the call's cache key as ``custom_id``), split into parts at the
service's limits, and its output and error files read back into answers, the way a live answer
is read (``chat_answer``), then into the records the live runner writes (``records``: parsed by
the same function), so an item gets the same judgment whichever way it went."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

from analysis.core.errors import InputError
from judges.backends import CallError
from judges.backends.openai_batch import ENDPOINT
from judges.backends.openai_compat import chat_answer
from judges.outcome import RunSummary
from judges.parsing import parse_judgment
from judges.records import CallRecord

# The OpenAI Batch API's limits per batch: requests, and bytes of its input file.
MAX_REQUESTS = 50_000
MAX_BYTES = 200 * 2**20


@dataclass(frozen=True)
class Answer:
    """One request's outcome in a batch's output or error file."""

    custom_id: str
    text: str | None  # None: the request failed (``error`` says why)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    error: str | None = None


def request_line(custom_id: str, body: bytes) -> bytes:
    """One line of a batch's input file: the chat request's bytes as the live call sends them."""
    head = {"custom_id": custom_id, "method": "POST", "url": ENDPOINT}
    return json.dumps(head)[:-1].encode() + b', "body": ' + body + b"}\n"


def split(
    lines: Sequence[bytes], *, max_requests: int = MAX_REQUESTS, max_bytes: int = MAX_BYTES
) -> list[range]:
    """Consecutive parts of ``lines`` (as index ranges), each within the service's limits. A
    single line over ``max_bytes`` cannot be sent at all: an ``InputError`` names it."""
    parts: list[range] = []
    start, size = 0, 0
    for i, line in enumerate(lines):
        if len(line) > max_bytes:
            raise InputError(
                "batch request", None, f"line {i + 1}",
                f"{len(line):,} bytes, more than the {max_bytes:,} a batch file may hold",
            )  # fmt: skip
        if i > start and (i - start >= max_requests or size + len(line) > max_bytes):
            parts.append(range(start, i))
            start, size = i, 0
        size += len(line)
    if len(lines) > start:
        parts.append(range(start, len(lines)))
    return parts


def read_results(data: bytes) -> tuple[list[Answer], list[str]]:
    """The answers of an output or error file, and the lines that could not be read (by number;
    their requests stay unanswered, recorded as failed by the caller)."""
    answers, problems = [], []
    for n, raw in enumerate(data.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            line = json.loads(raw)
        except ValueError:
            problems.append(f"line {n}: not JSON")
            continue
        if not isinstance(line, dict) or not isinstance(line.get("custom_id"), str):
            problems.append(f"line {n}: no custom_id")
            continue
        answers.append(_answer(line))
    return answers, problems


def _answer(line: dict) -> Answer:
    cid = line["custom_id"]
    error, response = line.get("error"), line.get("response")
    if error:
        return Answer(cid, None, error=_error_text(error))
    if not isinstance(response, dict):
        return Answer(cid, None, error="no response in the batch's file")
    status, body = response.get("status_code"), response.get("body")
    if status != 200:
        detail = _error_text(body.get("error")) if isinstance(body, dict) else ""
        return Answer(cid, None, error=f"HTTP {status}" + (f" ({detail})" if detail else ""))
    try:
        text, pt, ct = chat_answer(body)
    except CallError as e:
        return Answer(cid, None, error=e.message)
    if not text.strip():  # as live: a glitch, not an answer (live asks again; a batch resubmits)
        return Answer(cid, None, pt, ct, error="empty output")
    return Answer(cid, text, pt, ct)


def _error_text(error: object) -> str:
    """``code: message`` of the service's error object (its wording, kept as text)."""
    if not isinstance(error, dict):
        return str(error) if error else ""
    code, message = error.get("code"), error.get("message")
    text = ": ".join(str(x) for x in (code, message) if x)
    return text or f"error {json.dumps(error)[:200]}"


# Why a request has no line in a finished batch's files, by the part's status.
UNANSWERED = {
    "cancelled": "not run: the batch was cancelled",
    "expired": "batch_expired: not run within the batch service's 24 h window",
    "forgotten": "given up (finegrain batches --forget): no answer of the service was stored",
}


class Where(NamedTuple):
    """Whose answers these are: the run, its judge and dataset, the criteria's scales."""

    run_id: str
    judge: str
    dataset: str
    scales: dict


def records(w: Where, cid: str, items: list, a: Answer | None, status: str,
            errors: str | None) -> list[CallRecord]:  # fmt: skip
    """The records of the items one request asks for (``a``: its answer, None when its batch,
    in ``status``, has no line for it); tokens go on the first item (paid once)."""
    missing = UNANSWERED.get(status) or (
        f"the batch failed: {errors}" if status == "failed" else "no answer in the batch's files"
    )
    out = []
    for i, (instance_id, model, skills) in enumerate(items):
        pt, ct = (a.prompt_tokens, a.completion_tokens) if a is not None and i == 0 else (0, 0)
        if a is None or a.text is None:  # an empty answer's tokens are paid all the same
            row = (w.run_id, w.dataset, instance_id, model, w.judge, cid, None, None, "error")
            out.append(CallRecord(*row, a.error if a is not None else missing, None, pt, ct))
        else:
            out.append(record(w, instance_id, model, skills, cid, a.text, (pt, ct), i > 0))
    return out


def record(w: Where, instance_id: str, model: str, skills: tuple[str, ...], cid: str, text: str,
           tokens: tuple[int, int] = (0, 0), cached: bool = False) -> CallRecord:  # fmt: skip
    """An answer as the live runner records it: parsed by the same function."""
    parsed = parse_judgment(text, skills, w.scales)
    return CallRecord(w.run_id, w.dataset, instance_id, model, w.judge, cid, text,
                      parsed.rationale, parsed.status, parsed.error, None, int(tokens[0]),
                      int(tokens[1]), parsed.scores, cached)  # fmt: skip


def tally(s: RunSummary, records: list[CallRecord]) -> None:
    for r in records:
        if r.parse_status == "error":
            s.errors += 1
            if len(s.failures) < 20:
                s.failures.append(f"{r.instance_id}/{r.model}: {r.error}")
        elif r.cached:
            s.cache_hits += 1
        elif r.parse_status == "ok":
            s.ok += 1
        else:
            s.failed += 1
        s.prompt_tokens += r.prompt_tokens
        s.completion_tokens += r.completion_tokens

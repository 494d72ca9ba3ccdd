"""Any OpenAI-compatible chat API (OpenAI, Azure, vLLM, Ollama, llama.cpp server …), configured
by the official SDK (base URL, key, its default headers) and called through its HTTP library
(httpx2). Nothing retries here: the runner retries with backoff and honours Retry-After, so every
attempt is counted and cancellable.

Each call costs CPU on the runner's event loop, and at C calls in flight every answer that comes
back waits for the others' (a run at C = 128 and 200 ms has ~1.5 ms per call in all; a busy
machine has less). What the SDK's per-call path does beyond sending bytes is done once here:
- the request: the SDK's parameter transform (a recursive, type-introspecting walk of every
  message), option copies, URL merging and header building cost ~1 ms a call; this module sends
  the same bytes (same body, same headers, computed once; tests/judges/test_concurrency.py
  compares them with ``chat.completions.create``);
- the answer: read as JSON, three fields taken, instead of a pydantic model built per call;
  errors map to the same messages as the SDK's exceptions did (the same test, every fault);
- the connections: kept alive for every concurrent call (httpx keeps 100 by default, so a run of
  128 calls at once would reconnect all the time), spread over a few pools of at most
  ``POOL_SIZE`` connections, each call on the least busy one: httpx checks every idle connection
  of a pool for each request, so one pool of C connections costs O(C) per call."""

from __future__ import annotations

import json
import math
import os
import ssl
import time
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any, NamedTuple

import anyio
import httpx2
import openai

from judges.backends import CallError, Completion
from judges.config import JudgeConfig

_DEFAULT_URL = "https://api.openai.com/v1"


# A longer wait is not a rate limit any more (a quota, an outage): the item fails at once, with
# the requested wait in its reason, instead of stalling the run retry after retry.
MAX_RETRY_AFTER_S = 120.0

# Connections per pool: small enough that a pool's per-request scan stays cheap.
POOL_SIZE = 8

# What the SDK wraps as APIConnectionError (its message names that class; so does ours).
_CONNECTION_ERRORS = (httpx2.RequestError, ssl.SSLError, anyio.EndOfStream)


def _same(a: str, b: str) -> bool:
    return a.rstrip("/") == b.rstrip("/")


def _retry_after(e: _StatusError) -> float | None:
    """Seconds the server asked us to wait: retry-after-ms, else Retry-After (seconds or an
    HTTP date), not capped; None when absent or not a sane finite number."""
    headers = e.response.headers if e.response is not None else {}
    seconds = None
    try:
        if headers.get("retry-after-ms") is not None:
            seconds = float(headers["retry-after-ms"]) / 1000
        elif headers.get("retry-after") is not None:
            value = headers["retry-after"]
            try:
                seconds = float(value)
            except ValueError:
                when = parsedate_to_datetime(value)
                seconds = (when - datetime.now(UTC)).total_seconds()
    except (TypeError, ValueError, IndexError):
        return None
    if seconds is None or not math.isfinite(seconds):
        return None
    return max(seconds, 0.0)


def _status_error(e: _StatusError) -> CallError:
    retry = e.status_code in (408, 409, 429) or e.status_code >= 500
    hint = " (check the API key variable)" if e.status_code in (401, 403) else ""
    wait = _retry_after(e)
    if retry and wait is not None and wait > MAX_RETRY_AFTER_S:
        return CallError(
            f"HTTP {e.status_code}: the server asked to wait {wait:g} s (Retry-After), more "
            f"than the {MAX_RETRY_AFTER_S:g} s a run waits; run again later",
            retryable=False,
            status=e.status_code,
            retry_after=wait,
        )
    return CallError(
        f"HTTP {e.status_code}{hint}", retryable=retry, status=e.status_code, retry_after=wait
    )


class _StatusError(NamedTuple):
    """What ``_status_error`` reads of a failed answer: the two attributes of the SDK's
    APIStatusError it used to read."""

    status_code: int
    response: httpx2.Response


def pool_sizes(concurrency: int) -> list[int]:
    """Connections per pool: ``concurrency`` in all, in as few pools of ≤ POOL_SIZE as fit."""
    n = max(1, concurrency)
    k = -(-n // POOL_SIZE)
    return [n // k + (1 if i < n % k else 0) for i in range(k)]


def _limits(size: int) -> httpx2.Limits:
    """Every connection of the pool kept alive between its calls (a run's calls come back to
    back; 30 s also outlasts most backoffs)."""
    return httpx2.Limits(max_connections=size, max_keepalive_connections=size, keepalive_expiry=30)


def _malformed(what: str) -> CallError:
    return CallError(f"malformed response ({what})", retryable=True)


def _answer(r: httpx2.Response) -> tuple[str, Any, Any]:
    """(text, prompt tokens, completion tokens) of a 2xx answer. As the SDK read it: a JSON
    content type must parse; another is tried as JSON and is otherwise not a chat completion."""
    content_type = r.headers.get("content-type", "*").split(";")[0]
    try:
        data = json.loads(r.content)
    except ValueError as e:  # JSONDecodeError, or bytes that are not text
        if content_type.endswith("json"):
            raise _malformed(type(e).__name__) from e
        data = None
    return chat_answer(data)


def chat_answer(data: Any) -> tuple[str, Any, Any]:
    """(text, prompt tokens, completion tokens) of a chat completion's JSON (a live answer's, or
    one line of a batch's output file: the same reading, so the same judgment either way)."""
    if not isinstance(data, dict) or "choices" not in data:  # e.g. an HTML proxy page
        raise _malformed("not a chat completion")
    try:
        choices = data["choices"]
        message = choices[0]["message"] if choices else None
        text = (message.get("content") or message.get("refusal") or "") if message else ""
        usage = data.get("usage") or {}
        tokens = usage.get("prompt_tokens"), usage.get("completion_tokens")
    except (TypeError, KeyError, IndexError, AttributeError) as e:
        raise _malformed("not a chat completion") from e
    if not isinstance(text, str):
        raise _malformed("not a chat completion")
    return text, _count(tokens[0]), _count(tokens[1])


def _count(value: Any) -> int:
    """A token count as the server gave it; 0 when absent or not a sane number (a count must not
    cost the answer it came with)."""
    ok = isinstance(value, int | float) and not isinstance(value, bool)
    return int(value) if ok and math.isfinite(value) and value >= 0 else 0


def server_and_key(config: JudgeConfig) -> tuple[str, str | None]:
    """The server a judge's calls go to, and the operator's key if it may go there: the
    operator's key never goes to a server a dashboard visitor typed in."""
    operator_url = os.environ.get("OPENAI_BASE_URL") or _DEFAULT_URL
    base_url = config.base_url or operator_url
    trusted = config.trust_base_url or _same(base_url, operator_url)
    key = os.environ.get(config.api_key_env) if trusted else None
    if not key and base_url.rstrip("/") == _DEFAULT_URL:
        raise CallError(
            f"No API key: set the environment variable {config.api_key_env}.", retryable=False
        )
    return base_url, key


def chat_body(c: JudgeConfig, messages: list[dict]) -> bytes:
    """The chat request as ``chat.completions.create`` sends it: its keys in its order, JSON as
    the SDK writes it (a batch's request line carries the same bytes)."""
    out = {"model": c.model, "messages": messages, "max_tokens": c.max_tokens}
    if c.structured:
        out["response_format"] = {"type": "json_object"}
    out["temperature"] = c.temperature
    return json.dumps(out, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()


class OpenAIBackend:
    def __init__(self, config: JudgeConfig, concurrency: int = 8) -> None:
        self.config = config
        base_url, key = server_and_key(config)
        # The SDK only configures: the URL as it joins it, its headers (user agent, platform,
        # organisation and project from the environment). Local servers accept any key.
        tls = httpx2.create_ssl_context()  # one for all pools: each costs ~40 ms to load
        self.pools = [
            httpx2.AsyncClient(
                verify=tls, limits=_limits(size), timeout=config.timeout_s, follow_redirects=True
            )
            for size in pool_sizes(concurrency)
        ]
        sdk = openai.AsyncOpenAI(
            api_key=key or "unused",
            base_url=base_url,
            max_retries=0,
            timeout=config.timeout_s,
            http_client=self.pools[0],  # never sends; spares it building a client of its own
        )
        self.url = str(sdk.base_url) + "chat/completions"
        self.headers = {
            **{k: v for k, v in sdk.default_headers.items() if isinstance(v, str)},
            "Authorization": f"Bearer {sdk.api_key}",
            "x-stainless-retry-count": "0",
            "x-stainless-read-timeout": str(config.timeout_s),
        }
        # Calls in flight per pool. The runner never has more than ``concurrency`` in flight,
        # so the least busy pool always has a free connection (no call waits for the pool).
        self.busy = [0] * len(self.pools)

    def body(self, messages: list[dict]) -> bytes:
        return chat_body(self.config, messages)

    async def complete(self, messages: list[dict]) -> Completion:
        c = self.config
        content = self.body(messages)
        i = min(range(len(self.busy)), key=self.busy.__getitem__)
        self.busy[i] += 1
        start = time.perf_counter()
        try:
            r = await self.pools[i].post(self.url, content=content, headers=self.headers)
        except httpx2.TimeoutException as e:
            raise CallError(f"timed out after {c.timeout_s:g} s", retryable=True) from e
        except _CONNECTION_ERRORS as e:
            raise CallError("connection failed (APIConnectionError)", retryable=True) from e
        finally:
            self.busy[i] -= 1
        latency = (time.perf_counter() - start) * 1000
        if not r.is_success:
            raise _status_error(_StatusError(r.status_code, r))
        text, prompt_tokens, completion_tokens = _answer(r)
        return Completion(text, prompt_tokens, completion_tokens, latency)

    async def aclose(self) -> None:
        for pool in self.pools:
            await pool.aclose()


def create(config: JudgeConfig, *, concurrency: int = 8) -> OpenAIBackend:
    return OpenAIBackend(config, concurrency)

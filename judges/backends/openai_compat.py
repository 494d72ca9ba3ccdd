"""Any OpenAI-compatible chat API (OpenAI, Azure, vLLM, Ollama, llama.cpp server …) through the
official SDK (async). The SDK's own retries are off: the runner retries with backoff and
honours Retry-After, so every attempt is counted and cancellable."""

from __future__ import annotations

import math
import os
import time
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

import openai

from judges.backends import CallError, Completion
from judges.config import JudgeConfig

_DEFAULT_URL = "https://api.openai.com/v1"


# A longer wait is not a rate limit any more (a quota, an outage): the item fails at once, with
# the requested wait in its reason, instead of stalling the run retry after retry.
MAX_RETRY_AFTER_S = 120.0


def _same(a: str, b: str) -> bool:
    return a.rstrip("/") == b.rstrip("/")


def _retry_after(e: openai.APIStatusError) -> float | None:
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


def _status_error(e: openai.APIStatusError) -> CallError:
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


class OpenAIBackend:
    def __init__(self, config: JudgeConfig) -> None:
        self.config = config
        operator_url = os.environ.get("OPENAI_BASE_URL") or _DEFAULT_URL
        base_url = config.base_url or operator_url
        trusted = config.trust_base_url or _same(base_url, operator_url)
        # The operator's key never goes to a server a dashboard visitor typed in.
        key = os.environ.get(config.api_key_env) if trusted else None
        if not key and base_url.rstrip("/") == _DEFAULT_URL:
            raise CallError(
                f"No API key: set the environment variable {config.api_key_env}.", retryable=False
            )
        # Local servers (vLLM, Ollama) accept any key; the SDK insists on one.
        self.client = openai.AsyncOpenAI(
            api_key=key or "unused", base_url=base_url, max_retries=0, timeout=config.timeout_s
        )

    async def complete(self, messages: list[dict]) -> Completion:
        c = self.config
        extra = {"response_format": {"type": "json_object"}} if c.structured else {}
        start = time.perf_counter()
        try:
            r = await self.client.chat.completions.create(
                model=c.model,
                messages=messages,
                temperature=c.temperature,
                max_tokens=c.max_tokens,
                **extra,
            )
        except openai.APITimeoutError as e:
            raise CallError(f"timed out after {c.timeout_s:g} s", retryable=True) from e
        except openai.APIConnectionError as e:
            raise CallError(f"connection failed ({type(e).__name__})", retryable=True) from e
        except openai.APIStatusError as e:
            raise _status_error(e) from e
        except (openai.APIResponseValidationError, ValueError) as e:
            raise CallError(f"malformed response ({type(e).__name__})", retryable=True) from e
        latency = (time.perf_counter() - start) * 1000
        if not hasattr(r, "choices"):  # e.g. an HTML proxy page: the SDK returns it as a str
            raise CallError("malformed response (not a chat completion)", retryable=True)
        choice = r.choices[0] if r.choices else None
        msg = choice.message if choice else None
        text = (msg.content or getattr(msg, "refusal", None) or "") if msg else ""
        usage = r.usage
        return Completion(
            text,
            usage.prompt_tokens if usage else 0,
            usage.completion_tokens if usage else 0,
            latency,
        )

    async def aclose(self) -> None:
        await self.client.close()


def create(config: JudgeConfig) -> OpenAIBackend:
    return OpenAIBackend(config)

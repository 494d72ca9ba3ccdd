"""Any OpenAI-compatible chat API (OpenAI, Azure, vLLM, Ollama, llama.cpp server …) through the
official SDK (async). The SDK's own retries are off: the runner retries with backoff and
honours Retry-After, so every attempt is counted and cancellable."""

from __future__ import annotations

import os
import time

import openai

from judges.backends import CallError, Completion
from judges.config import JudgeConfig

_DEFAULT_URL = "https://api.openai.com/v1"


def _retry_after(e: openai.APIStatusError) -> float | None:
    value = e.response.headers.get("retry-after") if e.response is not None else None
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None  # an HTTP date: fall back to our own backoff


class OpenAIBackend:
    def __init__(self, config: JudgeConfig) -> None:
        self.config = config
        base_url = config.base_url or os.environ.get("OPENAI_BASE_URL") or _DEFAULT_URL
        key = os.environ.get(config.api_key_env)
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
            retry = e.status_code in (408, 409, 429) or e.status_code >= 500
            hint = " (check the API key variable)" if e.status_code in (401, 403) else ""
            raise CallError(
                f"HTTP {e.status_code}{hint}",
                retryable=retry,
                status=e.status_code,
                retry_after=_retry_after(e),
            ) from e
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

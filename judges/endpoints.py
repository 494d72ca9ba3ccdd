"""A pool of OpenAI-compatible servers (vLLM, SGLang, llama.cpp replicas) behind one judge.

Each endpoint has its own concurrency and rate limits. A call takes a free slot on whichever
endpoint has the most free slots, so work is spread by free capacity. An endpoint that fails
(connection refused or reset at once; ``FAULTS_TO_TAKE_OUT`` timeouts, 5xx or malformed answers
in a row) is taken out with its reason; the call that found it failing goes to another endpoint
without using one of its retries. After a backoff (doubling while it stays down) the next call
is sent there as the probe: an answer takes it back, a failure takes it out again and that call
goes elsewhere. The pool is a backend (``complete``), so the runner's cache, journal, retries and
parser are those of a single endpoint: the same item gets the same prompt, cache key and parse
whichever endpoint answered it (the base URL is not in the cache key).

The API key rule is a single endpoint's: each endpoint is an ``OpenAIBackend`` of the judge's
configuration with that base URL, so the key goes only where ``trust_base_url`` allows."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import urlsplit

from analysis.core.errors import InputError
from judges.backends import CallError, Completion
from judges.config import JudgeConfig
from judges.limits import RateLimiter

FAULTS_TO_TAKE_OUT = 3  # timeouts / 5xx / malformed answers in a row
PROBE_CAP_S = 60.0  # the longest wait before a taken-out endpoint is tried again
ENDPOINT_KEYS = ("url", "concurrency", "rpm", "tpm")


@dataclass(frozen=True)
class Endpoint:
    url: str
    concurrency: int = 8
    rpm: float | None = None
    tpm: float | None = None


def check_url(url: object, source: str, where: str = "base_url") -> str:
    """An http(s) URL with a host, as given (no trailing slash), else an ``InputError``."""
    if not isinstance(url, str) or not url.strip():
        raise InputError(source, None, where, f"expected a server URL, got {url!r}")
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise InputError(
            source, None, where, f"expected an http:// or https:// URL with a host, got {url!r}"
        )
    return url.strip().rstrip("/")


def _number(entry: Mapping, key: str, source: str, where: str, whole: bool) -> Any:
    value = entry.get(key)
    if value is None:
        return None
    ok = isinstance(value, int if whole else int | float) and not isinstance(value, bool)
    if not ok or value <= 0:
        kind = "a whole number" if whole else "a number"
        raise InputError(source, None, f"{where}.{key}", f"expected {kind} above 0, got {value!r}")
    return value if whole else float(value)


def endpoints_from(
    value: object,
    source: str,
    *,
    concurrency: int = 8,
    rpm: float | None = None,
    tpm: float | None = None,
) -> tuple[Endpoint, ...]:
    """Endpoints from a URL, a list of URLs or a list of ``{url, concurrency, rpm, tpm}``
    mappings (a judge file's ``base_url``); the keyword values apply where an entry gives none.
    A bad list raises an ``InputError`` naming ``source`` and the entry."""
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, Sequence) or isinstance(items, str) or not items:
        raise InputError(source, None, "base_url", "expected a URL or a non-empty list of URLs")
    out: list[Endpoint] = []
    for i, entry in enumerate(items):
        where = f"base_url[{i + 1}]"
        if isinstance(entry, Mapping):
            unknown = [str(k) for k in entry if k not in ENDPOINT_KEYS]
            if unknown:
                raise InputError(
                    source, None, where,
                    f"unknown key {unknown[0]!r}; an endpoint has {', '.join(ENDPOINT_KEYS)}",
                )  # fmt: skip
            url = check_url(entry.get("url"), source, f"{where}.url")
            c = _number(entry, "concurrency", source, where, whole=True) or concurrency
            r = _number(entry, "rpm", source, where, whole=False) or rpm
            t = _number(entry, "tpm", source, where, whole=False) or tpm
            out.append(Endpoint(url, c, r, t))
        else:
            out.append(Endpoint(check_url(entry, source, where), concurrency, rpm, tpm))
    seen: set[str] = set()
    for i, e in enumerate(out):
        if e.url in seen:
            raise InputError(source, None, f"base_url[{i + 1}]", f"{e.url} is listed twice")
        seen.add(e.url)
    return tuple(out)


def fault(e: CallError) -> str | None:
    """What an error says about the endpoint: "down" (take it out now), "fault" (one more in a
    row), or None (the call's own problem: a 4xx, a 429, an empty answer)."""
    if e.status is None and e.message.startswith("connection failed"):
        return "down"
    if e.status is None and e.message.startswith(("timed out", "malformed response")):
        return "fault"
    return "fault" if e.status is not None and e.status >= 500 else None


class Member:
    """One endpoint of the pool: its backend, its limits, what it has in flight, its health."""

    def __init__(self, spec: Endpoint, backend: Any) -> None:
        self.spec, self.backend = spec, backend
        self.limiter = RateLimiter(spec.rpm, spec.tpm)
        self.busy = 0
        self.faults = 0  # endpoint faults in a row
        self.out: str | None = None  # why it was taken out (None: in the pool)
        self.retry_at = 0.0  # monotonic time of its next probe
        self.probe_wait = 0.0
        self.probing = False
        self.calls = 0  # answers it gave

    def free(self, now: float) -> int:
        """Calls it may take now: its free slots (none while a 429 pauses it); a taken-out
        one: one probe once due."""
        if self.out is None:
            return self.spec.concurrency - self.busy if now >= self.limiter.resume_at else 0
        return 1 if not self.probing and now >= self.retry_at else 0

    def wait(self, now: float) -> float | None:
        """Seconds until it may take a call again without another one ending (None: only then)."""
        if self.out is not None:
            return None if self.probing else self.retry_at - now
        return self.limiter.resume_at - now if now < self.limiter.resume_at else None


class PoolBackend:
    """Several endpoints as one backend (see the module doc). ``notes``: where taking out and
    taking back are written, as they happen (the run's summary list)."""

    def __init__(
        self,
        config: JudgeConfig,
        endpoints: Sequence[Endpoint],
        *,
        probe_s: float = 5.0,
        notes: list[str] | None = None,
        make: Callable[[JudgeConfig, int], Any] | None = None,
    ) -> None:
        if make is None:
            from judges.backends.openai_compat import OpenAIBackend as make
        self.members = [Member(e, make(replace(config, base_url=e.url), e.concurrency))
                        for e in endpoints]  # fmt: skip
        self.probe_s = probe_s
        self.max_tokens = config.max_tokens  # a call's token estimate for a tpm limit
        self.notes = notes if notes is not None else []
        self.changed = asyncio.Condition()

    @property
    def concurrency(self) -> int:
        return sum(m.spec.concurrency for m in self.members)

    async def _take(self) -> tuple[Member, bool]:
        """The member with the most free capacity (a due probe first), waiting for one; and
        whether this call is its probe."""
        async with self.changed:
            while True:
                now = time.monotonic()
                if self._up() == 0:  # all out: every call tries, as with one server (the
                    # runner's retries bound it), and the first answer takes its server back
                    ready = [m for m in self.members if m.busy < m.spec.concurrency]
                    if ready:
                        m = min(ready, key=lambda m: m.busy)
                        m.busy += 1
                        return m, False
                due = [m for m in self.members if m.out is not None and m.free(now)]
                ready = due or [m for m in self.members if m.free(now) > 0]
                if ready:
                    m = max(ready, key=lambda m: m.free(now))
                    m.busy += 1
                    m.probing = m.out is not None
                    return m, m.probing
                waits = [w for m in self.members if (w := m.wait(now)) is not None]
                timeout = max(0.01, min(waits)) if waits else None
                with contextlib.suppress(TimeoutError):  # a probe or a pause is due
                    await asyncio.wait_for(self.changed.wait(), timeout)

    async def _give(self, m: Member, probe: bool) -> None:
        async with self.changed:
            m.busy -= 1
            m.probing = m.probing and not probe
            self.changed.notify_all()

    def _up(self) -> int:
        return sum(1 for m in self.members if m.out is None)

    def _take_out(self, m: Member, reason: str) -> None:
        if m.out is None:
            m.probe_wait = self.probe_s
            self.notes.append(f"endpoint {m.spec.url} taken out: {reason}")
        else:  # a failed probe: wait longer before the next
            m.probe_wait = min(PROBE_CAP_S, max(self.probe_s, m.probe_wait * 2))
        m.out, m.faults = reason, 0
        m.retry_at = time.monotonic() + m.probe_wait

    def _answered(self, m: Member) -> None:
        m.faults, m.calls = 0, m.calls + 1
        if m.out is not None:
            self.notes.append(f"endpoint {m.spec.url} taken back: it answered again")
            m.out = None

    def _failed(self, m: Member, e: CallError, probe: bool) -> bool:
        """Record a failed call; True when the endpoint was to blame and another may take it."""
        kind = fault(e)
        if kind is None:
            return False
        if m.out is not None and not probe:  # sent before another call took it out
            return any(x.out is None for x in self.members)
        m.faults += 1
        if kind == "down" or probe or m.faults >= FAULTS_TO_TAKE_OUT:
            self._take_out(m, e.message if m.faults <= 1 else f"{m.faults} × {e.message}")
            return any(x.out is None for x in self.members)
        return False

    async def complete(self, messages: list[dict]) -> Completion:
        # Each failover takes an endpoint out, so this ends (at most one round per endpoint).
        tokens = sum(len(str(x.get("content", ""))) for x in messages) // 4 + self.max_tokens
        for _ in range(2 * len(self.members) + 1):
            m, probe = await self._take()
            try:
                await m.limiter.acquire(tokens)
                done = await m.backend.complete(messages)
            except CallError as e:
                if self._failed(m, e, probe):
                    continue
                if e.status == 429 and e.retry_after:
                    # This endpoint waits; the runner's retry goes to another one instead of
                    # pausing the whole run as a single endpoint's 429 does.
                    m.limiter.pause(e.retry_after)
                    raise CallError(e.message, retryable=e.retryable, status=429) from e
                raise
            finally:
                await self._give(m, probe)
            self._answered(m)
            return done
        raise CallError("every endpoint of the pool failed", retryable=True)

    def status(self) -> list[str]:
        """One line per endpoint: its answers, and why it is out if it is."""
        return [f"{m.spec.url}: {m.calls:,} answers" + (f", out ({m.out})" if m.out else "")
                for m in self.members]  # fmt: skip

    async def aclose(self) -> None:
        for m in self.members:
            await m.backend.aclose()


def check(config: JudgeConfig, endpoints: Sequence[Endpoint]) -> None:
    """Before a run starts: a pool is of OpenAI-compatible servers."""
    if endpoints and config.backend != "openai":
        raise InputError(
            "judge", None, "base_url",
            f"several base URLs need the openai backend, not {config.backend}",
        )  # fmt: skip


def create(config: JudgeConfig, endpoints: Sequence[Endpoint], **kw: Any) -> PoolBackend:
    """The pool's backend (see ``PoolBackend``)."""
    check(config, endpoints)
    return PoolBackend(config, endpoints, **kw)

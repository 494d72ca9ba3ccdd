"""Requests- and tokens-per-minute limits as token buckets, shared by a run's concurrent calls."""

from __future__ import annotations

import asyncio
import time


class Bucket:
    """``rate`` units per minute, bursting up to one minute's worth."""

    def __init__(self, per_minute: float) -> None:
        self.rate = per_minute / 60.0
        self.capacity = float(per_minute)
        self.level = self.capacity
        self.stamp = time.monotonic()

    def wait_for(self, amount: float) -> float:
        """Seconds until ``amount`` is available (0: take it now)."""
        now = time.monotonic()
        self.level = min(self.capacity, self.level + (now - self.stamp) * self.rate)
        self.stamp = now
        amount = min(amount, self.capacity)  # one huge request must still pass eventually
        if self.level >= amount:
            self.level -= amount
            return 0.0
        return (amount - self.level) / self.rate


class RateLimiter:
    def __init__(self, rpm: float | None = None, tpm: float | None = None) -> None:
        self.buckets = [(Bucket(rpm), False)] if rpm else []
        if tpm:
            self.buckets.append((Bucket(tpm), True))
        self.lock = asyncio.Lock()
        self.resume_at = 0.0  # monotonic time before which nobody sends (a server's 429)

    def pause(self, seconds: float) -> None:
        """The server said "slow down" (429 + Retry-After): every task waits, not only the
        one that was told, so a run does not keep feeding a rate-limit storm."""
        self.resume_at = max(self.resume_at, time.monotonic() + seconds)

    async def acquire(self, tokens: int) -> None:
        """Wait until one request of about ``tokens`` tokens fits every limit."""
        while (wait := self.resume_at - time.monotonic()) > 0:
            await asyncio.sleep(wait)
        if not self.buckets:
            return
        async with self.lock:  # first come, first served
            for bucket, by_tokens in self.buckets:
                while (delay := bucket.wait_for(tokens if by_tokens else 1)) > 0:
                    await asyncio.sleep(delay)

"""Small in-process caches the views keep beside ``st.cache_data``: the CLI and a page's
separately cached sections then share one load of the same rows and one set of resamples.
Thread-safe (the app serves several sessions); the least recently used entries go first."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any

import numpy as np

from analysis.stats.means import bootstrap_weights


class Memo:
    """``get(key, make)``: the value made for ``key``, made on a miss; at most ``size`` kept."""

    def __init__(self, size: int) -> None:
        self._items: OrderedDict[Hashable, Any] = OrderedDict()
        self._size = size
        self._lock = threading.Lock()

    def get(self, key: Hashable, make: Callable[[], Any]) -> Any:
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return self._items[key]
        out = make()  # outside the lock: a slow load must not hold up the other sessions
        with self._lock:
            self._items[key] = out
            while len(self._items) > self._size:
                self._items.popitem(last=False)
        return out

    def clear(self) -> None:
        with self._lock:
            self._items.clear()


_RESAMPLES = Memo(8)


def resamples(n: int, n_boot: int, seed: int) -> np.ndarray:
    """``bootstrap_weights(n, n_boot, seed)``, made once and shared (read-only)."""
    return _RESAMPLES.get((n, n_boot, seed), lambda: _frozen(bootstrap_weights(n, n_boot, seed)))


def _frozen(weights: np.ndarray) -> np.ndarray:
    weights.flags.writeable = False  # shared by every caller of the cache
    return weights

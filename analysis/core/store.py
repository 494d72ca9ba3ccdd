"""The DuckDB store: one file, short-lived connections, one transaction per write.

DuckDB allows one writing process XOR many read-only ones, and a conflict fails at once. So
nothing here keeps a connection open: readers open read-only, run, close; writers retry briefly
(a reader's connection lives milliseconds) and then say clearly who holds the file.
"""

from __future__ import annotations

import errno
import os
import re
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

import duckdb

from analysis.core import schema
from analysis.core.errors import StoreBusyError, StoreError

REPO_ROOT = Path(__file__).resolve().parents[2]


def default_db_path() -> Path:
    """``FINEGRAIN_DB`` if set; else ``data/finegrain.duckdb`` in a checkout (or an editable
    install); else, for an installed package, the user's data folder (never site-packages)."""
    env = os.environ.get("FINEGRAIN_DB")
    if env:
        return Path(env)
    if (REPO_ROOT / "app.py").is_file():
        return REPO_ROOT / "data" / "finegrain.duckdb"
    return user_data_dir() / "finegrain.duckdb"


def user_data_dir() -> Path:
    """Where an installed Finegrain keeps its store: %LOCALAPPDATA%\\finegrain on Windows,
    else $XDG_DATA_HOME/finegrain (default ~/.local/share/finegrain)."""
    if os.name == "nt" and os.environ.get("LOCALAPPDATA"):
        return Path(os.environ["LOCALAPPDATA"]) / "finegrain"
    base = os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share"
    return Path(base) / "finegrain"


def _is_lock_error(e: Exception) -> bool:
    text = str(e).lower()
    if "different configuration" in text:
        # Same process, other mode: a page reading while a judging thread writes (or back).
        return True
    return "lock" in text and ("conflict" in text or "could not set" in text)


def _busy(path: Path, e: Exception, writing: bool) -> StoreBusyError:
    pid = re.search(r"PID (\d+)", str(e))
    who = f"process {pid.group(1)}" if pid else "another process"
    if writing:
        hint = (
            "DuckDB allows one writer or many readers at a time. If the dashboard is open it "
            "releases the file between queries, so retry in a moment; otherwise wait for the "
            "other import or judging run to finish."
        )
    else:
        hint = (
            "An import or judging run is writing it right now (DuckDB allows one writer or "
            "many readers). The data will show again when it finishes; rerun the page then."
        )
    return StoreBusyError(f"The store {path} is held by {who}. {hint}")


# errno values and DuckDB's words (it reports the OS error as text) for "no room to write":
# ENOSPC a full disk, EDQUOT a quota, EFBIG a file-size limit (RLIMIT_FSIZE, a filesystem's).
_FULL_ERRNOS = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG}
_FULL_WORDS = ("no space left on device", "disk quota exceeded", "file too large")


def disk_full(path: Path, e: BaseException) -> StoreError | None:
    """The message for a write that failed for want of space, or None for any other error.
    Raised ``from e`` where the transaction was rolled back: the store is unchanged."""
    full = isinstance(e, OSError) and e.errno in _FULL_ERRNOS
    if not full and isinstance(e, duckdb.Error | OSError):
        full = any(w in str(e).lower() for w in _FULL_WORDS)
    if not full:
        return None
    reason = e.strerror if isinstance(e, OSError) and e.strerror else str(e).rsplit(": ", 1)[-1]
    return StoreError(
        f"The disk holding the store {path} is full ({reason}): nothing was written and the "
        "store is unchanged. Free some space (or move the store with --db / FINEGRAIN_DB) and "
        "run the same command again.",
        title="Disk full",
    )


def _rollback(con: duckdb.DuckDBPyConnection) -> None:
    # DuckDB may already have aborted the transaction (a failed write invalidates it): then
    # ROLLBACK raises "no transaction is active", which must not hide the error that did it.
    with suppress(duckdb.Error):
        con.execute("ROLLBACK")


class Store:
    """A Finegrain database file. Cheap to create; holds no connection."""

    def __init__(self, path: str | Path | None = None, *, busy_timeout: float = 5.0) -> None:
        self.path = Path(path) if path is not None else default_db_path()
        self.busy_timeout = busy_timeout
        self._version_checked = False  # the first read looks for an older schema to upgrade

    def _connect(self, read_only: bool) -> duckdb.DuckDBPyConnection:
        deadline = time.monotonic() + self.busy_timeout
        delay = 0.02
        while True:
            try:
                return duckdb.connect(str(self.path), read_only=read_only)
            except duckdb.Error as e:
                if full := disk_full(self.path, e):  # a new store's first page, say
                    raise full from e
                if not _is_lock_error(e):
                    raise StoreError(f"Cannot open the store {self.path}: {e}") from e
                if time.monotonic() >= deadline:
                    raise _busy(self.path, e, writing=not read_only) from e
                time.sleep(delay)
                delay = min(delay * 2, 0.25)

    def exists(self) -> bool:
        return self.path.exists()

    def ensure(self) -> None:
        """Create the file and schema if missing, or upgrade a store made by an older version
        in place (schema.apply: one transaction, every row kept). Idempotent."""
        if self.exists() and self._schema_current():
            return
        with self.write() as con:
            schema.apply(con)

    def _schema_current(self) -> bool:
        try:
            with self.read() as cur:
                return schema.is_current(cur)
        except (StoreError, duckdb.Error):
            return False

    @contextmanager
    def read(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """A read-only connection for one query or a few; closed on exit."""
        if not self.exists():
            raise StoreError(f"The store {self.path} does not exist yet.")
        con = self._connect(read_only=True)
        try:
            if not self._version_checked:
                # A store from an older version (a command or page that only reads, before any
                # import) is upgraded first: its queries would miss the newer tables and views.
                self._version_checked = True  # ensure() reads too
                if schema.is_older(con):
                    con.close()
                    try:
                        self.ensure()
                    except BaseException:
                        self._version_checked = False  # busy, say: the next read tries again
                        raise
                    con = self._connect(read_only=True)
            yield con
        finally:
            con.close()

    @contextmanager
    def write(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """One transaction: committed on success, rolled back on any error. Every write of
        an import, a judging run or an annotation passes here, so a full disk is turned into
        one message here (``disk_full``), whichever statement met it."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            if full := disk_full(self.path, e):
                raise full from e
            raise
        con = self._connect(read_only=False)
        try:
            con.execute("BEGIN TRANSACTION")
            try:
                yield con
            except BaseException as e:
                _rollback(con)
                if full := disk_full(self.path, e):
                    raise full from e
                raise
            try:
                con.execute("COMMIT")
            except duckdb.Error as e:  # DuckDB aborts the transaction when the commit fails
                if full := disk_full(self.path, e):
                    raise full from e
                raise
        finally:
            con.close()

    def version(self) -> tuple[int, int, int, int]:
        """A cheap token that changes whenever the file is written (cache key for pages)."""
        out: list[int] = []
        for p in (self.path, Path(f"{self.path}.wal")):
            try:
                st = p.stat()
                out += [st.st_mtime_ns, st.st_size]
            except FileNotFoundError:
                out += [0, 0]
        return tuple(out)  # type: ignore[return-value]

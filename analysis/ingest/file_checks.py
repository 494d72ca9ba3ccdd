"""What a folder import may open: regular files under a size cap, checked before opening.

Opening a FIFO blocks until a writer appears (forever, in practice), a device such as
``/dev/zero`` never ends, a directory or a symlink loop raises from deep inside a reader: each is
refused here, by what it is, with a message naming the file.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from analysis.core.errors import InputError

MAX_FILE_ENV = "FINEGRAIN_MAX_FILE_MB"
DEFAULT_MAX_FILE_MB = 64.0
MB = 2**20


def max_file_bytes() -> int:
    """The per-file cap: ``$FINEGRAIN_MAX_FILE_MB`` megabytes, else 64 (FLASK's largest: 3.5)."""
    value = os.environ.get(MAX_FILE_ENV, "").strip()
    try:
        mb = float(value) if value else DEFAULT_MAX_FILE_MB
    except ValueError:
        mb = -1.0
    if not mb > 0:
        raise InputError(MAX_FILE_ENV, None, None, f"{value[:40]!r} is not a number of megabytes")
    return int(mb * MB)


def exists(path: Path) -> bool:
    """True when anything is at ``path`` (a broken or looping symlink counts)."""
    return os.path.lexists(path)


def regular_file(
    path: Path,
    name: str,
    limit: int | None = None,
    *,
    expected: str = "a .jsonl file",
    capped: bool = True,
) -> None:
    """Raise ``InputError`` unless ``path`` is (or links to) a regular file of at most ``limit``
    bytes (default: ``max_file_bytes()``; no cap when not ``capped``: a score file may be
    large). ``expected`` names what belongs there, for the message."""
    try:
        st = path.stat()  # follows links: a link to /dev/zero is judged by /dev/zero
    except OSError as e:
        if e.errno == errno.ELOOP:
            problem = "a symbolic link that loops (it never reaches a file)"
        elif e.errno in (errno.ENOENT, errno.ENOTDIR):
            problem = "file not found (or a symbolic link to nothing)"
        else:
            problem = f"cannot be read ({e.strerror})"
        raise InputError(name, None, None, problem) from e
    if stat.S_ISDIR(st.st_mode):
        raise InputError(
            name,
            None,
            None,
            f"this is a folder, not a file (it is a directory); expected {expected}",
        )
    if not stat.S_ISREG(st.st_mode):
        raise InputError(
            name, None, None, f"not a regular file (a pipe, device or socket); expected {expected}"
        )
    if not capped:
        return
    limit = max_file_bytes() if limit is None else limit
    if st.st_size > limit:
        raise InputError(
            name,
            None,
            None,
            f"{st.st_size:,} bytes is over the limit of {limit / MB:.4g} MB per file "
            f"(set {MAX_FILE_ENV} to raise it)",
        )


def utf8_name(path: str, what: str = "file") -> None:
    """Raise ``InputError`` unless ``path`` is valid UTF-8: a name that is not (the OS hands its
    bytes over as lone surrogates) can be neither stored (a dataset's source, a model named by
    its file) nor printed in a message, so the message shows its bytes escaped."""
    shown = path.encode("utf-8", "backslashreplace").decode("utf-8")
    if shown != path:
        raise InputError(
            shown, None, None, f"the {what} name is not valid UTF-8; rename it (UTF-8 names only)"
        )

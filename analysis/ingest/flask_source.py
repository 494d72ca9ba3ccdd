"""Where FLASK comes from: a local folder, or a base URL serving the repository's raw files.

``import_flask`` is what the CLI and the Overview page's "Load FLASK" button call.

Who may reach what. The page's visitor is not trusted: the address they type is fetched under
the rules of ``analysis.ingest.http_fetch`` (http/https only, no redirect to another host, a
deadline per file and per download, a byte cap per file, one download at a time in the process),
private, loopback and link-local addresses are refused unless the operator sets
``FINEGRAIN_ALLOW_PRIVATE_URLS=1`` (e.g. for a local mirror), and every refusal or network
failure shows the visitor one generic message, so that the messages cannot be used to map the
server's network; the details go to the server's log. The CLI's operator is trusted
(``trusted=True``): the same limits apply, but private addresses are allowed (they can reach them
anyway) and errors say exactly what went wrong.

Limits (environment, read at each import): ``FINEGRAIN_MAX_FILE_MB`` (default 64, per file, for
downloads and local folders alike; FLASK's largest file is 3.5 MB),
``FINEGRAIN_FETCH_FILE_TIMEOUT_S`` (default 180) and ``FINEGRAIN_FETCH_TIMEOUT_S`` (default 900,
the whole download).
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import tempfile
import threading
from dataclasses import replace
from pathlib import Path

from analysis.core.errors import FetchError
from analysis.core.store import Store
from analysis.core.writer import ImportReport, write_batch
from analysis.ingest.file_checks import max_file_bytes
from analysis.ingest.flask_files import (
    FULL_FILE,
    HARD_FILE,
    OUTPUTS_DIR,
    REVIEWS_DIR,
    Progress,
    _noop,
    parse_folder,
)
from analysis.ingest.http_fetch import Download, FetchLimits, FetchPolicy

DEFAULT_URL = "https://raw.githubusercontent.com/kaistAI/FLASK/main"
MODELS = tuple(
    "alpaca_13b bard chatgpt claude_v1 davinci_003 gpt4 llama2_chat_13b llama2_chat_70b "
    "tulu_13b tulu_30b tulu_65b tulu_7b vicuna_13b vicuna_33b wizardlm_13b".split()
)
# The repository names its GPT-4 review files in two ways.
REVIEW_FILES = tuple(
    f"{m}_review.jsonl"
    for m in "bard chatgpt claude_v1 davinci_003 gpt4 tulu_7b tulu_13b tulu_30b tulu_65b".split()
) + tuple(
    f"{m}.jsonl"
    for m in "alpaca_13b llama2_chat_13b llama2_chat_70b vicuna_13b vicuna_33b wizardlm_13b".split()
)
ALLOW_PRIVATE_ENV = "FINEGRAIN_ALLOW_PRIVATE_URLS"
GENERIC_MESSAGE = (
    "Could not download FLASK from this address. Use an http:// or https:// base URL of a public "
    f"server that serves the repository's raw files, such as {DEFAULT_URL}, or a local folder. "
    "The reason is in the server's log."
)
BUSY_MESSAGE = (
    "Another FLASK download is running in this app; try again when it has finished "
    "(nothing was imported)."
)
# Anything with a scheme is an address, so that file:, ftp: and the like are refused rather
# than read as a folder name; one letter before the colon is a Windows drive.
_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]+:")
_DOWNLOADING = threading.Lock()  # one download at a time: memory, disk and bandwidth
log = logging.getLogger(__name__)


def is_url(source: str) -> bool:
    return bool(_URL.match(source))


def fetch_limits() -> FetchLimits:
    """The default limits, overridden by the environment (see the module docstring)."""
    limits = FetchLimits(max_file_bytes=max_file_bytes())
    for env, name in (
        ("FINEGRAIN_FETCH_FILE_TIMEOUT_S", "file_deadline_s"),
        ("FINEGRAIN_FETCH_TIMEOUT_S", "total_deadline_s"),
    ):
        value = os.environ.get(env, "").strip()
        if value:
            try:
                limits = replace(limits, **{name: float(value)})
            except ValueError as e:
                raise FetchError(f"{env}={value[:40]!r} is not a number of seconds") from e
    return limits


def fetch_policy(trusted: bool, limits: FetchLimits | None = None) -> FetchPolicy:
    allowed = trusted or os.environ.get(ALLOW_PRIVATE_ENV, "").strip().lower() in {"1", "true"}
    return FetchPolicy(limits=limits or fetch_limits(), allow_private=allowed)


def fetch_repository(
    base_url: str, dest: Path, policy: FetchPolicy, progress: Progress = _noop
) -> None:
    """Download the files ``parse_folder`` reads into ``dest``, laid out like the repository."""
    base = base_url.rstrip("/")
    required = [FULL_FILE, HARD_FILE] + [f"{OUTPUTS_DIR}/{m}.jsonl" for m in MODELS]
    optional = [f"{REVIEWS_DIR}/{name}" for name in REVIEW_FILES]
    total = len(required) + len(optional)
    download = Download(policy)
    for i, rel in enumerate(required + optional, 1):
        progress(i - 1, total, f"downloading {rel}")
        try:
            download.fetch(f"{base}/{rel}", dest / rel, missing_ok=rel in optional)
        except FetchError as e:
            if "HTTP 404" in e.message:
                raise FetchError(
                    f"{e.message}. Check the base URL: it must serve the repository's raw "
                    f"files (e.g. {DEFAULT_URL})."
                ) from e
            raise
    progress(total, total, "downloaded")


def _download(source: str, dest: Path, policy: FetchPolicy, trusted: bool, progress) -> None:
    if not _DOWNLOADING.acquire(blocking=False):
        raise FetchError(BUSY_MESSAGE, title="Download running")
    try:
        fetch_repository(source, dest, policy, progress)
    except FetchError as e:
        if trusted:
            raise
        log.warning("FLASK download from %r refused or failed: %s", source[:500], e.message)
        raise FetchError(GENERIC_MESSAGE) from None  # no chained detail for the visitor
    finally:
        _DOWNLOADING.release()


def import_flask(
    store: Store,
    source: str = DEFAULT_URL,
    progress: Progress = _noop,
    *,
    trusted: bool = False,
    limits: FetchLimits | None = None,
) -> ImportReport:
    """Import FLASK from a folder or base URL into ``store``: all or nothing, idempotent.

    ``trusted`` is for the CLI's operator; a page passes False (see the module docstring).
    """
    if not is_url(source):
        batch = parse_folder(Path(source), source, progress)
        return write_batch(store, batch, source)
    policy = fetch_policy(trusted, limits)
    tmp = Path(tempfile.mkdtemp(prefix="finegrain-flask-"))
    try:
        _download(source, tmp, policy, trusted, lambda d, t, label: progress(d, 2 * t, label))
        batch = parse_folder(
            tmp, source.rstrip("/"), lambda d, t, label: progress(t + d, 2 * t, label)
        )
        return write_batch(store, batch, source)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

"""Where FLASK comes from: a local folder, or a base URL serving the repository's raw files.

``import_flask`` is what the CLI and the Overview page's "load the real benchmark" button call.
"""

from __future__ import annotations

import http.client
import shutil
import tempfile
import urllib.error
import urllib.request
from pathlib import Path

from analysis.core.errors import FetchError
from analysis.core.store import Store
from analysis.core.writer import ImportReport, write_batch
from analysis.ingest.flask_files import (
    FULL_FILE,
    HARD_FILE,
    OUTPUTS_DIR,
    REVIEWS_DIR,
    Progress,
    _noop,
    parse_folder,
)

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
TIMEOUT_S = 60


def is_url(source: str) -> bool:
    return source.startswith(("http://", "https://"))


def download(url: str, dest: Path, *, optional: bool = False) -> bool:
    """Fetch one file; a short body (truncated transfer) is an error, never a partial import.

    Returns False for a 404 on an optional file.
    """
    try:
        with urllib.request.urlopen(url, timeout=TIMEOUT_S) as resp:
            expected = resp.headers.get("Content-Length")
            data = resp.read()
    except urllib.error.HTTPError as e:
        if optional and e.code == 404:
            return False
        raise FetchError(
            f"{url}: HTTP {e.code} {e.reason}. Check the base URL: it must serve "
            "the repository's raw files (e.g. " + DEFAULT_URL + ")."
        ) from e
    except http.client.IncompleteRead as e:
        raise FetchError(
            f"{url}: the download was cut off after {len(e.partial):,} bytes; "
            "nothing was imported. Try again."
        ) from e
    except (urllib.error.URLError, OSError, http.client.HTTPException) as e:
        reason = getattr(e, "reason", e)
        raise FetchError(
            f"{url}: cannot download ({reason}). Check the address and your "
            "network, or import from a local folder instead."
        ) from e
    if expected is not None and len(data) != int(expected):
        raise FetchError(
            f"{url}: received {len(data):,} of {int(expected):,} bytes (truncated); "
            "nothing was imported. Try again."
        )
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_bytes(data)
    return True


def fetch_repository(base_url: str, dest: Path, progress: Progress = _noop) -> None:
    """Download the files ``parse_folder`` reads into ``dest``, laid out like the repository."""
    base = base_url.rstrip("/")
    required = [FULL_FILE, HARD_FILE] + [f"{OUTPUTS_DIR}/{m}.jsonl" for m in MODELS]
    optional = [f"{REVIEWS_DIR}/{name}" for name in REVIEW_FILES]
    total = len(required) + len(optional)
    for i, rel in enumerate(required + optional, 1):
        progress(i - 1, total, f"downloading {rel}")
        download(f"{base}/{rel}", dest / rel, optional=rel in optional)
    progress(total, total, "downloaded")


def import_flask(
    store: Store, source: str = DEFAULT_URL, progress: Progress = _noop
) -> ImportReport:
    """Import FLASK from a folder or base URL into ``store``: all or nothing, idempotent."""
    if not is_url(source):
        batch = parse_folder(Path(source), source, progress)
        return write_batch(store, batch, source)
    tmp = Path(tempfile.mkdtemp(prefix="finegrain-flask-"))
    try:
        fetch_repository(source, tmp, lambda d, t, label: progress(d, 2 * t, label))
        batch = parse_folder(
            tmp, source.rstrip("/"), lambda d, t, label: progress(t + d, 2 * t, label)
        )
        return write_batch(store, batch, source)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

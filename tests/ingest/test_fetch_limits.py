"""Load FLASK from a URL a visitor typed: schemes, addresses, redirects, deadlines, byte caps,
one download at a time, and one generic message for the visitor (details in the log only).

Every hostile behaviour comes from a real server on loopback (tests/http_fixtures.py); loopback
is itself refused by default, so tests that need to reach it set the operator's allowance.
"""

from __future__ import annotations

import json
import logging
import resource
import shutil
import socket
import ssl
import subprocess
import sys
import threading
import time
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from analysis.core.errors import FetchError, InputError
from analysis.core.store import Store
from analysis.ingest.flask_source import (
    ALLOW_PRIVATE_ENV,
    BUSY_MESSAGE,
    FULL_FILE,
    GENERIC_MESSAGE,
    import_flask,
)
from analysis.ingest.http_fetch import MB, Download, FetchLimits, FetchPolicy, is_public
from tests.http_fixtures import FolderServer, HostileServer

REPO = Path(__file__).resolve().parents[2]
SMALL = FetchLimits(max_file_bytes=2 * MB, file_deadline_s=2.0, total_deadline_s=30.0)
LOG = "analysis.ingest.flask_source"


def _fetch(url: str, tmp_path: Path, limits: FetchLimits = SMALL) -> bool:
    return Download(FetchPolicy(limits, allow_private=True)).fetch(url, tmp_path / "f.jsonl")


def _visitor_error(store: Store, source: str, limits: FetchLimits = SMALL) -> str:
    with pytest.raises(FetchError) as err:
        import_flask(store, source, limits=limits)
    assert err.value.__cause__ is None  # nothing chained for a page to reveal
    return err.value.message


@pytest.fixture
def store(tmp_path) -> Store:
    return Store(tmp_path / "s.duckdb")


@pytest.mark.parametrize(
    ("ip", "public"),
    [
        ("127.0.0.1", False), ("127.8.9.10", False), ("10.1.2.3", False), ("172.16.0.1", False),
        ("192.168.1.1", False), ("169.254.169.254", False), ("100.64.0.1", False),
        ("0.0.0.0", False), ("224.0.0.1", False), ("255.255.255.255", False), ("::1", False),
        ("::", False), ("fe80::1%eth0", False), ("fc00::1", False), ("fec0::1", False),
        ("::ffff:127.0.0.1", False), ("::ffff:10.0.0.1", False), ("ff02::1", False),
        ("8.8.8.8", True), ("185.199.108.133", True), ("2606:4700:4700::1111", True),
        ("::ffff:8.8.8.8", True),
    ],
)  # fmt: skip
def test_address_classes(ip, public):
    assert is_public(ip) is public


def test_loopback_refused_by_default_checking_resolved_addresses(store, monkeypatch):
    real = socket.getaddrinfo

    def fake(host, *args, **kwargs):  # a public-looking name that resolves to loopback
        return real("127.0.0.1" if host == "flask.example" else host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", fake)
    monkeypatch.delenv(ALLOW_PRIVATE_ENV, raising=False)
    with HostileServer() as srv:
        for host in ("127.0.0.1", "localhost", "flask.example", "[::ffff:127.0.0.1]"):
            assert _visitor_error(store, f"http://{host}:{srv.port}") == GENERIC_MESSAGE
        assert srv.hits == []  # refused before any connection
        with pytest.raises(FetchError, match="resolves to 127.0.0.1, a private"):
            Download(FetchPolicy(SMALL)).fetch(f"http://flask.example:{srv.port}/x", Path("-"))
    assert not store.exists()


def test_allowed_name_is_fetched_from_the_checked_address(flask_dir, tmp_path, monkeypatch):
    real = socket.getaddrinfo
    asked = []

    def fake(host, *args, **kwargs):
        asked.append(host)
        return real("127.0.0.1" if host == "flask.example" else host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", fake)
    with FolderServer(flask_dir) as url:
        port = url.rsplit(":", 1)[1]
        assert _fetch(f"http://flask.example:{port}/{FULL_FILE}", tmp_path, FetchLimits())
    assert (tmp_path / "f.jsonl").read_bytes() == (flask_dir / FULL_FILE).read_bytes()
    # Resolved once; the connection dialled the checked address itself, not the name again.
    assert asked == ["flask.example", "127.0.0.1"]


@pytest.mark.parametrize(
    "source",
    ["file:///etc", "ftp://127.0.0.1/FLASK", "gopher://example.com/", "javascript:alert(1)",
     "FILE:/etc/passwd", "http://", "http://host:99999/"],
)  # fmt: skip
def test_other_schemes_and_malformed_addresses_refused(store, source, monkeypatch, tmp_path):
    monkeypatch.setenv(ALLOW_PRIVATE_ENV, "1")
    assert _visitor_error(store, source) == GENERIC_MESSAGE
    with pytest.raises(FetchError, match="only http|no host name|port"):
        import_flask(store, source, trusted=True, limits=SMALL)
    assert not store.exists()


def test_redirect_to_another_host_or_port_refused(tmp_path):
    with HostileServer() as a, HostileServer() as b:
        for to in (f"{b.url}/x", f"http://localhost:{a.port}/x", f"https://127.0.0.1:{a.port}/x",
                   "file:///etc/passwd"):  # fmt: skip
            with pytest.raises(FetchError, match="redirects to another host|only http"):
                _fetch(f"{a.url}/redirect?to={to}", tmp_path)
        assert b.hits == []  # the other server was never asked
        assert _fetch(f"{a.url}/redirect?to=/ok", tmp_path)  # same host and port: followed
        assert a.hits[-2:] == ["/redirect?to=/ok", "/ok"]
        loop = f"{a.url}/redirect?to=/redirect%3Fto=/x"
        with pytest.raises(FetchError, match="redirects"):
            _fetch(f"{a.url}/redirect?to={loop}", tmp_path, FetchLimits(max_redirects=0))


def test_endless_body_is_cut_at_the_cap(tmp_path):
    cut = pytest.raises(FetchError, match="more than the limit of 2 MB per file")
    with HostileServer() as srv, cut:
        _fetch(f"{srv.url}/endless", tmp_path)
    assert (tmp_path / "f.jsonl").stat().st_size <= 2 * MB


def test_trickle_is_cut_at_the_file_deadline(tmp_path):
    with HostileServer(trickle_s=1.0) as srv:
        for path in ("/trickle", "/trickle-headers"):
            start = time.monotonic()
            with pytest.raises(FetchError, match="the file took longer than 2 s"):
                _fetch(srv.url + path, tmp_path)
            assert time.monotonic() - start < 10  # the server would go on for 10,000 s


def test_whole_download_deadline(store):
    limits = FetchLimits(file_deadline_s=20.0, total_deadline_s=2.0)
    with HostileServer(delay_s=0.8) as srv:  # every file answers, each after 0.8 s
        with pytest.raises(FetchError, match="the whole download took longer than 2 s"):
            import_flask(store, f"{srv.url}/slow", trusted=True, limits=limits)
        assert 2 <= len(srv.hits) <= 4  # 26 files would have taken 21 s
    assert not store.exists()


def test_one_download_at_a_time(store, tmp_path, monkeypatch):
    monkeypatch.setenv(ALLOW_PRIVATE_ENV, "1")
    first: list[BaseException] = []

    def run() -> None:
        try:
            import_flask(Store(tmp_path / "other.duckdb"), srv.url + "/hold", limits=SMALL)
        except BaseException as e:  # noqa: BLE001 - reported below
            first.append(e)

    with HostileServer() as srv:
        worker = threading.Thread(target=run)
        worker.start()
        assert srv.httpd.holding.wait(10)  # the first download is under way
        with pytest.raises(FetchError) as err:
            import_flask(store, srv.url, limits=SMALL)
        assert err.value.message == BUSY_MESSAGE
        srv.httpd.release.set()
        worker.join(30)
        assert len(srv.hits) >= 2  # the first went on after the second was turned away
    assert not worker.is_alive()
    # The first download finished; /hold serves no FLASK rows, so parsing then refused them.
    assert first and isinstance(first[0], InputError) and "/hold/" in first[0].message
    with pytest.raises(FetchError) as err:  # the lock was released
        import_flask(store, "ftp://x", limits=SMALL)
    assert err.value.message == GENERIC_MESSAGE


def test_one_generic_message_details_in_the_log(store, caplog, monkeypatch):
    caplog.set_level(logging.WARNING, logger=LOG)
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    dead = closed.getsockname()[1]  # bound, never listening: connection refused
    with HostileServer(trickle_s=1.0) as srv, HostileServer() as other:
        monkeypatch.delenv(ALLOW_PRIVATE_ENV, raising=False)
        messages = [_visitor_error(store, srv.url), _visitor_error(store, "ftp://example.com/")]
        monkeypatch.setenv(ALLOW_PRIVATE_ENV, "1")
        for source in (f"{srv.url}/redirect?to={other.url}/", f"http://127.0.0.1:{dead}",
                       f"{srv.url}/endless", f"{srv.url}/trickle"):  # fmt: skip
            messages.append(_visitor_error(store, source))
    closed.close()
    assert messages == [GENERIC_MESSAGE] * 6
    details = [r.getMessage() for r in caplog.records if r.name == LOG]
    assert len(details) == 6 and len(set(details)) == 6
    for part in ("private", "only http", "another host", "cannot download", "more than",
                 "took longer"):  # fmt: skip
        assert any(part in d for d in details), part
    assert str(dead) not in GENERIC_MESSAGE and "127.0.0.1" not in GENERIC_MESSAGE


CHILD = """
import json, sys
from pathlib import Path
from analysis.core.errors import FetchError, InputError
from analysis.core.store import Store
from analysis.ingest.flask_source import import_flask

def peak():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024

before = peak()
try:
    import_flask(Store(Path(sys.argv[2]) / "s.duckdb"), sys.argv[1])
    outcome = "imported"
except FetchError as e:
    outcome = e.message
print(json.dumps({"before": before, "after": peak(), "outcome": outcome}))
"""


def _limit_memory() -> None:  # before the fix the child would grow until the machine ran out
    resource.setrlimit(resource.RLIMIT_AS, (3 * 2**30, 3 * 2**30))


def test_endless_body_keeps_the_process_memory_flat(tmp_path):
    """The default cap (64 MB) in a separate process, whose peak resident memory is measured."""
    with HostileServer() as srv:
        out = subprocess.run(
            [sys.executable, "-c", CHILD, f"{srv.url}/endless", str(tmp_path)],
            cwd=REPO, capture_output=True, text=True, timeout=120, preexec_fn=_limit_memory,
            env={"PATH": "/usr/bin:/bin", ALLOW_PRIVATE_ENV: "1"},
        )  # fmt: skip
        sent = srv.sent
    assert out.returncode == 0, out.stderr[-2000:]
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["outcome"] == GENERIC_MESSAGE
    assert sent >= 64 * MB  # the server streamed past the cap ...
    assert result["after"] - result["before"] < 16 * MB  # ... the body never sat in memory


@pytest.mark.skipif(shutil.which("openssl") is None, reason="needs the openssl command")
def test_https_verifies_the_certificate_for_the_name(tmp_path, monkeypatch):
    cert, key = tmp_path / "c.pem", tmp_path / "k.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key),
         "-out", str(cert), "-days", "1", "-subj", "/CN=localhost",
         "-addext", "subjectAltName=DNS:localhost"],
        check=True, capture_output=True, timeout=60,
    )  # fmt: skip
    (tmp_path / "a.txt").write_text("over TLS\n")
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), partial(_Quiet, directory=str(tmp_path)))
    server_side = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server_side.load_cert_chain(cert, key)
    httpd.socket = server_side.wrap_socket(httpd.socket, server_side=True)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    url = f"https://localhost:{httpd.server_address[1]}/a.txt"
    try:
        with pytest.raises(FetchError, match="CERTIFICATE_VERIFY_FAILED"):  # self-signed
            _fetch(url, tmp_path / "out")
        default = ssl.create_default_context

        def trusting(*args, **kwargs):  # the same checks, with this test's CA trusted
            ctx = default(*args, **kwargs)
            ctx.load_verify_locations(cert)
            return ctx

        monkeypatch.setattr(ssl, "create_default_context", trusting)
        assert _fetch(url, tmp_path / "out")
        assert (tmp_path / "out" / "f.jsonl").read_text() == "over TLS\n"
    finally:
        httpd.shutdown()
        httpd.server_close()


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:
        pass

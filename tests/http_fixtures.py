"""Real HTTP servers on loopback: a folder with injectable faults (404, truncation), and a
hostile one (redirects, endless and trickling bodies, slow and held responses)."""

from __future__ import annotations

import threading
from functools import partial
from http.server import BaseHTTPRequestHandler, SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path


class _Handler(SimpleHTTPRequestHandler):
    truncate: set[str] = set()

    def log_message(self, *args) -> None:  # keep test output quiet
        pass

    def do_GET(self) -> None:
        rel = self.path.split("?")[0].lstrip("/")
        if any(rel.endswith(t) for t in self.server.truncate):  # type: ignore[attr-defined]
            data = (Path(self.directory) / rel).read_bytes()
            self.send_response(200)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data[: len(data) // 3])  # then close: a cut-off transfer
            self.close_connection = True
            return
        super().do_GET()


class FolderServer:
    """``with FolderServer(root) as url:`` serves ``root`` at ``url`` until the block ends."""

    def __init__(self, root: Path, truncate: tuple[str, ...] = ()) -> None:
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), partial(_Handler, directory=str(root)))
        self.httpd.truncate = set(truncate)  # type: ignore[attr-defined]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> str:
        self.thread.start()
        host, port = self.httpd.server_address[:2]
        return f"http://{host}:{port}"

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


class _HostileHandler(BaseHTTPRequestHandler):
    """Misbehaves by path: /redirect?to=URL, /endless, /trickle, /trickle-headers, /slow/…,
    /hold/… (waits for ``server.release``), anything else: a small FLASK-like line."""

    protocol_version = "HTTP/1.1"

    def log_message(self, *args) -> None:
        pass

    def do_GET(self) -> None:
        server = self.server
        server.hits.append(self.path)  # type: ignore[attr-defined]
        path, _, query = self.path.partition("?")
        try:
            if path.startswith("/redirect"):
                self.send_response(302)
                self.send_header("Location", query.removeprefix("to="))
                self.send_header("Content-Length", "0")
                self.end_headers()
            elif path.startswith("/endless"):
                self._head(None)
                chunk = b"x" * 65536
                while not server.stopping.is_set():  # type: ignore[attr-defined]
                    self.wfile.write(chunk)
                    server.sent += len(chunk)  # type: ignore[attr-defined]
            elif path.startswith("/trickle-headers"):
                for byte in b"HTTP/1.1 200 OK\r\nX-Slow: " + b"a" * 10_000:
                    self._trickle(bytes([byte]))
            elif path.startswith("/trickle"):
                self._head(10_000)
                for _ in range(10_000):
                    self._trickle(b"x")
            else:
                if path.startswith("/hold"):
                    server.holding.set()  # type: ignore[attr-defined]
                    server.release.wait(30)  # type: ignore[attr-defined]
                if path.startswith("/slow"):
                    server.stopping.wait(server.delay_s)  # type: ignore[attr-defined]
                body = b'{"question_id": 1, "text": "ok"}\n'
                self._head(len(body))
                self.wfile.write(body)
        except OSError:  # the client hung up: what a refusal or a cut looks like from here
            self.close_connection = True

    def _head(self, length: int | None) -> None:
        self.send_response(200)
        if length is not None:
            self.send_header("Content-Length", str(length))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.flush()

    def _trickle(self, data: bytes) -> None:
        if self.server.stopping.wait(self.server.trickle_s):  # type: ignore[attr-defined]
            raise OSError("server stopping")
        self.wfile.write(data)
        self.wfile.flush()


class HostileServer:
    """``with HostileServer() as srv:`` a loopback server at ``srv.url`` that redirects, streams
    forever, trickles one byte per ``trickle_s``, delays or holds; ``srv.hits`` lists the
    paths it was asked for and ``srv.sent`` the bytes the endless stream wrote."""

    def __init__(self, trickle_s: float = 1.0, delay_s: float = 0.0) -> None:
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), _HostileHandler)
        self.httpd.daemon_threads = True
        self.httpd.hits = []  # type: ignore[attr-defined]
        self.httpd.sent = 0  # type: ignore[attr-defined]
        self.httpd.trickle_s = trickle_s  # type: ignore[attr-defined]
        self.httpd.delay_s = delay_s  # type: ignore[attr-defined]
        self.httpd.stopping = threading.Event()  # type: ignore[attr-defined]
        self.httpd.holding = threading.Event()  # type: ignore[attr-defined]
        self.httpd.release = threading.Event()  # type: ignore[attr-defined]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        host, port = self.httpd.server_address[:2]
        self.port = port
        self.url = f"http://{host}:{port}"

    @property
    def hits(self) -> list[str]:
        return self.httpd.hits  # type: ignore[attr-defined]

    @property
    def sent(self) -> int:
        return self.httpd.sent  # type: ignore[attr-defined]

    def __enter__(self) -> HostileServer:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.stopping.set()  # type: ignore[attr-defined]
        self.httpd.release.set()  # type: ignore[attr-defined]
        self.httpd.shutdown()
        self.httpd.server_close()

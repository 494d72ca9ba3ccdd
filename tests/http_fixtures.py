"""A real HTTP server on loopback serving a folder, with injectable faults (404, truncation)."""

from __future__ import annotations

import threading
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
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

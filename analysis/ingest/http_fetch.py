"""Guarded HTTP(S) downloads for addresses a person typed: the rules every fetch obeys.

- Only ``http`` and ``https``. Redirects stay on the same host and port (``http`` → ``https`` on
  the same host is allowed, ``https`` → ``http`` is not), at most ``max_redirects`` of them.
- The host name is resolved here, every address it resolves to is checked, and the connection
  goes to a checked address (so a name cannot pass the check and then connect elsewhere).
  Private, loopback, link-local, shared, multicast and reserved addresses are refused unless the
  policy allows them (``FetchPolicy.allow_private``; the caller decides who may set it).
- A deadline per file and one for the whole download, enforced by a watchdog that shuts the
  socket, so a server trickling bytes (even inside the headers) cannot hold a download longer.
- A byte cap per file and for the whole download; the body streams to disk in small chunks, so
  memory stays flat whatever the server sends.
- Proxies from the environment are not used: the address checks would be meaningless through one.

Errors are ``FetchError`` with a detailed message (address, status, reason); callers that show
them to an untrusted visitor replace the message with a generic one (see flask_source).
"""

from __future__ import annotations

import contextlib
import http.client
import ipaddress
import socket
import ssl
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urljoin, urlsplit

from analysis.core.errors import FetchError

MB = 2**20
CHUNK = 64 * 1024
_REDIRECTS = {301, 302, 303, 307, 308}
_DEFAULT_PORT = {"http": 80, "https": 443}


@dataclass(frozen=True)
class FetchLimits:
    """How much one download may take; the defaults are ~20× what FLASK needs."""

    max_file_bytes: int = 64 * MB
    max_total_bytes: int = 512 * MB
    file_deadline_s: float = 180.0
    total_deadline_s: float = 900.0
    idle_timeout_s: float = 30.0  # one socket operation (connect, a read) with no progress
    max_redirects: int = 5


@dataclass(frozen=True)
class FetchPolicy:
    limits: FetchLimits = field(default_factory=FetchLimits)
    allow_private: bool = False


def is_public(ip: str) -> bool:
    """True for an address on the public internet (what a visitor's URL may reach)."""
    addr = ipaddress.ip_address(ip.split("%", 1)[0])  # drop an IPv6 zone such as %eth0
    if isinstance(addr, ipaddress.IPv6Address):
        if addr.ipv4_mapped is not None:  # ::ffff:127.0.0.1 reaches 127.0.0.1
            addr = addr.ipv4_mapped
        elif addr.is_site_local:
            return False
    return addr.is_global and not (addr.is_multicast or addr.is_reserved or addr.is_unspecified)


@dataclass(frozen=True)
class _Target:
    url: str
    scheme: str
    host: str
    port: int
    path: str

    @classmethod
    def parse(cls, url: str) -> _Target:
        parts = urlsplit(url)
        scheme = parts.scheme.lower()
        if scheme not in _DEFAULT_PORT:
            raise FetchError(f"{url}: only http:// and https:// addresses can be downloaded")
        try:
            port = parts.port or _DEFAULT_PORT[scheme]
        except ValueError as e:
            raise FetchError(f"{url}: the port is not a number from 1 to 65535") from e
        if not parts.hostname:
            raise FetchError(f"{url}: the address has no host name")
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        return cls(url, scheme, parts.hostname.lower(), port, path)

    def allows_redirect_to(self, other: _Target) -> bool:
        if other.host != self.host:
            return False
        if other.scheme == self.scheme:
            return other.port == self.port
        return self.scheme == "http" and other.scheme == "https" and other.port == 443


class _Watchdog:
    """Shuts the connection's socket at the deadline, waking any read that is blocked on it."""

    def __init__(self, until: float) -> None:
        self.sock: socket.socket | None = None
        self.fired = False
        self._timer = threading.Timer(max(until - time.monotonic(), 0.0), self._fire)
        self._timer.daemon = True
        self._timer.start()

    def _fire(self) -> None:
        self.fired = True
        if self.sock is not None:
            # The plain socket's shutdown: for TLS too, without touching the SSL state.
            with contextlib.suppress(OSError):
                socket.SocketType.shutdown(self.sock, socket.SHUT_RDWR)

    def cancel(self) -> None:
        self._timer.cancel()


class _PinnedConnection(http.client.HTTPConnection):
    """An HTTP(S) connection to already-checked addresses, named ``host`` for Host and TLS."""

    def __init__(self, target: _Target, ips: list[str], timeout: float, dog: _Watchdog) -> None:
        super().__init__(target.host, target.port, timeout=timeout)
        self._ips, self._dog = ips, dog
        self._tls = ssl.create_default_context() if target.scheme == "https" else None

    def connect(self) -> None:
        sock = _dial(self._ips, self.port, self.timeout)
        self._dog.sock = sock
        if self._tls is not None:
            sock = self._tls.wrap_socket(
                sock, server_hostname=self.host, do_handshake_on_connect=False
            )
            self._dog.sock = sock
            sock.do_handshake()
        self.sock = sock


def _dial(ips: list[str], port: int, timeout: float) -> socket.socket:
    last: OSError | None = None
    for ip in ips:
        try:
            return socket.create_connection((ip, port), timeout=timeout)
        except OSError as e:
            last = e
    raise last or OSError("no address to connect to")


def _resolve(host: str, port: int, until: float) -> list[str]:
    """Every address ``host`` resolves to, within the deadline (getaddrinfo has no timeout)."""
    box: dict[str, object] = {}

    def work() -> None:
        try:
            box["ok"] = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except OSError as e:
            box["err"] = e

    worker = threading.Thread(target=work, daemon=True)
    worker.start()
    worker.join(max(until - time.monotonic(), 0.0))
    if "err" in box:
        raise FetchError(f"{host}: the name does not resolve ({box['err']})")
    if "ok" not in box:
        raise FetchError(f"{host}: resolving the name took past the deadline")
    ips = list(dict.fromkeys(str(info[4][0]) for info in box["ok"]))  # type: ignore[union-attr]
    if not ips:
        raise FetchError(f"{host}: the name resolves to no address")
    return ips


class Download:
    """One download session: a total deadline and byte budget shared by its files."""

    def __init__(self, policy: FetchPolicy) -> None:
        self.policy = policy
        self.until = time.monotonic() + policy.limits.total_deadline_s
        self.received = 0

    def fetch(self, url: str, dest: Path, *, missing_ok: bool = False) -> bool:
        """Save ``url``'s body at ``dest``; False for a 404 when ``missing_ok``."""
        limits = self.policy.limits
        file_until = min(time.monotonic() + limits.file_deadline_s, self.until)
        target = _Target.parse(url)
        for _ in range(limits.max_redirects + 1):
            dog = _Watchdog(file_until)
            try:
                location = self._request(target, dest, file_until, dog, missing_ok)
            except (OSError, http.client.HTTPException) as e:
                # The socket's own timeout is cut to the deadline too, and may win the race.
                late = dog.fired or time.monotonic() >= file_until - 0.1
                raise self._failure(target.url, e, file_until if late else None) from e
            finally:
                dog.cancel()
            if not isinstance(location, str):
                return location
            nxt = _Target.parse(urljoin(target.url, location))
            if not target.allows_redirect_to(nxt):
                raise FetchError(f"{target.url}: redirects to another host ({nxt.url}); refused")
            target = nxt
        raise FetchError(f"{url}: more than {limits.max_redirects} redirects")

    def _failure(self, url: str, e: Exception, late: float | None) -> FetchError:
        """What went wrong; ``late`` is the deadline that passed, if one did."""
        if late is not None:
            return FetchError(f"{url}: {self._deadline_text(late)}; nothing was imported")
        if isinstance(e, http.client.IncompleteRead):
            return FetchError(
                f"{url}: the download was cut off after {len(e.partial):,} bytes; "
                "nothing was imported. Try again."
            )
        return FetchError(
            f"{url}: cannot download ({e}). Check the address and your network, "
            "or import from a local folder instead."
        )

    def _deadline_text(self, until: float) -> str:
        limits = self.policy.limits
        if until >= self.until:  # the whole download's deadline was the nearer one
            return f"the whole download took longer than {limits.total_deadline_s:g} s"
        return f"the file took longer than {limits.file_deadline_s:g} s"

    def _connection(self, target: _Target, until: float, dog: _Watchdog) -> _PinnedConnection:
        ips = _resolve(target.host, target.port, until)
        if not self.policy.allow_private:
            bad = [ip for ip in ips if not is_public(ip)]
            if bad:  # one private answer is enough to refuse: the client might pick it
                raise FetchError(
                    f"{target.url}: {target.host} resolves to {bad[0]}, a private, loopback or "
                    "link-local address; refused (not allowed by the operator)"
                )
        timeout = max(min(self.policy.limits.idle_timeout_s, until - time.monotonic()), 0.01)
        return _PinnedConnection(target, ips, timeout, dog)

    def _request(
        self, target: _Target, dest: Path, until: float, dog: _Watchdog, missing_ok: bool
    ) -> bool | str:
        """The body saved (True), a 404 allowed (False), or a redirect's Location (str)."""
        conn = self._connection(target, until, dog)
        try:
            conn.request(
                "GET",
                target.path,
                headers={"User-Agent": "finegrain", "Accept-Encoding": "identity"},
            )
            resp = conn.getresponse()
            if resp.status in _REDIRECTS:
                location = resp.getheader("Location")
                if not location:
                    raise FetchError(f"{target.url}: HTTP {resp.status} without a Location")
                return location
            if resp.status == 404 and missing_ok:
                return False
            if resp.status != 200:
                raise FetchError(f"{target.url}: HTTP {resp.status} {resp.reason}")
            self._save(resp, target.url, dest, until, dog)
            return True
        finally:
            conn.close()

    def _save(
        self, resp: http.client.HTTPResponse, url: str, dest: Path, until: float, dog: _Watchdog
    ) -> None:
        limits = self.policy.limits
        cap = min(limits.max_file_bytes, limits.max_total_bytes - self.received)
        expected = _content_length(resp, url)
        if expected is not None and expected > cap:
            raise FetchError(f"{url}: {expected:,} bytes is over the {self._cap_text()}")
        received = 0
        dest.parent.mkdir(parents=True, exist_ok=True)
        with dest.open("wb") as out:
            while chunk := resp.read1(CHUNK):  # one socket read at most: never waits to fill
                received += len(chunk)
                if received > cap:
                    raise FetchError(f"{url}: more than the {self._cap_text()}; stopped")
                out.write(chunk)
                if time.monotonic() >= until:
                    raise FetchError(f"{url}: {self._deadline_text(until)}; nothing was imported")
        self.received += received
        if dog.fired:
            raise FetchError(f"{url}: {self._deadline_text(until)}; nothing was imported")
        if expected is not None and received != expected:
            raise FetchError(
                f"{url}: received {received:,} of {expected:,} bytes (truncated); "
                "nothing was imported. Try again."
            )

    def _cap_text(self) -> str:
        limits = self.policy.limits
        return (
            f"limit of {limits.max_file_bytes / MB:g} MB per file "
            f"({limits.max_total_bytes / MB:g} MB per download)"
        )


def _content_length(resp: http.client.HTTPResponse, url: str) -> int | None:
    value = resp.getheader("Content-Length")
    if value is None:
        return None
    if not (value.strip().isascii() and value.strip().isdigit()):
        raise FetchError(f"{url}: the server sent an invalid Content-Length ({value[:40]!r})")
    return int(value)

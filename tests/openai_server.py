"""A real HTTP server on loopback that speaks the OpenAI chat-completions API, for judge tests.

``with OpenAIServer(latency=0.2, faults=FaultPlan(rate=0.2, seed=1)) as srv:`` serves
``POST /v1/chat/completions`` (non-streaming) and ``GET /v1/models`` at ``srv.base_url`` until the
block ends. Point the official SDK at it (``OpenAI(base_url=srv.base_url, api_key=...)``).

- Latency: a float, or ``callable(request_body) -> float``: seconds each chat request waits
  before it is answered or its fault applied (a "timeout" fault then hangs ``hang_seconds``).
- Faults: a ``FaultPlan`` decides per chat request, deterministically; see ``FAULT_KINDS``.
- Answers: ``responder(body) -> content``; by default a judge-like answer (``judge_answer``) whose
  scores come from ``scores_for(body)``, so a test can compute what a judge run should store.
- ``port``/``share_port``: a fixed port, shareable by several servers (SO_REUSEPORT; each
  records only the requests it answered).
- Batches: ``batches=BatchService(...)`` (tests/openai_batches.py) adds the Files and Batches
  APIs; without it the server answers exactly as before.
- Every request is recorded in ``srv.requests`` (headers incl. Authorization, JSON body, fault).
  Nothing is logged: the API key lives only in that in-memory record.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import random
import socket
import struct
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the batch emulation imports this module; only its type is needed here
    from tests.openai_batches import BatchService

# "timeout" hangs, "reset" drops the socket with RST; the 200-kinds answer with bad content.
FAULT_KINDS: tuple[str, ...] = (
    "429",
    "500",
    "503",
    "timeout",
    "reset",
    "malformed",
    "truncated",
    "empty",
    "refusal",
    "garbage",
)
REFUSAL = "I'm sorry, but I can't help with evaluating this response."
GARBAGE = (
    "The response addresses the question and reads fairly well overall, although some parts "
    "could be more precise and a few claims would benefit from support."
)
NO_KEYS = "I need the score keys."
DEFAULT_RETRY_AFTER = 0.05
DEFAULT_MODEL = "judge-test"


@dataclass(frozen=True)
class Fault:
    """One injected fault: ``kind`` is one of FAULT_KINDS; ``retry_after`` (s) only for "429"."""

    kind: str
    retry_after: float | None = None

    def __post_init__(self) -> None:
        if self.kind not in FAULT_KINDS:
            raise ValueError(f"unknown fault kind {self.kind!r}; known: {', '.join(FAULT_KINDS)}")


def prompt_text(body: Mapping[str, Any]) -> str:
    """All message text of a chat request joined by newlines (string or text-part contents)."""
    parts: list[str] = []
    for message in body.get("messages") or []:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):
            parts += [p.get("text", "") for p in content if isinstance(p, dict)]
    return "\n".join(p for p in parts if isinstance(p, str))


class FaultPlan:
    """Decides, per chat request, whether and which fault to inject. Deterministic and thread-safe.

    Precedence: ``by_marker`` (a prompt containing the marker always gets that fault; such
    requests do not advance the counter), then ``first_n`` (the first N unmarked requests get that
    kind, kinds taken in dict order: ``{"500": 1, "429": 2}`` = 500, 429, 429), then ``rate``
    (request number i gets a fault with probability ``rate``, drawn from ``Random(f"{seed}:{i}")``,
    its kind chosen uniformly from ``kinds``). The i-th unmarked request always gets the same
    decision, so a run is reproducible whatever order concurrent requests arrive in (only which
    request is i-th may vary).
    """

    def __init__(
        self,
        rate: float = 0.0,
        kinds: Sequence[str] = FAULT_KINDS,
        seed: int = 0,
        first_n: Mapping[str, int] | None = None,
        by_marker: Mapping[str, str | Fault] | None = None,
        retry_after: float | None = None,
    ) -> None:
        if not 0.0 <= rate <= 1.0:
            raise ValueError(f"fault rate must be within [0, 1], got {rate}")
        if rate > 0 and not kinds:
            raise ValueError("a fault rate needs at least one fault kind")
        self.rate = rate
        self.seed = seed
        self.retry_after = retry_after
        self.kinds = tuple(self._fault(k).kind for k in kinds)
        self.first_n = [(self._fault(k), int(n)) for k, n in (first_n or {}).items()]
        self.by_marker = {m: self._fault(f) for m, f in (by_marker or {}).items()}
        self._counter = 0
        self._lock = threading.Lock()

    def _fault(self, kind: str | Fault) -> Fault:
        if isinstance(kind, Fault):
            return kind
        return Fault(kind, self.retry_after if kind == "429" else None)

    def decide(self, body: Mapping[str, Any]) -> Fault | None:
        """The fault for this request (None: answer normally)."""
        if self.by_marker:
            text = prompt_text(body)
            for marker, fault in self.by_marker.items():
                if marker in text:
                    return fault
        with self._lock:
            index = self._counter
            self._counter += 1
        return self.fault_at(index)

    def fault_at(self, index: int) -> Fault | None:
        """The decision for the index-th unmarked request (pure: no counter involved)."""
        start = 0
        for fault, n in self.first_n:
            if index < start + n:
                return fault
            start += n
        if self.rate <= 0:
            return None
        rng = random.Random(f"{self.seed}:{index}")
        if rng.random() >= self.rate:
            return None
        return self._fault(rng.choice(self.kinds))


# --- the default judge-like responder -------------------------------------------------------


def score_keys(body: Mapping[str, Any]) -> list[str]:
    """The comma-separated ids on the last ``Score keys:`` line of the prompt ([] when none)."""
    keys: list[str] = []
    for line in prompt_text(body).splitlines():
        if line.strip().startswith("Score keys:"):
            tail = line.strip()[len("Score keys:") :]
            keys = [k.strip() for k in tail.split(",") if k.strip()]
    return keys


def scores_for(body: Mapping[str, Any]) -> dict[str, int]:
    """Scores 1-5 per score key, from a hash of the whole ``messages`` list (same prompt, same
    scores; any change of the prompt reshuffles them)."""
    digest = hashlib.sha256(
        json.dumps(body.get("messages"), sort_keys=True, ensure_ascii=False).encode()
    ).hexdigest()
    return {
        key: int(hashlib.sha256(f"{digest}:{key}".encode()).hexdigest(), 16) % 5 + 1
        for key in score_keys(body)
    }


_FEEDBACK = {
    1: "fails on this criterion; the main points are missing or wrong.",
    2: "is weak here; several important problems remain.",
    3: "is adequate on this criterion, with noticeable gaps.",
    4: "does well here, with only minor issues.",
    5: "is excellent on this criterion; nothing important is missing.",
}


def judge_answer(body: Mapping[str, Any]) -> str:
    """What the default responder answers: feedback per key then a ``{key: score}`` last line,
    or a ``{"feedback", "scores"}`` JSON object when the request asks for JSON output."""
    scores = scores_for(body)
    if not scores:
        return NO_KEYS
    feedback = [f"{key}: the response {_FEEDBACK[s]}" for key, s in scores.items()]
    response_format = body.get("response_format")
    if isinstance(response_format, dict) and response_format.get("type") in (
        "json_schema",
        "json_object",
    ):
        return json.dumps({"feedback": " ".join(feedback), "scores": scores})
    return "\n\n".join(feedback) + "\n\n" + json.dumps(scores)


# --- the server ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Recorded:
    """One request as received. ``headers`` keys are lower-case (``headers["authorization"]``)."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any  # the parsed JSON body; None when absent or not JSON
    fault: str | None  # the fault kind applied, or None
    timestamp: float  # time.time() when the request was read
    raw: bytes = field(default=b"", repr=False)

    def header(self, name: str) -> str | None:
        return self.headers.get(name.lower())


def tokens(text: str) -> int:
    """The token estimate used in ``usage``: len(text) // 4, at least 1."""
    return max(1, len(text) // 4)


def _error(message: str, type_: str, code: str | None, param: str | None = None) -> dict:
    return {"error": {"message": message, "type": type_, "param": param, "code": code}}


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as the SDK's connection pool expects
    # Headers and body go out in two writes; with Nagle on, the second waits for the client's
    # delayed ACK (~40 ms per request on Linux).
    disable_nagle_algorithm = True
    server: _Server

    def log_message(self, *args: Any) -> None:  # never log (headers carry the API key)
        pass

    def handle(self) -> None:
        owner = self.server.owner
        owner._track(self.connection, add=True)
        try:
            super().handle()
        except OSError:  # the client went away (timed out, cancelled): nothing to answer
            pass
        finally:
            owner._track(self.connection, add=False)

    # -- plumbing
    def _read_body(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length > 0 else b""

    def _send(self, status: int, payload: bytes, content_type: str, **headers: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(payload)))
        self.send_header("x-request-id", f"req_{self.server.owner._next_id():08x}")
        for name, value in headers.items():
            self.send_header(name.replace("_", "-"), value)
        self.end_headers()
        self.wfile.write(payload)

    def _json(self, status: int, obj: Any, **headers: str) -> None:
        self._send(status, json.dumps(obj).encode(), "application/json", **headers)

    def _record(self, body: Any, raw: bytes, fault: Fault | None) -> None:
        rec = Recorded(
            method=self.command,
            path=self.path,
            headers={k.lower(): v for k, v in self.headers.items()},
            body=body,
            fault=fault.kind if fault else None,
            timestamp=time.time(),
            raw=raw,
        )
        self.server.owner._record(rec)

    # -- endpoints
    def do_GET(self) -> None:
        self._record(None, b"", None)
        if self.server.owner.batches is not None and self.server.owner.batches.serves(self.path):
            self.server.owner.batches.handle(self, b"")
            return
        if self.path.split("?")[0].rstrip("/") != "/v1/models":
            self._json(404, _error(f"Unknown path {self.path}", "invalid_request_error", None))
            return
        owner = self.server.owner
        models = [
            {"id": m, "object": "model", "created": 0, "owned_by": "finegrain-tests"}
            for m in owner.models
        ]
        self._json(200, {"object": "list", "data": models})

    def do_POST(self) -> None:
        raw = self._read_body()
        if self.server.owner.batches is not None and self.server.owner.batches.serves(self.path):
            self.server.owner.batches.handle(self, raw)  # records the request itself
            return
        if self.path.split("?")[0].rstrip("/") != "/v1/chat/completions":
            self._record(None, raw, None)
            self._json(404, _error(f"Unknown path {self.path}", "invalid_request_error", None))
            return
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        problem = _validate(body)
        if problem:
            self._record(body, raw, None)
            self._json(400, _error(problem[0], "invalid_request_error", problem[1], problem[2]))
            return
        self.server.owner._chat(self, body, raw)

    def do_DELETE(self) -> None:
        raw = self._read_body()
        self._record(None, raw, None)
        if self.server.owner.batches is not None and self.server.owner.batches.serves(self.path):
            self.server.owner.batches.handle(self, raw)
            return
        self.send_error(501, f"Unsupported method ({self.command!r})")  # as without do_DELETE


def _validate(body: Any) -> tuple[str, str, str | None] | None:
    """(message, code, param) of the 400 answer for a request we do not serve, else None."""
    if not isinstance(body, dict):
        return "We could not parse the JSON body of your request.", "invalid_json", None
    if not isinstance(body.get("model"), str):
        return "you must provide a model parameter", "missing_required_parameter", "model"
    if not isinstance(body.get("messages"), list) or not body["messages"]:
        return "'messages' must be a non-empty array", "invalid_value", "messages"
    if body.get("stream"):
        return "This test server does not support streaming.", "unsupported_value", "stream"
    return None


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256  # the default backlog (5) refuses bursts of concurrent connections
    owner: OpenAIServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that disconnects mid-answer is expected here, not an error worth printing


class OpenAIServer:
    """A loopback OpenAI-compatible chat server; use as a context manager (see module doc)."""

    def __init__(
        self,
        latency: float | Callable[[dict], float] = 0.0,
        faults: FaultPlan | None = None,
        responder: Callable[[dict], str] | None = None,
        hang_seconds: float = 5.0,
        models: Sequence[str] = (DEFAULT_MODEL,),
        port: int = 0,
        share_port: bool = False,
        batches: BatchService | None = None,
    ) -> None:
        self.latency = latency
        self.faults = faults or FaultPlan()
        self.responder = responder or judge_answer
        self.hang_seconds = hang_seconds  # how long a "timeout" fault holds the connection
        self.models = tuple(models)
        self.batches = batches  # the Files and Batches APIs (tests/openai_batches.py), if any
        if batches is not None:
            batches.attach(self)
        self.in_flight = 0  # chat requests being answered now
        self.max_in_flight = 0  # the most chat requests answered at once so far
        self._requests: list[Recorded] = []
        self._lock = threading.Lock()
        self._ids = 0
        self._handlers: dict[socket.socket, threading.Thread] = {}  # open connections
        self._closing = threading.Event()
        self._httpd = _Server(("127.0.0.1", port), _Handler, bind_and_activate=False)
        # SO_REUSEPORT: several server processes on one port, the kernel spreading connections
        # over them (bench/judge.py, so that one process's GIL is not what it measures).
        self._httpd.allow_reuse_port = share_port
        try:
            self._httpd.server_bind()
            self._httpd.server_activate()
        except BaseException:
            self._httpd.server_close()
            raise
        self._httpd.owner = self
        # A short poll interval: shutdown() waits up to one interval (the default is 0.5 s).
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, args=(0.02,), name="openai-server", daemon=True
        )
        host, port = self._httpd.server_address[:2]
        self.base_url = f"http://{host}:{port}/v1"

    # -- lifecycle
    def __enter__(self) -> OpenAIServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self, wait: float = 2.0) -> None:
        """Stop serving: wake sleeping handlers, drop open connections, join the threads."""
        self._closing.set()
        if self.batches is not None:
            self.batches.close(wait)
        if self._thread.is_alive():
            self._httpd.shutdown()
        self._httpd.server_close()
        with self._lock:
            handlers = list(self._handlers.items())
        for conn, _ in handlers:  # idle keep-alive handlers block in recv until this
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
        deadline = time.monotonic() + wait
        for _, thread in handlers:
            thread.join(max(0.0, deadline - time.monotonic()))

    # -- records
    @property
    def requests(self) -> list[Recorded]:
        """A snapshot of every request received so far, in arrival order."""
        with self._lock:
            return list(self._requests)

    def count(self, path: str = "/v1/chat/completions") -> int:
        with self._lock:
            return sum(1 for r in self._requests if r.path.split("?")[0] == path)

    def _record(self, rec: Recorded) -> None:
        with self._lock:
            self._requests.append(rec)

    def _next_id(self) -> int:
        with self._lock:
            self._ids += 1
            return self._ids

    def _track(self, conn: socket.socket, add: bool) -> None:
        with self._lock:
            if add:
                self._handlers[conn] = threading.current_thread()
            else:
                self._handlers.pop(conn, None)

    # -- answering a chat request
    def _chat(self, h: _Handler, body: dict, raw: bytes) -> None:
        fault = self.faults.decide(body)
        h._record(body, raw, fault)
        with self._lock:
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            delay = self.latency(body) if callable(self.latency) else self.latency
            if delay > 0 and self._closing.wait(delay):
                h.close_connection = True
                return
            if fault is None:
                self._answer(h, body)
            else:
                self._fault(h, body, fault)
        finally:
            with self._lock:
                self.in_flight -= 1

    def _answer(self, h: _Handler, body: dict) -> None:
        try:
            content = self.responder(body)
        except Exception as e:  # a broken test responder shows up as a clear 500, not a hang-up
            h._json(500, _error(f"test responder failed: {e!r}", "server_error", "responder"))
            return
        self._complete(h, body, content)

    def _complete(self, h: _Handler, body: dict, content: str) -> None:
        h._json(200, self._completion(body, content))

    def _completion(self, body: dict, content: str) -> dict:
        """The chat.completion object answering ``body`` with ``content`` (batches reuse it)."""
        prompt, completion = tokens(prompt_text(body)), tokens(content)
        return {
            "id": f"chatcmpl-{self._next_id():012x}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body["model"],
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content, "refusal": None},
                    "logprobs": None,
                    "finish_reason": "stop",
                }
            ],
            "usage": {
                "prompt_tokens": prompt,
                "completion_tokens": completion,
                "total_tokens": prompt + completion,
            },
        }

    def _fault(self, h: _Handler, body: dict, fault: Fault) -> None:
        kind = fault.kind
        if kind == "429":
            wait = DEFAULT_RETRY_AFTER if fault.retry_after is None else fault.retry_after
            message = f"Rate limit reached for {body['model']}. Please try again in {wait}s."
            err = _error(message, "rate_limit_exceeded", "rate_limit_exceeded")
            h._json(429, err, Retry_After=f"{wait:g}")
        elif kind == "500":
            h._json(500, _error("The server had an error.", "server_error", "internal_error"))
        elif kind == "503":
            err = _error("The engine is currently overloaded.", "server_error", "overloaded")
            h._json(503, err)
        elif kind == "timeout":  # say nothing; the client's timeout should fire first
            self._closing.wait(self.hang_seconds)
            h.close_connection = True
        elif kind == "reset":
            _reset(h)
        elif kind == "malformed":  # a JSON content type over a body that is not JSON
            h._send(200, b'{"id": "chatcmpl-broken", "choices": [{"ind', "application/json")
        elif kind == "truncated":  # promise more bytes than are sent, then hang up
            payload = b'{"id": "chatcmpl-cut", "object": "chat.completion", "choices": ['
            h.send_response(200)
            h.send_header("Content-Type", "application/json")
            h.send_header("Content-Length", str(len(payload) + 200))
            h.end_headers()
            h.wfile.write(payload)
            h.wfile.flush()
            h.close_connection = True
        elif kind == "empty":
            self._complete(h, body, "")
        elif kind == "refusal":
            self._complete(h, body, REFUSAL)
        elif kind == "garbage":
            self._complete(h, body, GARBAGE)


def _reset(h: _Handler) -> None:
    """Close the socket with SO_LINGER 0: the kernel sends RST, the client sees a reset."""
    h.close_connection = True
    conn = h.connection
    conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    # The socket's fd closes only once its makefile() streams are closed too.
    h.rfile.close()
    h.wfile.close()
    conn.close()

"""The OpenAI Files and Batches APIs, emulated on the loopback chat server (tests/openai_server.py).

``with OpenAIServer(batches=BatchService(item_s=0.001)) as srv:`` also serves, at ``srv.base_url``:
``POST /v1/files`` (multipart, purpose "batch"), ``GET /v1/files[/{id}[/content]]``,
``DELETE /v1/files/{id}``, ``POST /v1/batches``, ``GET /v1/batches[/{id}]`` (list: newest first,
``limit``/``after``) and ``POST /v1/batches/{id}/cancel``, as the real SDK calls them.

A batch is worked by its own thread: "validating" for ``validate_s`` seconds, then either "failed"
(``errors`` name the 1-based lines: invalid_json_line, missing_required_parameter, invalid_value,
duplicate_custom_id, url_mismatch, model_mismatch, a body the chat endpoint refuses, empty_file,
too_many_tasks) or "in_progress": each line in file order, ``item_s`` seconds each, answered
exactly as the chat endpoint answers the same body (the server's ``responder`` and completion
object, same ``usage``), then "finalizing" -> "completed". ``output_file_id`` holds one line per
200 answer and ``error_file_id`` one per failed request; either is None when it would be empty.

- Faults: ``faults=FaultPlan(...)`` decides per request. "429", "500", "503" give an error-file line
  with that status code; "timeout", "reset", "malformed", "truncated" (transport faults a batch has
  no wire for) give a 500 line; "empty", "refusal", "garbage" give a 200 line with that content.
- Expiry: ``expire_after=N`` (read when a batch is created): after N requests the batch is
  "expired"; the N answered are in the output/error files, every request never run is an
  error-file line with ``error.code`` "batch_expired" and counts as failed.
- Hold: ``pause()`` keeps in-progress batches from running their next request until ``resume()``
  (a cancel still goes through). Cancel: "cancelling" for ``cancel_s`` seconds, then "cancelled";
  the output/error files hold only the requests run before it; cancelling a batch that already
  finished is a 400.
- ``fail_next = "message"``: the next created batch fails validation as a whole with that message.
- ``shuffle_seed``: shuffle output/error lines (OpenAI does not keep input order) deterministically.
- Records: ``submissions`` (accepted ``POST /v1/batches``), ``uploads``, ``deletions``, ``polls``
  (GETs of one batch), ``batches`` (id -> BatchState), ``files`` (id -> bytes); every request is in
  the server's ``requests`` with its headers. ``wait_for(batch_id, *statuses)`` blocks until then.
"""

from __future__ import annotations

import email.message
import email.parser
import json
import random
import threading
import time
import urllib.parse
import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from tests.openai_server import GARBAGE, REFUSAL, FaultPlan, _error, _validate

if TYPE_CHECKING:
    from tests.openai_server import OpenAIServer, _Handler

ENDPOINT = "/v1/chat/completions"
TERMINAL = frozenset({"completed", "failed", "expired", "cancelled"})
EXPIRED = {
    "code": "batch_expired",
    "message": "This request could not be executed before the completion window expired.",
}
_CONTENT_FAULTS = {"empty": "", "refusal": REFUSAL, "garbage": GARBAGE}
_HTTP_FAULTS = {
    "429": (429, "Rate limit reached. Please try again later.", "rate_limit_exceeded"),
    "503": (503, "The engine is currently overloaded.", "overloaded"),
}
_SERVER_ERROR = (500, "The server had an error.", "internal_error")


def _bad(message: str, code: str | None = "invalid_value", param: str | None = None) -> dict:
    return _error(message, "invalid_request_error", code, param)


def _line_error(line: int | None, code: str, message: str, param: str | None = None) -> dict:
    return {"code": code, "message": message, "line": line, "param": param}


@dataclass
class BatchState:
    """One emulated batch. Read it under no lock only once ``status`` is terminal."""

    id: str
    input_file_id: str
    metadata: dict | None
    data: bytes  # the input file as it was when the batch was created
    expire_after: int | None
    fail: str | None
    created_at: int = field(default_factory=lambda: int(time.time()))
    status: str = "validating"
    times: dict[str, int] = field(default_factory=dict)  # "in_progress" -> in_progress_at, ...
    errors: list[dict] | None = None
    requests: list[dict] = field(default_factory=list)  # the validated lines
    model: str | None = None
    completed: int = 0
    failed: int = 0
    usage: dict[str, int] = field(default_factory=lambda: {"input": 0, "output": 0})
    out_lines: list[dict] = field(default_factory=list)
    err_lines: list[dict] = field(default_factory=list)
    output_file_id: str | None = None
    error_file_id: str | None = None
    cancel: bool = False

    def to_json(self) -> dict:
        stamp = {
            f"{s}_at": self.times.get(s)
            for s in ("in_progress", "finalizing", "completed", "failed", "expired")
        }
        stamp |= {"cancelling_at": self.times.get("cancelling")}
        stamp |= {"cancelled_at": self.times.get("cancelled")}
        inp, out = self.usage["input"], self.usage["output"]
        return {
            "id": self.id,
            "object": "batch",
            "endpoint": ENDPOINT,
            "errors": None if self.errors is None else {"object": "list", "data": self.errors},
            "input_file_id": self.input_file_id,
            "completion_window": "24h",
            "status": self.status,
            "output_file_id": self.output_file_id,
            "error_file_id": self.error_file_id,
            "created_at": self.created_at,
            "expires_at": self.created_at + 24 * 3600,
            **stamp,
            "request_counts": {
                "total": len(self.requests),
                "completed": self.completed,
                "failed": self.failed,
            },
            "metadata": self.metadata,
            "model": self.model,
            "usage": {
                "input_tokens": inp,
                "input_tokens_details": {"cached_tokens": 0},
                "output_tokens": out,
                "output_tokens_details": {"reasoning_tokens": 0},
                "total_tokens": inp + out,
            },
        }


def validate_lines(data: bytes, max_requests: int) -> tuple[list[dict], list[dict]]:
    """(the requests, the errors) of a batch input file; errors name 1-based lines."""
    numbered = [(i, raw) for i, raw in enumerate(data.split(b"\n"), 1) if raw.strip()]
    if not numbered:
        return [], [_line_error(None, "empty_file", "The batch input file is empty.")]
    if len(numbered) > max_requests:
        message = (
            f"The batch input file has {len(numbered)} requests; a batch may contain at most "
            f"{max_requests} requests."
        )
        return [], [_line_error(None, "too_many_tasks", message)]
    requests: list[dict] = []
    errors: list[dict] = []
    seen: set[str] = set()
    model: str | None = None
    for number, raw in numbered:
        line, problem = _check_line(raw, seen, model)
        if problem:
            errors.append(_line_error(number, *problem))
            continue
        seen.add(line["custom_id"])
        model = model or line["body"]["model"]
        requests.append(line)
    return requests, errors


def _check_line(raw: bytes, seen: set[str], model: str | None) -> tuple[Any, tuple | None]:
    """(the parsed line, None) or (None, (code, message, param)) for one input line."""
    try:
        line = json.loads(raw)
    except ValueError:
        line = None
    if not isinstance(line, dict):
        return None, ("invalid_json_line", "This line is not parseable as valid JSON.")
    custom_id, method, url = line.get("custom_id"), line.get("method"), line.get("url")
    for name, value in (("custom_id", custom_id), ("method", method), ("url", url)):
        if not isinstance(value, str) or not value:
            return None, (
                "missing_required_parameter",
                f"Missing required parameter: '{name}'.",
                name,
            )
    if custom_id in seen:
        message = (
            "The custom_id for this request is a duplicate of another request. The custom_id "
            "parameter must be unique for each request in a batch."
        )
        return None, ("duplicate_custom_id", message, "custom_id")
    if method != "POST":
        return None, (
            "invalid_value",
            f"Invalid method '{method}': only POST is supported.",
            "method",
        )
    if url != ENDPOINT:
        message = f"The URL '{url}' does not match the batch endpoint '{ENDPOINT}'."
        return None, ("url_mismatch", message, "url")
    problem = _validate(line.get("body"))
    if problem:
        message, code, param = problem
        return None, (code, message, f"body.{param}" if param else "body")
    if model is not None and line["body"]["model"] != model:
        message = (
            f"The model '{line['body']['model']}' differs from the model '{model}' of this "
            "batch's other requests; a batch input file may use only one model."
        )
        return None, ("model_mismatch", message, "body.model")
    return line, None


def parse_multipart(content_type: str, raw: bytes) -> dict[str, tuple[str | None, bytes]]:
    """name -> (filename, bytes) of a multipart/form-data body; {} when it is not one."""
    header = email.message.Message()
    header["content-type"] = content_type
    boundary = header.get_param("boundary")
    if header.get_content_type() != "multipart/form-data" or not isinstance(boundary, str):
        return {}
    fields: dict[str, tuple[str | None, bytes]] = {}
    # Every delimiter is CRLF "--boundary"; the first one has no CRLF before it.
    for chunk in (b"\r\n" + raw).split(b"\r\n--" + boundary.encode())[1:]:
        if chunk.startswith(b"--"):  # the closing delimiter
            break
        head, _, content = chunk.partition(b"\r\n\r\n")
        part = email.parser.HeaderParser().parsestr(head.decode("utf-8", "replace").strip())
        name = part.get_param("name", header="content-disposition")
        if isinstance(name, str):
            filename = part.get_param("filename", header="content-disposition")
            fields[name] = (filename if isinstance(filename, str) else None, content)
    return fields


class BatchService:
    """The Files and Batches endpoints of one OpenAIServer (see module doc)."""

    def __init__(
        self,
        faults: FaultPlan | None = None,
        max_requests: int = 50_000,
        max_file_bytes: int = 200 * 2**20,
        validate_s: float = 0.0,
        item_s: float = 0.0,
        cancel_s: float = 0.0,
        expire_after: int | None = None,
        shuffle_seed: int | None = None,
    ) -> None:
        self.faults = faults or FaultPlan()
        self.max_requests = max_requests
        self.max_file_bytes = max_file_bytes
        self.validate_s = validate_s
        self.item_s = item_s
        self.cancel_s = cancel_s
        self.expire_after = expire_after
        self.shuffle_seed = shuffle_seed
        self.fail_next: str | None = None
        self.submissions = self.uploads = self.deletions = self.polls = 0
        self.batches: dict[str, BatchState] = {}  # in creation order
        self.files: dict[str, bytes] = {}
        self.file_objects: dict[str, dict] = {}
        self._server: OpenAIServer | None = None
        self._cond = threading.Condition()
        self._paused = False
        self._closing = False
        self._threads: list[threading.Thread] = []

    # -- wiring and control
    def attach(self, server: OpenAIServer) -> None:
        if self._server is not None and self._server is not server:
            raise ValueError("a BatchService serves one OpenAIServer")
        self._server = server

    def pause(self) -> None:
        """Hold every batch before its next request (they stay "in_progress")."""
        with self._cond:
            self._paused = True

    def resume(self) -> None:
        with self._cond:
            self._paused = False
            self._cond.notify_all()

    def close(self, wait: float = 2.0) -> None:
        """Stop the batch threads (a batch left unfinished keeps its last status)."""
        with self._cond:
            self._closing = True
            self._cond.notify_all()
            threads = list(self._threads)
        deadline = time.monotonic() + wait
        for thread in threads:
            thread.join(max(0.0, deadline - time.monotonic()))

    def wait_for(self, batch_id: str, *statuses: str, timeout: float = 10.0) -> dict:
        """The batch JSON once its status is one of ``statuses`` (default: any terminal one)."""
        wanted = set(statuses) or TERMINAL
        with self._cond:
            ok = self._cond.wait_for(lambda: self.batches[batch_id].status in wanted, timeout)
            if not ok:
                status = self.batches[batch_id].status
                raise TimeoutError(f"{batch_id} still {status!r} after {timeout}s")
            return self.batches[batch_id].to_json()

    # -- HTTP
    @staticmethod
    def serves(path: str) -> bool:
        route = urllib.parse.urlsplit(path).path.rstrip("/")
        return route in ("/v1/files", "/v1/batches") or route.startswith(
            ("/v1/files/", "/v1/batches/")
        )

    def handle(self, h: _Handler, raw: bytes) -> None:
        """Answer one request on a files/batches path (the GETs are recorded by the server)."""
        url = urllib.parse.urlsplit(h.path)
        parts = url.path.strip("/").split("/")[1:]  # without "v1"
        query = dict(urllib.parse.parse_qsl(url.query))
        if h.command == "POST" and parts == ["files"]:
            h._record(None, raw, None)
            self._upload(h, raw)
        elif h.command == "POST":
            body = _json_or_none(raw)
            h._record(body, raw, None)
            if parts == ["batches"]:
                self._create(h, body)
            elif len(parts) == 3 and parts[0] == "batches" and parts[2] == "cancel":
                self._cancel(h, parts[1])
            else:
                h._json(404, _bad(f"Unknown path {h.path}", None))
        elif h.command == "GET":
            self._get(h, parts, query)
        elif h.command == "DELETE" and len(parts) == 2 and parts[0] == "files":
            self._delete(h, parts[1])
        else:
            h._json(404, _bad(f"Unknown path {h.path}", None))

    def _get(self, h: _Handler, parts: list[str], query: dict[str, str]) -> None:
        with self._cond:
            if parts == ["batches"]:
                items = [b.to_json() for b in reversed(self.batches.values())]
                answer = _page(items, query)
            elif parts == ["files"]:
                items = [f for f in reversed(self.file_objects.values())]
                purpose = query.get("purpose")
                answer = _page([f for f in items if purpose in (None, f["purpose"])], query)
            elif len(parts) == 2 and parts[0] == "batches" and parts[1] in self.batches:
                self.polls += 1
                answer = self.batches[parts[1]].to_json()
            elif len(parts) == 2 and parts[0] == "files" and parts[1] in self.files:
                answer = self.file_objects[parts[1]]
            elif parts[2:] == ["content"] and parts[0] == "files" and parts[1] in self.files:
                answer = self.files[parts[1]]
            else:
                answer = None
        if answer is None:
            what = "file" if parts[:1] == ["files"] else "batch"
            h._json(404, _bad(f"No such {what}: '{'/'.join(parts[1:2])}'", None))
        elif isinstance(answer, bytes):
            h._send(200, answer, "application/octet-stream")
        else:
            h._json(200, answer)

    def _upload(self, h: _Handler, raw: bytes) -> None:
        fields = parse_multipart(h.headers.get("Content-Type") or "", raw)
        purpose = fields.get("purpose", (None, b""))[1].decode("utf-8", "replace")
        if "file" not in fields:
            message = "Missing required parameter: 'file' (send multipart/form-data)."
            h._json(400, _bad(message, "missing_required_parameter", "file"))
        elif purpose != "batch":
            message = f"Invalid purpose '{purpose}': this test server accepts only 'batch'."
            h._json(400, _bad(message, "invalid_value", "purpose"))
        elif len(fields["file"][1]) > self.max_file_bytes:
            message = (
                f"File is {len(fields['file'][1])} bytes, more than the "
                f"{self.max_file_bytes} bytes allowed for a batch input file."
            )
            h._json(400, _bad(message, "file_too_large", "file"))
        else:
            filename, data = fields["file"]
            with self._cond:
                self.uploads += 1
                obj = self._store(filename or "upload.jsonl", "batch", data)
            h._json(200, obj)

    def _store(self, filename: str, purpose: str, data: bytes) -> dict:
        """Keep a file (the caller holds the lock); its FileObject."""
        file_id = f"file-{uuid.uuid4().hex[:24]}"
        obj = {
            "id": file_id,
            "object": "file",
            "bytes": len(data),
            "created_at": int(time.time()),
            "filename": filename,
            "purpose": purpose,
            "status": "processed",
            "expires_at": None,
            "status_details": None,
        }
        self.files[file_id], self.file_objects[file_id] = data, obj
        return obj

    def _delete(self, h: _Handler, file_id: str) -> None:
        with self._cond:
            found = self.files.pop(file_id, None) is not None
            self.file_objects.pop(file_id, None)
            self.deletions += found
        if found:
            h._json(200, {"id": file_id, "object": "file", "deleted": True})
        else:
            h._json(404, _bad(f"No such file: '{file_id}'", None))

    def _create(self, h: _Handler, body: Any) -> None:
        problem = _check_create(body, self.file_objects)
        if problem:
            h._json(400, problem)
            return
        with self._cond:
            batch = BatchState(
                id=f"batch_{uuid.uuid4().hex[:24]}",
                input_file_id=body["input_file_id"],
                metadata=body.get("metadata"),
                data=self.files[body["input_file_id"]],
                expire_after=self.expire_after,
                fail=self.fail_next,
            )
            self.fail_next = None
            self.submissions += 1
            self.batches[batch.id] = batch
            thread = threading.Thread(target=self._work, args=(batch,), daemon=True)
            self._threads.append(thread)
            answer = batch.to_json()
        thread.start()
        h._json(200, answer)

    def _cancel(self, h: _Handler, batch_id: str) -> None:
        with self._cond:
            batch = self.batches.get(batch_id)
            if batch is not None and batch.status not in ("completed", "failed", "expired"):
                if batch.status not in ("cancelling", "cancelled"):
                    batch.cancel = True
                    self._set(batch, "cancelling")
                answer = batch.to_json()
            else:
                answer = None
        if batch is None:
            h._json(404, _bad(f"No such batch: '{batch_id}'", None))
        elif answer is None:
            h._json(400, _bad(f"Cannot cancel a batch with status {batch.status}.", None))
        else:
            h._json(200, answer)

    # -- the batch thread
    def _set(self, batch: BatchState, status: str) -> None:
        """Move to ``status`` and stamp its time (the caller holds the lock)."""
        batch.status = status
        batch.times[status] = int(time.time())
        self._cond.notify_all()

    def _sleep(self, seconds: float, batch: BatchState) -> bool:
        """Wait up to ``seconds`` (cut short by a cancel); False when the server closes."""
        with self._cond:
            self._cond.wait_for(lambda: self._closing or batch.cancel, seconds)
            return not self._closing

    def _work(self, batch: BatchState) -> None:
        if not self._sleep(self.validate_s, batch):
            return
        requests, errors = validate_lines(batch.data, self.max_requests)
        if batch.fail:
            errors = [_line_error(None, "invalid_file", batch.fail)]
        with self._cond:
            if batch.cancel:
                return self._finish_cancel(batch)
            if errors:
                batch.errors = errors
                return self._set(batch, "failed")
            batch.requests = requests
            batch.model = requests[0]["body"]["model"]
            self._set(batch, "in_progress")
        for index, request in enumerate(requests):
            with self._cond:
                self._cond.wait_for(lambda: self._closing or batch.cancel or not self._paused)
                if self._closing:
                    return None
                if batch.cancel:
                    return self._finish_cancel(batch)
                if batch.expire_after is not None and index >= batch.expire_after:
                    return self._expire(batch, requests[index:])
            if not self._sleep(self.item_s, batch):
                return None
            self._run(batch, request)
        with self._cond:
            if batch.cancel:
                return self._finish_cancel(batch)
            self._set(batch, "finalizing")
            self._write_files(batch)
            return self._set(batch, "completed")

    def _run(self, batch: BatchState, request: dict) -> None:
        status, body = self._answer(request["body"])
        line = {
            "id": f"batch_req_{uuid.uuid4().hex[:24]}",
            "custom_id": request["custom_id"],
            "response": {
                "status_code": status,
                "request_id": f"req_{uuid.uuid4().hex[:24]}",
                "body": body,
            },
            "error": None,
        }
        with self._cond:
            if status == 200:
                batch.completed += 1
                batch.usage["input"] += body["usage"]["prompt_tokens"]
                batch.usage["output"] += body["usage"]["completion_tokens"]
                batch.out_lines.append(line)
            else:
                batch.failed += 1
                batch.err_lines.append(line)
            self._cond.notify_all()

    def _answer(self, body: dict) -> tuple[int, dict]:
        """(status code, response body) for one request: the chat endpoint's answer."""
        assert self._server is not None, "BatchService is not attached to an OpenAIServer"
        fault = self.faults.decide(body)
        if fault is not None and fault.kind not in _CONTENT_FAULTS:
            status, message, code = _HTTP_FAULTS.get(fault.kind, _SERVER_ERROR)
            kind = "rate_limit_exceeded" if status == 429 else "server_error"
            return status, _error(message, kind, code)
        if fault is not None:
            return 200, self._server._completion(body, _CONTENT_FAULTS[fault.kind])
        try:
            content = self._server.responder(body)
        except Exception as e:  # as the chat endpoint: a broken test responder is a 500
            return 500, _error(f"test responder failed: {e!r}", "server_error", "responder")
        return 200, self._server._completion(body, content)

    def _expire(self, batch: BatchState, unrun: list[dict]) -> None:
        for request in unrun:
            line_id = f"batch_req_{uuid.uuid4().hex[:24]}"
            line = {"id": line_id, "custom_id": request["custom_id"], "response": None}
            batch.err_lines.append(line | {"error": dict(EXPIRED)})
        batch.failed += len(unrun)
        self._write_files(batch)
        self._set(batch, "expired")

    def _finish_cancel(self, batch: BatchState) -> None:
        """Cancelling -> (after cancel_s) cancelled; the caller holds the lock."""
        self._cond.wait_for(lambda: self._closing, self.cancel_s)
        if not self._closing:
            self._write_files(batch)
            self._set(batch, "cancelled")

    def _write_files(self, batch: BatchState) -> None:
        """Store the output and error files (the caller holds the lock)."""
        rng = random.Random(self.shuffle_seed)
        for kind, lines in (("output", batch.out_lines), ("error", batch.err_lines)):
            if not lines:
                continue
            if self.shuffle_seed is not None:
                lines = rng.sample(lines, len(lines))
            data = "".join(json.dumps(line) + "\n" for line in lines).encode()
            obj = self._store(f"{batch.id}_{kind}.jsonl", "batch_output", data)
            setattr(batch, f"{kind}_file_id", obj["id"])


def _check_create(body: Any, files: dict[str, dict]) -> dict | None:
    """The 400 answer for a batch we refuse to create, else None."""
    if not isinstance(body, dict):
        return _bad("We could not parse the JSON body of your request.", "invalid_json")
    file_id, metadata = body.get("input_file_id"), body.get("metadata")
    if not isinstance(file_id, str) or not file_id:
        return _bad("Missing required parameter: 'input_file_id'.", "missing_required_parameter")
    if body.get("endpoint") != ENDPOINT:
        message = f"Invalid endpoint {body.get('endpoint')!r}: this server batches only {ENDPOINT}."
        return _bad(message, "invalid_value", "endpoint")
    if body.get("completion_window") != "24h":
        message = f"Invalid completion_window {body.get('completion_window')!r}: only '24h'."
        return _bad(message, "invalid_value", "completion_window")
    if metadata is not None and not (
        isinstance(metadata, dict)
        and len(metadata) <= 16
        and all(isinstance(k, str) and isinstance(v, str) for k, v in metadata.items())
    ):
        return _bad("metadata must be at most 16 string keys and values.", param="metadata")
    if files.get(file_id, {}).get("purpose") != "batch":
        message = f"Input file '{file_id}' does not exist or was not uploaded with purpose 'batch'."
        return _bad(message, "invalid_value", "input_file_id")
    return None


def _page(items: list[dict], query: dict[str, str]) -> dict:
    """A cursor page of ``items`` (newest first): ``limit`` (1-100, default 20) after ``after``."""
    after = query.get("after")
    ids = [item["id"] for item in items]
    start = ids.index(after) + 1 if after in ids else 0
    limit = min(100, max(1, int(query.get("limit") or 20)))
    data = items[start : start + limit]
    return {
        "object": "list",
        "data": data,
        "first_id": data[0]["id"] if data else None,
        "last_id": data[-1]["id"] if data else None,
        "has_more": start + limit < len(items),
    }


def _json_or_none(raw: bytes) -> Any:
    try:
        return json.loads(raw)
    except ValueError:
        return None

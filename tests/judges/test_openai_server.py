"""The loopback OpenAI server fixture, checked with the official SDK (what the judge backend uses)
and with raw http.client / sockets where the SDK hides the wire.

What each fault looks like to ``openai`` 3.57 (asserted below, sync and async clients alike):
429 -> RateLimitError (Retry-After on ``err.response.headers``); 500, 503 -> InternalServerError;
timeout -> APITimeoutError; reset, truncated -> APIConnectionError (cause: httpx2 ReadError /
RemoteProtocolError); malformed -> a bare json.JSONDecodeError (NOT an openai error, never
retried); empty, refusal, garbage -> ordinary ChatCompletions with that content.
"""

from __future__ import annotations

import asyncio
import contextlib
import http.client
import json
import logging
import socket
import threading
import time
import urllib.error
import urllib.request

import httpx2
import openai
import pytest
from openai import AsyncOpenAI, OpenAI

from tests.openai_server import (
    FAULT_KINDS,
    GARBAGE,
    NO_KEYS,
    REFUSAL,
    Fault,
    FaultPlan,
    OpenAIServer,
    scores_for,
)

KEYS = ["robustness", "correctness", "readability"]


def messages(text: str = "Explain recursion.", keys: list[str] | None = KEYS) -> list[dict]:
    user = f"Instruction: {text}\nResponse: It calls itself."
    if keys is not None:
        user += f"\nScore keys: {', '.join(keys)}"
    system = {"role": "system", "content": "You are a fair judge."}
    return [system, {"role": "user", "content": user}]


def client(srv: OpenAIServer, retries: int = 0, timeout: float = 5.0, key: str = "sk-test"):
    return OpenAI(base_url=srv.base_url, api_key=key, max_retries=retries, timeout=timeout)


def ask(srv: OpenAIServer, text: str = "Explain recursion.", **kw):
    return client(srv, **kw).chat.completions.create(model="judge-test", messages=messages(text))


def post(srv: OpenAIServer, body: dict | bytes, path: str = "/v1/chat/completions"):
    """(status, headers, raw body) of a POST made with urllib, no SDK in between."""
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    url = srv.base_url.removesuffix("/v1") + path
    req = urllib.request.Request(url, data, {"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=5) as resp:
            return resp.status, resp.headers, resp.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers, e.read()


def last_line_scores(content: str) -> dict:
    return json.loads(content.strip().splitlines()[-1])


# --- normal completions and the default responder -------------------------------------------


def test_completion_has_the_openai_shape_and_usage() -> None:
    with OpenAIServer() as srv:
        done = ask(srv)
        status, headers, raw = post(srv, {"model": "m-1", "messages": messages()})
    assert isinstance(done, openai.types.chat.ChatCompletion)
    assert done.object == "chat.completion" and done.model == "judge-test"
    assert done.id.startswith("chatcmpl-") and abs(done.created - time.time()) < 60
    choice = done.choices[0]
    assert (choice.index, choice.finish_reason, choice.message.role) == (0, "stop", "assistant")
    # usage: len(text) // 4 (at least 1) for the prompt's message text and for the answer
    prompt = "\n".join(m["content"] for m in messages())
    assert done.usage.prompt_tokens == len(prompt) // 4
    assert done.usage.completion_tokens == len(choice.message.content) // 4
    assert done.usage.total_tokens == done.usage.prompt_tokens + done.usage.completion_tokens
    # the raw wire shape, keys exactly as OpenAI sends them
    assert status == 200 and headers["Content-Type"] == "application/json"
    obj = json.loads(raw)
    assert set(obj) == {"id", "object", "created", "model", "choices", "usage"}
    assert obj["model"] == "m-1"
    assert set(obj["usage"]) == {"prompt_tokens", "completion_tokens", "total_tokens"}
    assert obj["choices"][0]["message"]["content"] == choice.message.content


def test_default_responder_scores_are_deterministic_per_prompt() -> None:
    prompts = [f"Question number {i}: explain topic {i * 7}." for i in range(20)]
    with OpenAIServer() as srv:
        c = client(srv)

        def content(text: str) -> str:
            done = c.chat.completions.create(model="judge-test", messages=messages(text))
            return done.choices[0].message.content

        first = [content(p) for p in prompts]
        again = [content(p) for p in prompts]
    assert first == again
    scores = [last_line_scores(c) for c in first]
    assert all(list(s) == KEYS for s in scores)  # the Score keys, in their order
    values = [v for s in scores for v in s.values()]
    assert set(values) == {1, 2, 3, 4, 5}  # 60 draws cover the scale: scores vary by prompt
    assert len({tuple(s.values()) for s in scores}) > 10
    # feedback first: one paragraph per key, before the scores line
    paragraphs = first[0].strip().split("\n\n")
    assert [p.split(":")[0] for p in paragraphs[:-1]] == KEYS
    # a test can know in advance what a judge run should store
    body = {"model": "judge-test", "messages": messages(prompts[3])}
    assert scores[3] == scores_for(body)


@pytest.mark.parametrize("fmt", ["json_object", "json_schema"])
def test_json_response_format_gets_a_json_object(fmt: str) -> None:
    response_format: dict = {"type": fmt}
    if fmt == "json_schema":
        schema = {"type": "object", "properties": {"scores": {"type": "object"}}}
        response_format["json_schema"] = {"name": "judge", "schema": schema}
    with OpenAIServer() as srv:
        c = client(srv)
        plain = c.chat.completions.create(model="judge-test", messages=messages())
        as_json = c.chat.completions.create(
            model="judge-test", messages=messages(), response_format=response_format
        )
        assert srv.requests[-1].body["response_format"]["type"] == fmt
    obj = json.loads(as_json.choices[0].message.content)
    assert set(obj) == {"feedback", "scores"} and "robustness" in obj["feedback"]
    assert obj["scores"] == last_line_scores(plain.choices[0].message.content)


def test_no_score_keys_gets_no_scores() -> None:
    with OpenAIServer() as srv:
        c = client(srv)
        done = c.chat.completions.create(model="judge-test", messages=messages(keys=None))
    assert done.choices[0].message.content == NO_KEYS


def test_custom_responder_and_latency_callable_see_the_request() -> None:
    seen: list[float] = []

    def latency(body: dict) -> float:
        seen.append(body["temperature"])
        return 0.0

    with OpenAIServer(latency=latency, responder=lambda b: b["messages"][-1]["content"][::-1]) as s:
        c = client(s)
        done = c.chat.completions.create(model="x", messages=messages("abc"), temperature=0.3)
    assert done.choices[0].message.content == messages("abc")[-1]["content"][::-1]
    assert seen == [0.3]


def test_a_failing_responder_is_a_clear_500() -> None:
    def responder(body: dict) -> str:
        raise KeyError("no such item")

    with OpenAIServer(responder=responder) as srv, pytest.raises(openai.InternalServerError) as e:
        ask(srv)
    assert "test responder failed" in e.value.message and "no such item" in e.value.message


# --- faults as the SDK sees them ------------------------------------------------------------


def _call(srv: OpenAIServer, use_async: bool, retries: int = 0, timeout: float = 5.0):
    if not use_async:
        return ask(srv, retries=retries, timeout=timeout)

    async def run():
        async with AsyncOpenAI(
            base_url=srv.base_url, api_key="sk-test", max_retries=retries, timeout=timeout
        ) as c:
            return await c.chat.completions.create(model="judge-test", messages=messages())

    return asyncio.run(run())


@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
def test_status_faults(use_async: bool) -> None:
    plan = FaultPlan(first_n={"429": 1, "500": 1, "503": 1})
    with OpenAIServer(faults=plan) as srv:
        with pytest.raises(openai.RateLimitError) as e429:
            _call(srv, use_async)
        with pytest.raises(openai.InternalServerError) as e500:
            _call(srv, use_async)
        with pytest.raises(openai.InternalServerError) as e503:
            _call(srv, use_async)
        assert [r.fault for r in srv.requests] == ["429", "500", "503"]
    assert e429.value.status_code == 429
    assert e429.value.response.headers["retry-after"] == "0.05"
    assert e429.value.body["type"] == "rate_limit_exceeded"  # the SDK hands over body["error"]
    assert (e500.value.status_code, e503.value.status_code) == (500, 503)
    assert isinstance(e503.value, openai.APIStatusError)
    assert e500.value.body["type"] == "server_error"


def test_429_retry_after_is_configurable() -> None:
    plan = FaultPlan(by_marker={"slow down": Fault("429", retry_after=2.5)}, retry_after=7)
    seven_s = FaultPlan(first_n={"429": 1}, retry_after=7)
    with OpenAIServer(faults=seven_s) as srv, pytest.raises(openai.RateLimitError) as seven:
        ask(srv)
    with OpenAIServer(faults=plan) as srv, pytest.raises(openai.RateLimitError) as marked:
        ask(srv, "please slow down")
    assert seven.value.response.headers["retry-after"] == "7"
    assert marked.value.response.headers["retry-after"] == "2.5"


@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
def test_timeout_fault_trips_the_client_timeout(use_async: bool) -> None:
    with OpenAIServer(faults=FaultPlan(first_n={"timeout": 1}), hang_seconds=10) as srv:
        start = time.monotonic()
        with pytest.raises(openai.APITimeoutError):
            _call(srv, use_async, timeout=0.5)
        waited = time.monotonic() - start
        assert srv.requests[0].fault == "timeout"
    assert 0.45 < waited < 5  # the client gave up; the server was still holding the line


@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
def test_connection_faults(use_async: bool) -> None:
    plan = FaultPlan(first_n={"reset": 1, "truncated": 1, "malformed": 1})
    with OpenAIServer(faults=plan) as srv:
        with pytest.raises(openai.APIConnectionError) as reset:
            _call(srv, use_async)
        with pytest.raises(openai.APIConnectionError) as truncated:
            _call(srv, use_async)
        # a 200 with a JSON content type but a broken body: the SDK lets the decoder error out
        with pytest.raises(json.JSONDecodeError) as malformed:
            _call(srv, use_async)
    assert not isinstance(reset.value, openai.APITimeoutError)
    assert isinstance(reset.value.__cause__, httpx2.ReadError)
    assert isinstance(truncated.value.__cause__, httpx2.RemoteProtocolError)
    assert "complete message body" in str(truncated.value.__cause__)
    assert not isinstance(malformed.value, openai.OpenAIError)


@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
def test_content_faults_are_normal_completions(use_async: bool) -> None:
    with OpenAIServer(faults=FaultPlan(first_n={"empty": 1, "refusal": 1, "garbage": 1})) as srv:
        contents = [_call(srv, use_async).choices[0].message.content for _ in range(3)]
        normal = _call(srv, use_async).choices[0].message.content
    assert contents == ["", REFUSAL, GARBAGE]
    assert "{" not in GARBAGE and not any(d in GARBAGE for d in "12345")
    assert list(last_line_scores(normal)) == KEYS


def test_reset_is_a_tcp_reset_and_truncated_is_short_on_the_wire() -> None:
    request = json.dumps({"model": "m", "messages": messages()}).encode()
    head = (
        f"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(request)}\r\n\r\n"
    ).encode()
    with OpenAIServer(faults=FaultPlan(first_n={"reset": 1, "truncated": 1})) as srv:
        host, port = srv.base_url.split("//")[1].split("/")[0].split(":")
        with socket.create_connection((host, int(port)), timeout=5) as sock:
            sock.sendall(head + request)
            with pytest.raises(ConnectionResetError):  # RST, not an orderly close (b"")
                sock.recv(1000)
        conn = http.client.HTTPConnection(host, int(port), timeout=5)
        conn.request("POST", "/v1/chat/completions", request, {"Content-Type": "application/json"})
        resp = conn.getresponse()
        assert resp.status == 200
        with pytest.raises(http.client.IncompleteRead):
            resp.read()
        conn.close()


def test_malformed_is_a_200_with_a_non_json_body() -> None:
    with OpenAIServer(faults=FaultPlan(first_n={"malformed": 1})) as srv:
        status, headers, raw = post(srv, {"model": "m", "messages": messages()})
    assert status == 200 and headers["Content-Type"] == "application/json"
    with pytest.raises(json.JSONDecodeError):
        json.loads(raw)


def test_error_bodies_have_the_openai_shape() -> None:
    plan = FaultPlan(first_n={"429": 1, "500": 1, "503": 1})
    with OpenAIServer(faults=plan) as srv:
        answers = [post(srv, {"model": "m", "messages": messages()}) for _ in range(3)]
        stream = post(srv, {"model": "m", "messages": messages(), "stream": True})
        bad_json = post(srv, b"{not json")
        no_messages = post(srv, {"model": "m", "messages": []})
        unknown = post(srv, {"model": "m"}, path="/v1/completions")
    statuses = [a[0] for a in answers]
    assert statuses == [429, 500, 503]
    assert answers[0][1]["Retry-After"] == "0.05"
    for _, _, raw in [*answers, stream, bad_json, no_messages, unknown]:
        error = json.loads(raw)["error"]
        assert {"message", "type", "code"} <= set(error) and error["message"]
    types = [json.loads(a[2])["error"]["type"] for a in answers]
    assert types == ["rate_limit_exceeded", "server_error", "server_error"]
    assert [s[0] for s in (stream, bad_json, no_messages, unknown)] == [400, 400, 400, 404]
    assert json.loads(stream[2])["error"]["param"] == "stream"


def test_stream_true_is_a_bad_request_for_the_sdk() -> None:
    with OpenAIServer() as srv, pytest.raises(openai.BadRequestError) as e:
        client(srv).chat.completions.create(model="judge-test", messages=messages(), stream=True)
    assert e.value.status_code == 400 and e.value.body["type"] == "invalid_request_error"


# --- the SDK's own retries ------------------------------------------------------------------


def test_sdk_retry_succeeds_when_only_the_first_attempt_faults() -> None:
    for kind in ("500", "503", "reset", "truncated"):
        with OpenAIServer(faults=FaultPlan(first_n={kind: 1})) as srv:
            done = ask(srv, retries=2)
            records = srv.requests
        assert list(last_line_scores(done.choices[0].message.content)) == KEYS
        assert [r.fault for r in records] == [kind, None]
        # the SDK numbers its attempts; its own backoff before the retry is 0.375-0.5 s
        assert [r.header("x-stainless-retry-count") for r in records] == ["0", "1"]
        assert records[1].timestamp - records[0].timestamp >= 0.3


def test_sdk_waits_retry_after_on_429_and_gives_up_past_two_minutes() -> None:
    with OpenAIServer(faults=FaultPlan(first_n={"429": 2})) as srv:
        ask(srv, retries=2)
        assert [r.fault for r in srv.requests] == ["429", "429", None]
    # Retry-After 1 s: longer than the SDK's own 0.5 s backoff, so the gap shows it was obeyed
    with OpenAIServer(faults=FaultPlan(first_n={"429": 1}, retry_after=1.0)) as srv:
        ask(srv, retries=1)
        first, second = srv.requests
    assert second.timestamp - first.timestamp >= 0.95
    # Retry-After above 120 s: the SDK does not retry at all
    with OpenAIServer(faults=FaultPlan(first_n={"429": 1}, retry_after=300)) as srv:
        with pytest.raises(openai.RateLimitError):
            ask(srv, retries=2)
        assert srv.count() == 1


def test_sdk_does_not_retry_a_malformed_body() -> None:
    with OpenAIServer(faults=FaultPlan(first_n={"malformed": 1})) as srv:
        with pytest.raises(json.JSONDecodeError):
            ask(srv, retries=2)
        assert srv.count() == 1


# --- the fault plan -------------------------------------------------------------------------


def test_fault_rate_is_about_right_and_reproducible() -> None:
    runs = {}
    for seed in range(10):
        plan = FaultPlan(rate=0.2, seed=seed)
        runs[seed] = [plan.decide({"messages": []}) for _ in range(500)]
        assert 70 <= sum(f is not None for f in runs[seed]) <= 130, seed
        again = FaultPlan(rate=0.2, seed=seed)
        assert [again.decide({"messages": []}) for _ in range(500)] == runs[seed]
    assert runs[0] != runs[1]
    # with rate 1 every request faults, kinds drawn evenly
    plan = FaultPlan(rate=1.0, seed=3)
    kinds = [plan.decide({}).kind for _ in range(2000)]
    assert all(120 <= kinds.count(k) <= 280 for k in FAULT_KINDS)
    assert FaultPlan().decide({}) is None


def test_fault_rate_over_http_is_reproducible() -> None:
    fast = ("429", "500", "503", "malformed", "empty", "refusal", "garbage")

    def run() -> list[str | None]:
        with OpenAIServer(faults=FaultPlan(rate=0.2, kinds=fast, seed=11)) as srv:
            host, port = srv.base_url.split("//")[1].split("/")[0].split(":")
            conn = http.client.HTTPConnection(host, int(port), timeout=5)
            statuses = []
            for i in range(500):
                body = json.dumps({"model": "m", "messages": messages(f"item {i}")})
                conn.request("POST", "/v1/chat/completions", body)
                resp = conn.getresponse()
                resp.read()
                statuses.append(resp.status)
            conn.close()
            faults = [r.fault for r in srv.requests]
        errors = sum(f in ("429", "500", "503") for f in faults)
        assert sum(s != 200 for s in statuses) == errors
        return faults

    first = run()
    assert len(first) == 500 and 70 <= sum(f is not None for f in first) <= 130
    assert run() == first


def test_first_n_in_dict_order_then_normal() -> None:
    with OpenAIServer(faults=FaultPlan(first_n={"500": 1, "refusal": 2})) as srv:
        c = client(srv)
        with pytest.raises(openai.InternalServerError):
            c.chat.completions.create(model="m", messages=messages())
        contents = [
            c.chat.completions.create(model="m", messages=messages()).choices[0].message.content
            for _ in range(3)
        ]
        faults = [r.fault for r in srv.requests]
    assert faults == ["500", "refusal", "refusal", None]
    assert contents[:2] == [REFUSAL, REFUSAL] and list(last_line_scores(contents[2])) == KEYS


def test_by_marker_always_faults_and_spares_the_counter() -> None:
    plan = FaultPlan(first_n={"503": 1}, by_marker={"<<FAIL-500>>": "500"})
    with OpenAIServer(faults=plan) as srv:
        for _ in range(3):  # with the SDK's retries: every attempt fails
            with pytest.raises(openai.InternalServerError) as e:
                ask(srv, "broken item <<FAIL-500>>", retries=2)
            assert e.value.status_code == 500
        assert srv.count() == 9
        with pytest.raises(openai.InternalServerError) as e:  # first_n starts counting here
            ask(srv, "normal item")
        assert e.value.status_code == 503
        assert ask(srv, "normal item").choices[0].message.content
    with pytest.raises(ValueError, match="unknown fault kind 'teapot'.*429"):
        FaultPlan(by_marker={"x": "teapot"})


# --- concurrency, records, shutdown ----------------------------------------------------------


def test_64_requests_are_answered_concurrently() -> None:
    barrier = threading.Barrier(64)

    def latency(body: dict) -> float:
        barrier.wait(timeout=20)  # passes only once all 64 are inside the server at once
        return 0.0

    async def burst(srv: OpenAIServer, n: int) -> list:
        async with AsyncOpenAI(base_url=srv.base_url, api_key="k", max_retries=0) as c:
            calls = [
                c.chat.completions.create(model="m", messages=messages(f"q{i}")) for i in range(n)
            ]
            return await asyncio.gather(*calls)

    with OpenAIServer(latency=latency) as srv:
        done = asyncio.run(burst(srv, 64))
        assert srv.max_in_flight == 64 and srv.in_flight == 0
    assert len({d.choices[0].message.content for d in done}) > 1
    # a sanity bound on wall time (64 x 0.2 s would take 12.8 s one at a time)
    with OpenAIServer(latency=0.2) as srv:
        start = time.monotonic()
        done = asyncio.run(burst(srv, 64))
        wall = time.monotonic() - start
    assert len(done) == 64 and wall < 2.5


def test_requests_are_recorded_with_authorization() -> None:
    with OpenAIServer() as srv:
        c = client(srv, key="sk-secret-abc123")
        c.chat.completions.create(model="judge-test", messages=messages(), temperature=0)
        models = c.models.list()
        records = srv.requests
        assert srv.count() == 1 and srv.count("/v1/models") == 1
    assert [m.id for m in models.data] == ["judge-test"]
    chat, listing = records
    assert (chat.method, chat.path, listing.method, listing.path) == (
        "POST",
        "/v1/chat/completions",
        "GET",
        "/v1/models",
    )
    assert chat.headers["authorization"] == "Bearer sk-secret-abc123"
    assert chat.header("Authorization") == "Bearer sk-secret-abc123"
    assert chat.body["messages"] == messages() and chat.body["temperature"] == 0
    assert chat.fault is None and chat.timestamp <= listing.timestamp


def test_the_api_key_is_never_logged(capfd, caplog) -> None:
    caplog.set_level(logging.DEBUG)
    key = "sk-never-log-this-7f3a"
    plan = FaultPlan(first_n={"500": 1, "reset": 1, "truncated": 1, "timeout": 1})
    with OpenAIServer(faults=plan, hang_seconds=0.2) as srv:
        c = client(srv, key=key, timeout=0.1)
        for _ in range(5):
            with contextlib.suppress(openai.OpenAIError):
                c.chat.completions.create(model="m", messages=messages())
        post(srv, b"{broken")
        assert srv.requests[0].header("authorization") == f"Bearer {key}"
    out, err = capfd.readouterr()
    assert key not in out and key not in err
    assert key not in caplog.text


def test_exit_is_prompt_with_hanging_and_idle_connections() -> None:
    before = set(threading.enumerate())
    body = json.dumps({"model": "m", "messages": messages("<<hang>>")}).encode()
    head = f"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: {len(body)}\r\n\r\n"
    plan = FaultPlan(by_marker={"<<hang>>": "timeout"})
    with OpenAIServer(faults=plan, hang_seconds=60, latency=0.0) as srv:
        host, port = srv.base_url.split("//")[1].split("/")[0].split(":")
        hanging = socket.create_connection((host, int(port)), timeout=5)
        hanging.sendall(head.encode() + body)
        idle = http.client.HTTPConnection(host, int(port), timeout=5)
        idle.request("GET", "/v1/models")
        assert idle.getresponse().read()  # the connection stays open (keep-alive)
        deadline = time.monotonic() + 5
        while srv.count() < 1 and time.monotonic() < deadline:
            time.sleep(0.01)
        start = time.monotonic()
    exit_took = time.monotonic() - start
    assert hanging.recv(100) == b""  # closed without an answer
    hanging.close()
    idle.close()
    assert exit_took < 3  # not the 60 s hang
    assert [t for t in threading.enumerate() if t not in before and t.is_alive()] == []

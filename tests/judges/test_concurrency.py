"""Judging at high concurrency, structurally (no timings): the OpenAI backend sends what the SDK's
``chat.completions.create`` sends and reads every answer and failure as the SDK did (its
exceptions mapped as the backend mapped them before it stopped going through them); a run at
C = 64 or 128 has C requests in flight on C kept-alive connections; no journal fsync happens on the
event loop's thread; a journal line is what ``dataclasses.asdict`` gives."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import threading

import httpx2
import openai
import pytest

from judges import records
from judges.backends import CallError
from judges.backends.openai_compat import (
    POOL_SIZE,
    OpenAIBackend,
    _answer,
    _status_error,
    pool_sizes,
)
from judges.config import JudgeConfig
from judges.plan import Selection
from judges.records import CallRecord
from judges.runner import RunOptions, run
from tests.openai_server import FAULT_KINDS, FaultPlan, OpenAIServer

MESSAGES = [
    {"role": "system", "content": "You are a careful judge. Ünïcode stays as written: 評価."},
    {"role": "user", "content": 'Judge this.\n"quoted" {braces}\nScore keys: correctness, fluency'},
]


def _config(srv, **kw) -> JudgeConfig:
    return JudgeConfig("openai", "judge-test", base_url=srv.base_url, **({"timeout_s": 1.0} | kw))


async def _sdk_complete(config: JudgeConfig, messages: list[dict]):
    """The reference: the SDK's own call and parsing, its exceptions mapped as before."""
    client = openai.AsyncOpenAI(
        api_key="unused", base_url=config.base_url, max_retries=0, timeout=config.timeout_s
    )
    extra = {"response_format": {"type": "json_object"}} if config.structured else {}
    try:
        r = await client.chat.completions.create(
            model=config.model, messages=messages, temperature=config.temperature,
            max_tokens=config.max_tokens, **extra,
        )  # fmt: skip
    except openai.APITimeoutError:
        return ("error", f"timed out after {config.timeout_s:g} s", True, None, None)
    except openai.APIConnectionError as e:
        return ("error", f"connection failed ({type(e).__name__})", True, None, None)
    except openai.APIStatusError as e:
        err = _status_error(e)
        return ("error", err.message, err.retryable, err.status, err.retry_after)
    except (openai.APIResponseValidationError, ValueError) as e:
        return ("error", f"malformed response ({type(e).__name__})", True, None, None)
    finally:
        await client.close()
    if not hasattr(r, "choices"):
        return ("error", "malformed response (not a chat completion)", True, None, None)
    msg = r.choices[0].message if r.choices else None
    text = (msg.content or getattr(msg, "refusal", None) or "") if msg else ""
    usage = r.usage
    return ("ok", text, usage.prompt_tokens, usage.completion_tokens)


async def _backend_complete(config: JudgeConfig, messages: list[dict]):
    backend = OpenAIBackend(config, concurrency=4)
    try:
        done = await backend.complete(messages)
    except CallError as e:
        return ("error", e.message, e.retryable, e.status, e.retry_after)
    finally:
        await backend.aclose()
    return ("ok", done.text, done.prompt_tokens, done.completion_tokens)


@pytest.mark.parametrize("structured", [False, True])
def test_the_request_on_the_wire_is_what_the_sdk_sends(structured):
    with OpenAIServer() as srv:
        cfg = _config(srv, structured=structured, temperature=0.3, max_tokens=300)
        sdk = asyncio.run(_sdk_complete(cfg, MESSAGES))
        ours = asyncio.run(_backend_complete(cfg, MESSAGES))
        first, second = srv.requests
    assert ours == sdk and sdk[0] == "ok"
    assert second.raw == first.raw  # the same bytes, key order included
    assert json.loads(second.raw)["messages"] == MESSAGES
    assert (second.method, second.path) == (first.method, first.path)
    assert second.headers == first.headers  # user agent, platform, auth, content type, …


@pytest.mark.timeout(120)
@pytest.mark.parametrize("kind", FAULT_KINDS)
def test_every_fault_reads_as_the_sdk_read_it(kind):
    """Each fault the test server can inject gives the same outcome through both paths."""
    plan = FaultPlan(first_n={kind: 2}, retry_after=0.25)
    with OpenAIServer(faults=plan, hang_seconds=2.0) as srv:
        cfg = _config(srv)
        sdk = asyncio.run(_sdk_complete(cfg, MESSAGES))
        ours = asyncio.run(_backend_complete(cfg, MESSAGES))
        assert [r.fault for r in srv.requests] == [kind, kind]
    assert ours == sdk


def _response(body: bytes, content_type: str) -> httpx2.Response:
    return httpx2.Response(200, content=body, headers={"content-type": content_type})


def test_answers_the_server_cannot_send_read_as_the_sdk_reads_them():
    """Shapes the test server never sends, against what the SDK's parser does with them (a
    non-JSON type is tried as JSON, else returned as text; a JSON type must parse)."""
    completion = {"choices": [{"message": {"content": "ok", "refusal": None}}],
                  "usage": {"prompt_tokens": 7, "completion_tokens": 2}}  # fmt: skip
    raw = json.dumps(completion).encode()
    assert _answer(_response(raw, "text/plain")) == ("ok", 7, 2)
    assert _answer(_response(raw, "application/json; charset=utf-8")) == ("ok", 7, 2)
    refusal = {"choices": [{"message": {"content": None, "refusal": "no"}}], "usage": None}
    assert _answer(_response(json.dumps(refusal).encode(), "application/json")) == ("no", 0, 0)
    assert _answer(_response(b'{"choices": []}', "application/json")) == ("", 0, 0)
    for body, kind, why in [
        (b"<html>proxy</html>", "text/html", "not a chat completion"),
        (b"{}", "application/json", "not a chat completion"),
        (b"[1, 2]", "application/json", "not a chat completion"),
        (b'{"choices": "x"}', "application/json", "not a chat completion"),
        (b'{"choices": [', "application/json", "JSONDecodeError"),
    ]:
        with pytest.raises(CallError, match=f"malformed response \\({why}\\)") as e:
            _answer(_response(body, kind))
        assert e.value.retryable


def test_pools_hold_one_connection_per_concurrent_call():
    assert pool_sizes(1) == [1]
    assert pool_sizes(POOL_SIZE) == [POOL_SIZE]
    for c in (8, 9, 32, 64, 100, 128, 257):
        sizes = pool_sizes(c)
        assert sum(sizes) == c and max(sizes) <= POOL_SIZE and max(sizes) - min(sizes) <= 1
    backend = OpenAIBackend(JudgeConfig("openai", "m", base_url="http://127.0.0.1:9/v1"), 128)
    limits = [p._transport._pool for p in backend.pools]
    assert sum(p._max_connections for p in limits) == 128
    assert all(p._max_keepalive_connections == p._max_connections for p in limits)
    asyncio.run(backend.aclose())


@pytest.mark.parametrize("c", [64, 128])
def test_a_run_at_c_keeps_c_requests_in_flight_on_c_kept_connections(store, c):
    """128 is past httpx's default of 100 kept-alive connections (which reconnected 28 calls of
    every round)."""
    opened: list[int] = []
    with OpenAIServer(latency=0.3) as srv:
        track = srv._track

        def counting(conn, add: bool) -> None:
            if add:
                opened.append(1)
            track(conn, add)

        srv._track = counting
        s = run(store, _config(srv, timeout_s=30), Selection("demo", limit=2 * c), RunOptions(
            concurrency=c, flush_s=0.1))  # fmt: skip
        peak, asked = srv.max_in_flight, srv.count()
    assert s.ok == 2 * c and asked == 2 * c
    assert peak == c  # the pools never made a call wait for a connection
    assert len(opened) == c  # the second round on the first round's connections


def test_no_journal_fsync_happens_on_the_event_loop_thread(store, monkeypatch):
    synced: list[str] = []
    real = os.fsync

    def fsync(fd: int) -> None:
        synced.append(threading.current_thread().name)
        real(fd)

    monkeypatch.setattr(records.os, "fsync", fsync)
    loop_thread = threading.current_thread().name  # asyncio.run runs the loop right here
    with OpenAIServer(latency=0.02) as srv:
        s = run(store, _config(srv), Selection("demo", limit=40), RunOptions(
            concurrency=8, flush_s=0.05))  # fmt: skip
    assert s.ok == 40 and synced  # answers were made durable …
    assert loop_thread not in synced  # … never by the loop's thread


def test_a_journal_line_is_the_record_as_asdict_gives_it(tmp_path):
    from analysis.core.store import Store

    store = Store(tmp_path / "x.duckdb")
    rec = CallRecord(
        "run1", "demo", "12", "model-a", "judge", "k" * 64, 'raw "text"\n評価', "why", "ok", None,
        201.5, 100, 50, {"correctness": 3.0, "fluency": None}, False,
    )  # fmt: skip
    journal = records.Journal(store, "run1")
    try:
        journal.append(rec)
    finally:
        journal.close(remove=False)
    line = journal.path.read_bytes()
    expected = (json.dumps(dataclasses.asdict(rec), ensure_ascii=False) + "\n").encode()
    assert line == expected
    assert records.read_journal(journal.path) == [rec]

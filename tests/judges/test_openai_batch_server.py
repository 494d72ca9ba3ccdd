"""The Files/Batches emulation (tests/openai_batches.py), driven by the real ``openai`` SDK.

Expected answers come from the same server's chat endpoint (what a live run would store), the
expected files and counts from the lines each test writes by hand.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request

import openai
import pytest
from openai import OpenAI

from tests.openai_batches import BatchService
from tests.openai_server import REFUSAL, FaultPlan, OpenAIServer

KEY = "sk-batch-test"
TERMINAL = {"completed", "failed", "expired", "cancelled"}


def body(text: str, model: str = "judge-test") -> dict:
    user = f"Instruction: {text}\nResponse: It depends.\nScore keys: correctness, readability"
    return {"model": model, "messages": [{"role": "user", "content": user}], "temperature": 0}


def line(custom_id: str, text: str, **overrides) -> dict:
    row = {"custom_id": custom_id, "method": "POST", "url": "/v1/chat/completions"}
    return row | {"body": body(text)} | overrides


def jsonl(rows: list) -> bytes:
    return b"".join((r if isinstance(r, bytes) else json.dumps(r).encode()) + b"\n" for r in rows)


def client(srv: OpenAIServer) -> OpenAI:
    return OpenAI(base_url=srv.base_url, api_key=KEY, max_retries=0, timeout=5.0)


def submit(c: OpenAI, rows: list, **kw):
    uploaded = c.files.create(file=("judge.jsonl", jsonl(rows)), purpose="batch")
    return c.batches.create(
        input_file_id=uploaded.id, endpoint="/v1/chat/completions", completion_window="24h", **kw
    )


def wait(c: OpenAI, batch_id: str, statuses=TERMINAL, deadline: float = 5.0):
    """Poll as a client would, until the status is one of ``statuses``."""
    end = time.monotonic() + deadline
    while True:
        batch = c.batches.retrieve(batch_id)
        if batch.status in statuses or time.monotonic() > end:
            assert batch.status in statuses, f"{batch_id} still {batch.status}"
            return batch
        time.sleep(0.01)


def read(c: OpenAI, file_id: str | None) -> list[dict]:
    return (
        []
        if file_id is None
        else [json.loads(x) for x in c.files.content(file_id).text.split("\n") if x]
    )


@pytest.fixture
def service() -> BatchService:
    return BatchService()


@pytest.fixture
def srv(service):
    with OpenAIServer(batches=service) as server:
        yield server


def test_a_batch_answers_as_the_chat_endpoint_does(srv, service):
    c = client(srv)
    rows = [line(f"item-{i}", f"Question {i}?") for i in range(6)]
    uploaded = c.files.create(file=("judge.jsonl", jsonl(rows)), purpose="batch")
    assert (uploaded.object, uploaded.purpose, uploaded.status) == ("file", "batch", "processed")
    assert (uploaded.bytes, uploaded.filename) == (len(jsonl(rows)), "judge.jsonl")
    assert c.files.retrieve(uploaded.id) == uploaded
    assert c.files.content(uploaded.id).content == jsonl(rows)
    created = c.batches.create(
        input_file_id=uploaded.id,
        endpoint="/v1/chat/completions",
        completion_window="24h",
        metadata={"run": "r1"},
    )
    assert created.status == "validating" and created.expires_at == created.created_at + 86400
    done = wait(c, created.id)
    assert done.status == "completed" and done.error_file_id is None and done.errors is None
    assert (done.request_counts.total, done.request_counts.completed) == (6, 6)
    assert done.request_counts.failed == 0
    assert done.model == "judge-test" and done.metadata == {"run": "r1"}
    assert done.in_progress_at and done.finalizing_at and done.completed_at
    out = read(c, done.output_file_id)
    assert [o["custom_id"] for o in out] == [f"item-{i}" for i in range(6)]
    for row, answer in zip(rows, out, strict=True):
        live = c.chat.completions.create(**row["body"])
        assert answer["error"] is None and answer["response"]["status_code"] == 200
        assert answer["id"].startswith("batch_req_")
        assert answer["response"]["request_id"].startswith("req_")
        got = answer["response"]["body"]
        assert got["choices"][0]["message"]["content"] == live.choices[0].message.content
        assert got["usage"] == live.usage.model_dump(exclude_none=True)
    usage = [o["response"]["body"]["usage"] for o in out]
    assert done.usage.input_tokens == sum(u["prompt_tokens"] for u in usage)
    assert done.usage.total_tokens == sum(u["total_tokens"] for u in usage)
    assert (service.submissions, service.uploads, service.deletions) == (1, 1, 0)
    assert service.polls >= 1 and service.batches[done.id].status == "completed"
    assert all(r.header("authorization") == f"Bearer {KEY}" for r in srv.requests)
    assert all(KEY.encode() not in data for data in service.files.values())


def test_faults_go_to_the_error_file_with_their_status():
    plan = FaultPlan(
        by_marker={
            "M500": "500",
            "M429": "429",
            "M503": "503",
            "MHANG": "timeout",
            "MNO": "refusal",
        }
    )
    with OpenAIServer(batches=BatchService(faults=plan)) as srv:
        c = client(srv)
        texts = ["ok a", "M500 b", "ok c", "M429 d", "MNO e", "M503 f", "MHANG g", "ok h"]
        done = wait(c, submit(c, [line(f"c{i}", t) for i, t in enumerate(texts)]).id)
        errors = {e["custom_id"]: e["response"] for e in read(c, done.error_file_id)}
        out = {o["custom_id"]: o["response"]["body"] for o in read(c, done.output_file_id)}
    assert done.status == "completed"
    assert (done.request_counts.completed, done.request_counts.failed) == (4, 4)
    assert {k: v["status_code"] for k, v in errors.items()} == {
        "c1": 500,
        "c3": 429,
        "c5": 503,
        "c6": 500,
    }
    assert errors["c3"]["body"]["error"]["code"] == "rate_limit_exceeded"
    assert sorted(out) == ["c0", "c2", "c4", "c7"]
    assert out["c4"]["choices"][0]["message"]["content"] == REFUSAL


def test_expiry_answers_n_and_expires_the_rest():
    with OpenAIServer(batches=BatchService(expire_after=2)) as srv:
        c = client(srv)
        done = wait(c, submit(c, [line(f"e{i}", f"Q{i}") for i in range(5)]).id)
        out, expired = read(c, done.output_file_id), read(c, done.error_file_id)
    assert done.status == "expired" and done.expired_at and done.completed_at is None
    assert (done.request_counts.completed, done.request_counts.failed) == (2, 3)
    assert [o["custom_id"] for o in out] == ["e0", "e1"]
    assert [e["custom_id"] for e in expired] == ["e2", "e3", "e4"]
    assert all(e["response"] is None for e in expired)
    assert {e["error"]["code"] for e in expired} == {"batch_expired"}


def test_cancel_while_held_keeps_only_what_ran():
    service = BatchService(cancel_s=0.5)
    answered: list[str] = []

    def responder(body: dict) -> str:
        answered.append(body["messages"][0]["content"])
        if len(answered) == 2:  # hold the batch after its second request
            service.pause()
        return "fine"

    with OpenAIServer(batches=service, responder=responder) as srv:
        c = client(srv)
        batch = submit(c, [line(f"k{i}", f"Q{i}") for i in range(5)])
        service.wait_for(batch.id, "in_progress")
        end = time.monotonic() + 5
        while service.batches[batch.id].completed < 2 and time.monotonic() < end:
            time.sleep(0.01)
        assert c.batches.retrieve(batch.id).status == "in_progress"
        cancelling = c.batches.cancel(batch.id)
        assert cancelling.status == "cancelling" and cancelling.cancelling_at
        assert c.batches.retrieve(batch.id).status == "cancelling"
        done = wait(c, batch.id)
        assert done.status == "cancelled" and done.cancelled_at and done.error_file_id is None
        assert [o["custom_id"] for o in read(c, done.output_file_id)] == ["k0", "k1"]
        assert (done.request_counts.total, done.request_counts.completed) == (5, 2)
        assert len(answered) == 2
        service.resume()
        finished = wait(c, submit(c, [line("z", "Q")]).id)
        with pytest.raises(openai.BadRequestError, match="status completed"):
            c.batches.cancel(finished.id)


def test_pause_holds_a_batch_and_close_stops_its_thread():
    service = BatchService()
    service.pause()
    with OpenAIServer(batches=service) as srv:
        c = client(srv)
        batch = submit(c, [line("p0", "Q")])
        assert service.wait_for(batch.id, "in_progress")["request_counts"]["completed"] == 0
        thread = service._threads[0]
    assert not thread.is_alive()
    assert service.batches[batch.id].status == "in_progress"


BAD = {
    "bad JSON": ([line("a", "Q"), b'{"custom_id": "b", '], [("invalid_json_line", 2)]),
    "duplicate": ([line("a", "Q"), line("b", "R"), line("a", "S")], [("duplicate_custom_id", 3)]),
    "mixed models": (
        [line("a", "Q"), line("b", "R", body=body("R", model="other"))],
        [("model_mismatch", 2)],
    ),
    "url": ([line("a", "Q", url="/v1/embeddings")], [("url_mismatch", 1)]),
    "method": ([line("a", "Q", method="GET")], [("invalid_value", 1)]),
    "no custom_id": (
        [{"method": "POST", "url": "/v1/chat/completions", "body": body("Q")}],
        [("missing_required_parameter", 1)],
    ),
    "bad body": (
        [line("a", "Q"), line("b", "R", body={"model": "judge-test", "messages": []})],
        [("invalid_value", 2)],
    ),
    "too many": ([line(str(i), "Q") for i in range(4)], [("too_many_tasks", None)]),
    "empty": ([b" "], [("empty_file", None)]),
}


@pytest.mark.parametrize("case", BAD, ids=list(BAD))
def test_a_bad_input_file_fails_the_batch_naming_the_line(case):
    rows, expected = BAD[case]
    with OpenAIServer(batches=BatchService(max_requests=3)) as srv:
        c = client(srv)
        done = wait(c, submit(c, rows).id)
    assert done.status == "failed" and done.failed_at and done.output_file_id is None
    assert [(e.code, e.line) for e in done.errors.data] == expected
    assert all(e.message for e in done.errors.data)


def test_fail_next_fails_one_batch_as_a_whole(srv, service):
    c = client(srv)
    service.fail_next = "The input file could not be read."
    failed = wait(c, submit(c, [line("a", "Q")]).id)
    assert failed.status == "failed"
    assert failed.errors.data[0].message == "The input file could not be read."
    assert wait(c, submit(c, [line("a", "Q")]).id).status == "completed"
    assert service.submissions == 2


def test_listing_paginates_newest_first(srv, service):
    c = client(srv)
    ids = [submit(c, [line("a", f"Q{i}")]).id for i in range(5)]
    first = c.batches.list(limit=2)
    assert [b.id for b in first.data] == ids[:2:-1] and first.has_more
    assert [b.id for b in c.batches.list(limit=2)] == ids[::-1]  # auto-pagination
    assert srv.count("/v1/batches") == 5 + 1 + 3  # creates, one page, then three pages


def test_files_delete_and_unknown_ids_are_404(srv, service):
    c = client(srv)
    uploaded = c.files.create(file=("x.jsonl", jsonl([line("a", "Q")])), purpose="batch")
    deleted = c.files.delete(uploaded.id)
    assert (deleted.id, deleted.deleted, deleted.object) == (uploaded.id, True, "file")
    assert service.deletions == 1 and uploaded.id not in service.files
    for call in (
        lambda: c.files.delete(uploaded.id),
        lambda: c.files.retrieve(uploaded.id),
        lambda: c.files.content(uploaded.id),
        lambda: c.batches.retrieve("batch_missing"),
        lambda: c.batches.cancel("batch_missing"),
    ):
        with pytest.raises(openai.NotFoundError) as err:
            call()
        assert err.value.body["type"] == "invalid_request_error"
    assert service.deletions == 1


def test_refused_uploads_and_batches_are_400_and_not_submitted():
    service = BatchService(max_file_bytes=100)
    with OpenAIServer(batches=service) as srv:
        c = client(srv)
        with pytest.raises(openai.BadRequestError, match="purpose"):
            c.files.create(file=("x.jsonl", b"{}\n"), purpose="fine-tune")
        with pytest.raises(openai.BadRequestError, match="more than the 100 bytes"):
            c.files.create(file=("x.jsonl", b"x" * 101), purpose="batch")
        ok = c.files.create(file=("x.jsonl", jsonl([line("a", "Q")])[:100]), purpose="batch")
        window = {"endpoint": "/v1/chat/completions", "completion_window": "24h"}
        for kw, match in (
            (window | {"input_file_id": "file-nope"}, "does not exist"),
            (window | {"input_file_id": ok.id, "endpoint": "/v1/embeddings"}, "Invalid endpoint"),
            (
                window | {"input_file_id": ok.id, "completion_window": "1h"},
                "Invalid completion_window",
            ),
        ):
            with pytest.raises(openai.BadRequestError, match=match):
                c.batches.create(**kw)
    assert (service.submissions, service.uploads) == (0, 1)


def test_without_a_batch_service_the_paths_stay_unknown():
    with OpenAIServer() as srv:
        with pytest.raises(urllib.error.HTTPError) as err:
            urllib.request.urlopen(f"{srv.base_url}/files", timeout=5)
        assert err.value.code == 404
        request = urllib.request.Request(f"{srv.base_url}/files/x", method="DELETE")
        with pytest.raises(urllib.error.HTTPError) as err:
            urllib.request.urlopen(request, timeout=5)
        assert err.value.code == 501


def test_a_thousand_items_at_a_five_percent_fault_rate_then_only_the_failed_resubmitted():
    plan = FaultPlan(rate=0.05, kinds=("500", "503"), seed=7)
    expected = {f"r{i}" for i in range(1000) if FaultPlan(0.05, ("500", "503"), 7).fault_at(i)}
    service = BatchService(faults=plan, shuffle_seed=3)
    with OpenAIServer(batches=service) as srv:
        c = client(srv)
        rows = [line(f"r{i}", f"Question {i}?") for i in range(1000)]
        done = wait(c, submit(c, rows).id, deadline=15)
        failed = {e["custom_id"] for e in read(c, done.error_file_id)}
        out = [o["custom_id"] for o in read(c, done.output_file_id)]
        assert failed == expected and 25 <= len(failed) <= 80  # ~5% of 1,000
        assert sorted(out) == sorted({r["custom_id"] for r in rows} - failed)
        assert out != [r["custom_id"] for r in rows if r["custom_id"] not in failed]  # shuffled
        assert (done.request_counts.completed, done.request_counts.failed) == (
            1000 - len(failed),
            len(failed),
        )
        service.faults = FaultPlan()
        retry = wait(c, submit(c, [r for r in rows if r["custom_id"] in failed]).id)
        assert {o["custom_id"] for o in read(c, retry.output_file_id)} == failed
        assert retry.error_file_id is None and service.submissions == 2

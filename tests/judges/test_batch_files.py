"""The OpenAI Batch API's files as pure functions (judges/batch_files.py): request lines, the
split into parts at the service's limits, and output/error files read back into answers.

Result lines are written the way the Batch API writes them
(https://platform.openai.com/docs/guides/batch); every expected value is written by hand.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import pytest

from analysis.core.errors import InputError
from judges.backends.openai_compat import chat_body
from judges.batch_files import Answer, read_results, request_line, split
from judges.config import JudgeConfig

# --- request_line -----------------------------------------------------------------------------

HEAD = b'{"custom_id": "%s", "method": "POST", "url": "/v1/chat/completions", "body": '

REQUESTS = [
    pytest.param(
        JudgeConfig("openai-batch", "gpt-4o-mini", max_tokens=300, structured=True),
        [{"role": "user", "content": "é"}],
        b'{"model":"gpt-4o-mini","messages":[{"role":"user","content":"\xc3\xa9"}],'
        b'"max_tokens":300,"response_format":{"type":"json_object"},"temperature":0.0}',
        id="structured-non-ascii",
    ),
    pytest.param(
        JudgeConfig("openai-batch", "gpt-4o", max_tokens=50, temperature=0.5),
        [
            {"role": "system", "content": "Juge « strict » 評価"},
            {"role": "user", "content": 'two\nlines, a "quote", a tab\t and \u2028 U+2028'},
        ],
        # chat_body escapes the newline, quote and tab; U+2028 stays raw UTF-8 (e2 80 a8).
        b'{"model":"gpt-4o","messages":[{"role":"system","content":"Juge \xc2\xab strict '
        b'\xc2\xbb \xe8\xa9\x95\xe4\xbe\xa1"},{"role":"user","content":"two\\nlines, a '
        b'\\"quote\\", a tab\\t and \xe2\x80\xa8 U+2028"}],"max_tokens":50,"temperature":0.5}',
        id="plain-multiline",
    ),
]


@pytest.mark.parametrize("config, messages, body", REQUESTS)
def test_request_line_carries_the_live_bytes(config, messages, body):
    live = chat_body(config, messages)
    assert live == body  # the hand-written bytes: what the live call sends
    line = request_line("0123abcd", live)
    assert line == HEAD % b"0123abcd" + body + b"}\n"
    assert line.count(b"\n") == 1 and line.endswith(b"}\n")
    parsed = json.loads(line)
    assert list(parsed) == ["custom_id", "method", "url", "body"]
    assert parsed["custom_id"] == "0123abcd"
    assert parsed["method"] == "POST"
    assert parsed["url"] == "/v1/chat/completions"
    assert parsed["body"] == json.loads(live)
    assert parsed["body"]["messages"] == messages


def test_request_line_escapes_an_odd_custom_id():
    body = chat_body(JudgeConfig("openai-batch", "m"), [{"role": "user", "content": "x"}])
    line = request_line('a"b\\c', body)
    assert line.startswith(b'{"custom_id": "a\\"b\\\\c", "method": "POST"')
    assert json.loads(line)["custom_id"] == 'a"b\\c'
    assert body in line


# --- split ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SplitCase:
    id: str
    sizes: list[int]  # bytes of each line
    max_requests: int
    max_bytes: int
    parts: list[tuple[int, int]]  # expected (start, stop) of each part


SPLITS = [
    SplitCase("empty", [], 3, 10, []),
    SplitCase("fewer-than-limit", [1, 1], 3, 10, [(0, 2)]),
    SplitCase("exactly-max-requests", [1, 1, 1], 3, 10, [(0, 3)]),
    SplitCase("max-requests-plus-one", [1, 1, 1, 1], 3, 10, [(0, 3), (3, 4)]),
    SplitCase("twice-max-requests-plus-one", [1] * 7, 3, 100, [(0, 3), (3, 6), (6, 7)]),
    SplitCase("one-request-per-part", [2, 2, 2], 1, 10, [(0, 1), (1, 2), (2, 3)]),
    SplitCase("bytes-reached-exactly", [4, 3, 3], 5, 10, [(0, 3)]),
    SplitCase("bytes-exceeded-by-one", [4, 3, 4], 5, 10, [(0, 2), (2, 3)]),
    SplitCase("one-line-of-max-bytes", [10], 5, 10, [(0, 1)]),
    SplitCase("lines-of-max-bytes", [10, 10, 1], 5, 10, [(0, 1), (1, 2), (2, 3)]),
    # 6+5 > 10 splits on bytes first; then 5+1+1 is 3 requests (the limit) at 7 bytes.
    SplitCase("bytes-split-first", [6, 5, 1, 1, 1, 1], 3, 10, [(0, 1), (1, 4), (4, 6)]),
    # 9 + 2 > 10 after only two requests, though max_requests is 50.
    SplitCase("bytes-before-requests", [1, 8, 2, 8], 50, 10, [(0, 2), (2, 4)]),
]


@pytest.mark.parametrize("case", SPLITS, ids=[c.id for c in SPLITS])
def test_split(case: SplitCase):
    lines = [b"x" * n for n in case.sizes]
    parts = split(lines, max_requests=case.max_requests, max_bytes=case.max_bytes)
    assert parts == [range(a, b) for a, b in case.parts]
    # Invariants, whatever the case: consecutive, covering every line in order, within limits.
    assert [i for r in parts for i in r] == list(range(len(lines)))
    for r in parts:
        assert r.step == 1 and len(r) >= 1
        assert len(r) <= case.max_requests
        assert sum(case.sizes[i] for i in r) <= case.max_bytes


@pytest.mark.parametrize(
    "sizes, bad",
    [([11], 1), ([1, 11], 2), ([3, 3, 3, 20, 1], 4)],
    ids=["first", "second", "fourth"],
)
def test_split_rejects_a_line_over_max_bytes(sizes, bad):
    lines = [b"x" * n for n in sizes]
    with pytest.raises(InputError) as e:
        split(lines, max_requests=5, max_bytes=10)
    assert f"line {bad}" in e.value.message
    assert f"{sizes[bad - 1]} bytes, more than the 10" in e.value.message


def test_split_defaults_are_the_services_limits():
    # 50,000 requests per batch: 50,001 one-byte lines make two parts.
    assert split([b"x"] * 50_001) == [range(0, 50_000), range(50_000, 50_001)]
    # 200 MiB per input file (209,715,200 bytes); split reads only each line's length, so
    # stand-ins spare the test 200 MB of memory.
    half = _Sized(100 * 2**20)
    assert split([half, half]) == [range(0, 2)]
    assert split([half, half, _Sized(1)]) == [range(0, 2), range(2, 3)]
    with pytest.raises(InputError, match="line 1"):
        split([_Sized(200 * 2**20 + 1)])


class _Sized:
    def __init__(self, n: int) -> None:
        self.n = n

    def __len__(self) -> int:
        return self.n


# --- read_results -----------------------------------------------------------------------------


def completion(message: dict, usage: dict | None = None) -> dict:
    """A chat.completion body as the Batch API's output file holds it."""
    return {
        "id": "chatcmpl-AbC123",
        "object": "chat.completion",
        "created": 1711652795,
        "model": "gpt-4o-mini-2024-07-18",
        "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": "stop"}],
        "usage": usage,
        "system_fingerprint": "fp_3cd8b62c3b",
    }


USAGE = {"prompt_tokens": 812, "completion_tokens": 143, "total_tokens": 955}


def out_line(cid: str, status: int, body: object, error: object = None) -> dict:
    return {
        "id": "batch_req_6a1b2c3d",
        "custom_id": cid,
        "response": {"status_code": status, "request_id": "req_9f8e7d6c", "body": body},
        "error": error,
    }


def api_error(message: str, type_: str, code: str | None, param: str | None = None) -> dict:
    return {"error": {"message": message, "type": type_, "param": param, "code": code}}


EXPIRED = {
    "id": "batch_req_77aa",
    "custom_id": "k-exp",
    "response": None,
    "error": {
        "code": "batch_expired",
        "message": "This request could not be executed before the completion window expired.",
    },
}

FEEDBACK = "Correctness: 4 — the answer is right.\nScore: 4"

ANSWERS = [
    pytest.param(
        out_line("k1", 200, completion({"role": "assistant", "content": FEEDBACK}, USAGE)),
        Answer("k1", FEEDBACK, 812, 143),
        id="ok",
    ),
    pytest.param(
        out_line(
            "k-ü", 200, completion({"role": "assistant", "content": "Note : très bien ✓"}, USAGE)
        ),
        Answer("k-ü", "Note : très bien ✓", 812, 143),
        id="ok-non-ascii",
    ),
    pytest.param(
        out_line(
            "k2",
            200,
            completion(
                {"role": "assistant", "content": None, "refusal": "I can't help with that."},
                {"prompt_tokens": 20, "completion_tokens": 7, "total_tokens": 27},
            ),
        ),
        Answer("k2", "I can't help with that.", 20, 7),
        id="refusal-only",
    ),
    pytest.param(
        out_line("k3", 200, completion({"role": "assistant", "content": ""}, USAGE)),
        Answer("k3", None, 812, 143, error="empty output"),
        id="empty-content",
    ),
    pytest.param(
        out_line("k3b", 200, completion({"role": "assistant", "content": " \n\t"}, USAGE)),
        Answer("k3b", None, 812, 143, error="empty output"),
        id="whitespace-content",
    ),
    pytest.param(
        out_line("k4", 200, completion({"role": "assistant", "content": "ok"}, None)),
        Answer("k4", "ok", 0, 0),
        id="null-usage",
    ),
    pytest.param(
        out_line(
            "k4b", 200, completion({"role": "assistant", "content": "ok"}, {"prompt_tokens": None})
        ),
        Answer("k4b", "ok", 0, 0),
        id="null-token-counts",
    ),
    pytest.param(  # a count that is no number costs nothing, not the answer
        out_line(
            "k4c",
            200,
            completion(
                {"role": "assistant", "content": "ok"},
                {"prompt_tokens": "n/a", "completion_tokens": 1e400},
            ),
        ),
        Answer("k4c", "ok", 0, 0),
        id="token-counts-not-numbers",
    ),
    pytest.param(
        {
            "id": "batch_req_2",
            "custom_id": "k4d",
            "response": None,
            "error": {"type": "server_error"},
        },
        Answer("k4d", None, error='error {"type": "server_error"}'),
        id="error-without-code-or-message",
    ),
    pytest.param(
        out_line(
            "k5", 500, api_error("The server had an error.", "server_error", "internal_error")
        ),
        Answer("k5", None, error="HTTP 500 (internal_error: The server had an error.)"),
        id="http-500",
    ),
    pytest.param(
        out_line(
            "k6",
            429,
            api_error("Rate limit reached for gpt-4o-mini.", "requests", "rate_limit_exceeded"),
        ),
        Answer(
            "k6", None, error="HTTP 429 (rate_limit_exceeded: Rate limit reached for gpt-4o-mini.)"
        ),
        id="http-429",
    ),
    pytest.param(
        out_line(
            "k7",
            400,
            api_error(
                "Unsupported parameter: 'max_tokens'.", "invalid_request_error", None, "max_tokens"
            ),
        ),
        Answer("k7", None, error="HTTP 400 (Unsupported parameter: 'max_tokens'.)"),
        id="http-400-no-code",
    ),
    pytest.param(
        out_line("k8", 400, "Bad Request"),
        Answer("k8", None, error="HTTP 400"),
        id="http-400-body-not-dict",
    ),
    pytest.param(
        out_line("k8b", 502, {"detail": "bad gateway"}),
        Answer("k8b", None, error="HTTP 502"),
        id="http-502-no-error-object",
    ),
    pytest.param(
        EXPIRED,
        Answer(
            "k-exp",
            None,
            error="batch_expired: This request could not be executed before the completion "
            "window expired.",
        ),
        id="expired",
    ),
    pytest.param(
        {"id": "batch_req_1", "custom_id": "k9", "response": None, "error": None},
        Answer("k9", None, error="no response in the batch's file"),
        id="no-response-no-error",
    ),
    pytest.param(
        out_line("k10", 200, {"object": "error", "message": "upstream"}),
        Answer("k10", None, error="malformed response (not a chat completion)"),
        id="not-a-chat-completion",
    ),
    pytest.param(
        out_line("k11", 200, "<html>proxy</html>"),
        Answer("k11", None, error="malformed response (not a chat completion)"),
        id="body-a-string",
    ),
    pytest.param(
        out_line("k12", 200, {"choices": [{"message": {"content": 42}}]}),
        Answer("k12", None, error="malformed response (not a chat completion)"),
        id="content-not-text",
    ),
]


def jsonl(*lines: object, end: bytes = b"\n") -> bytes:
    return b"".join(
        (x if isinstance(x, bytes) else json.dumps(x, ensure_ascii=False).encode()) + end
        for x in lines
    )


@pytest.mark.parametrize("line, expected", ANSWERS)
def test_read_results_one_line(line, expected):
    assert read_results(jsonl(line)) == ([expected], [])


@pytest.mark.parametrize("ensure_ascii", [True, False], ids=["escaped", "raw-utf8"])
def test_read_results_keeps_line_separators_inside_text(ensure_ascii):
    # U+2028/U+2029 are line breaks to str.splitlines, not to a JSONL file's bytes.
    text = "one\u2028two\u2029three\x85four"
    line = out_line("k", 200, completion({"role": "assistant", "content": text}, USAGE))
    data = json.dumps(line, ensure_ascii=ensure_ascii).encode() + b"\n"
    assert read_results(data) == ([Answer("k", text, 812, 143)], [])


OK_A = out_line("a", 200, completion({"role": "assistant", "content": "A"}, USAGE))
OK_B = out_line("b", 200, completion({"role": "assistant", "content": "B"}, None))


def test_read_results_a_whole_file_with_bad_lines():
    data = jsonl(
        OK_A,  # line 1
        b"",  # 2: blank, skipped
        b'{"custom_id": "x", "response": {',  # 3: cut short
        {"id": "batch_req_2", "response": None, "error": None},  # 4: no custom_id
        b"   ",  # 5: blank
        {"custom_id": 17, "response": None},  # 6: custom_id not a string
        b"[1, 2]",  # 7: JSON, not an object
        b"\xff\xfe",  # 8: not UTF-8
        OK_B,  # 9
        EXPIRED,  # 10
    )
    answers, problems = read_results(data)
    assert answers == [
        Answer("a", "A", 812, 143),
        Answer("b", "B", 0, 0),
        Answer(
            "k-exp",
            None,
            error="batch_expired: This request could not be executed before the completion "
            "window expired.",
        ),
    ]
    assert problems == [
        "line 3: not JSON",
        "line 4: no custom_id",
        "line 6: no custom_id",
        "line 7: no custom_id",
        "line 8: not JSON",
    ]


@pytest.mark.parametrize(
    "data",
    [
        jsonl(OK_A, OK_B, end=b"\r\n"),
        jsonl(OK_A, OK_B, end=b"\r\n")[:-2],  # no final line ending
        jsonl(OK_A, OK_B)[:-1],
        b"\n\n" + jsonl(OK_A) + b"\r\n\r\n" + jsonl(OK_B),
    ],
    ids=["crlf", "crlf-no-final", "lf-no-final", "blank-lines"],
)
def test_read_results_line_endings(data):
    assert read_results(data) == ([Answer("a", "A", 812, 143), Answer("b", "B", 0, 0)], [])


def test_read_results_line_numbers_count_crlf_lines():
    data = jsonl(OK_A, b"", b"nope", end=b"\r\n")
    assert read_results(data) == ([Answer("a", "A", 812, 143)], ["line 3: not JSON"])


def test_read_results_empty_file():
    assert read_results(b"") == ([], [])
    assert read_results(b"\n\r\n  \n") == ([], [])


def test_read_results_duplicate_custom_ids_in_file_order():
    # Both are returned, in the file's order; the caller (batch_tend) keeps the first.
    first = out_line(
        "dup", 500, api_error("The server had an error.", "server_error", "internal_error")
    )
    second = out_line("dup", 200, completion({"role": "assistant", "content": "late"}, USAGE))
    answers, problems = read_results(jsonl(first, second))
    assert answers == [
        Answer("dup", None, error="HTTP 500 (internal_error: The server had an error.)"),
        Answer("dup", "late", 812, 143),
    ]
    assert problems == []

"""What the verbosity tests share: a loopback responder that answers rewrite prompts with a
deterministic wordier text (and judge prompts as the default judge does), and store readers."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tests.openai_server import judge_answer, prompt_text

REWRITE_MARK = "[Response to rewrite]\n"
END_MARK = "\n[End of response]"
FILLER = "\n\nIn other words, to say the very same thing once more: "
SHORT_MARK = "MAKE-IT-SHORT"  # a response holding this gets a rewrite that is not wordier


def is_rewrite(body: Mapping[str, Any]) -> bool:
    return REWRITE_MARK in prompt_text(body)


def wordier(original: str) -> str:
    """The rewrite the responder gives for ``original`` (as the prompt carried it)."""
    return original + FILLER + original


def rewrite_or_judge(body: Mapping[str, Any]) -> str:
    text = prompt_text(body)
    if REWRITE_MARK not in text:
        return judge_answer(body)
    original = text.split(REWRITE_MARK, 1)[1].rsplit(END_MARK, 1)[0]
    return "short." if SHORT_MARK in original else wordier(original)


def rewrite_calls(server) -> int:
    return sum(1 for r in server.requests if r.body and is_rewrite(r.body))


def judge_calls(server) -> int:
    return sum(1 for r in server.requests if r.body and not is_rewrite(r.body))

"""``pages.common.plain``: store text inside markdown shows as typed and makes no markup or link.

The browser proof is tests/browser/test_hostile_names.py; this pins the escaping rule itself."""

from __future__ import annotations

import re

import pytest

from pages.common import plain

CASES = [
    "gpt-4 (simulated, llm)",
    "**bold** _it_ `code` # h1 > quote",
    "[md](http://127.0.0.1:9/m) ![img](x.png)",
    '<a href="http://127.0.0.1:9/j">J</a><script>alert(1)</script>',
    "HTTPS://Example.com/x www.example.com mail me@example.com",
    "R&amp;D &lt;b&gt; $x$ ~strike~ | table |",
    "back\\slash 1. 2) - + ! :emoji: :red[x]",
]


@pytest.mark.parametrize("text", CASES)
def test_unescaping_gives_back_the_text(text):
    shown = re.sub(r"\\(.)", r"\1", plain(text)).replace("\u2060", "")
    assert shown == text


@pytest.mark.parametrize("text", CASES)
def test_nothing_is_left_for_markdown_or_autolinks(text):
    out = plain(text)
    # every markdown-active character is backslash-escaped
    assert not re.search(r"(?<!\\)[`*_\[\]()<>#!|~$:&]", out.replace("\\\\", "")), out
    # GFM autolinks need a space or punctuation before http/www and a word before @
    for m in re.finditer(r"(?i)https?|www|@", out):
        assert out[m.start() - 1] == "\u2060", (out, m.group())

"""Stores for the report's tests, written by the real score importer as a user's files would be:
FLASK skills, three models, one LLM judge and (optionally) two human raters, and text in every
place the report prints it (instruction, reference, response, rationale) that is hostile: a
script tag, a markdown image and an outside link, each pointing at a loopback port nobody
listens on. Also the helpers that read the figures back out of a report's HTML."""

from __future__ import annotations

import base64
import csv
import itertools
import json
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import numpy as np

from analysis.core.store import Store
from analysis.ingest.score_files import import_scores

HOST = "127.0.0.1:9"
SCRIPT = "<script>alert(1)</script>"
IMAGE = f"![x](http://{HOST}/x.png)"
LINK = f"<a href=http://{HOST}/>outside</a>"
HOSTILE = (SCRIPT, IMAGE, LINK)
DATASET = "hostile"
JUDGE = "judge-x"
HUMANS = ("rater-a", "rater-b")
MODELS = ("m1", "m2", "m3")
SKILLS = ("correctness", "readability", "factuality")
DOMAINS = ("Math", "Coding", "History")
INSTANCES = 12
SECRET = "sk-do-not-print-0123456789"


def _score(*parts: int) -> int:
    """A deterministic 1-5 score that differs between scorers (agreement is not perfect)."""
    return sum((i + 1) * p for i, p in enumerate(parts)) % 5 + 1


def hostile_report_store(path: Path, *, humans: bool = True) -> Store:
    """The store at ``path``: one import per scorer, each a CSV file."""
    scorers = [(JUDGE, "llm", 0)] + ([(h, "human", k + 1) for k, h in enumerate(HUMANS)]
                                     if humans else [])  # fmt: skip
    for who, kind, seed in scorers:
        rows = []
        for i, (m, model), (k, skill) in itertools.product(
            range(INSTANCES), enumerate(MODELS), enumerate(SKILLS)
        ):
            rows.append({
                "instance_id": f"q{i}", "model": model, "judge": who, "kind": kind,
                "skill": skill, "score": _score(i, m, k, seed),
                "domain": DOMAINS[i % 3], "difficulty": i % 3 + 1,
                "instruction": f"Question {i}: {IMAGE}",
                "reference": f"Reference {i} {LINK}",
                "response": f"Answer {i} of {model}\n{SCRIPT}\n{IMAGE}\n{LINK}",
                "rationale": f"{who} on {skill}: {SCRIPT} {LINK}",
            })  # fmt: skip
        file = path.parent / f"scores-{who}.csv"
        with file.open("w", newline="", encoding="utf-8") as f:
            writer = csv.DictWriter(f, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
        import_scores(Store(path), file, dataset=DATASET)
    store = Store(path)
    with store.write() as con:  # a judge file that carried a credential into its settings
        con.execute(
            "UPDATE judges SET backend = 'openai', model = 'gpt-x', params = ? WHERE judge = ?",
            [json.dumps({"temperature": 0, "api_key": SECRET, "nested": {"Token": SECRET}}), JUDGE],
        )
    return store


# ------------------------------------------------------------- reading a report's figures
_NEWPLOT = re.compile(r'Plotly\.newPlot\(\s*"([^"]+)",\s*')


def _decode(value: Any) -> Any:
    """plotly's JSON with its typed arrays ({"dtype", "bdata", "shape"}) as numpy arrays."""
    if isinstance(value, dict):
        if "bdata" in value and "dtype" in value:
            arr = np.frombuffer(base64.b64decode(value["bdata"]), dtype=np.dtype(value["dtype"]))
            shape = value.get("shape")
            if shape:
                arr = arr.reshape([int(x) for x in str(shape).split(",")])
            return arr
        return {k: _decode(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_decode(v) for v in value]
    return value


def figures(html: str) -> dict[str, list[dict]]:
    """{figure name (its block's data-figure): [{"data", "layout", "config"}, …]} in order."""
    out: dict[str, list[dict]] = {}
    decoder = json.JSONDecoder()
    for block in re.finditer(r'<div class="figure" data-figure="([^"]+)">', html):
        m = _NEWPLOT.search(html, block.end())
        pos = m.end()
        parts = []
        for _ in range(3):
            value, pos = decoder.raw_decode(html, pos)
            parts.append(_decode(value))
            pos = html.index(",", pos) + 1 if len(parts) < 3 else pos
            while pos < len(html) and html[pos].isspace():
                pos += 1
        named = dict(zip(("data", "layout", "config"), parts, strict=True))
        out.setdefault(block.group(1), []).append(named)
    return out


class Parsed(HTMLParser):
    """The report's text nodes (outside script and style), its elements and attributes."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.texts: list[str] = []
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.scripts: list[str] = []
        self._in: list[str] = []
        self.feed(html)
        self.close()

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        if tag in ("script", "style"):
            self._in.append(tag)
            if tag == "script":
                self.scripts.append("")

    def handle_endtag(self, tag):
        if self._in and self._in[-1] == tag:
            self._in.pop()

    def handle_data(self, data):
        if not self._in:
            self.texts.append(data)
        elif self._in[-1] == "script":
            self.scripts[-1] += data

"""Shared pieces of the simulated demo's texts: the tag, an instance's plan, what one response
must show, and the assembly of sentence blocks into a text of about the simulated length.

A response is built as blocks ``(separator, text, note)``: the note, when there is one, is the
(skill, judge's remark) of a flaw the block shows, so a rationale only ever mentions flaws that
made it into the text.
"""

from __future__ import annotations

import bisect
import random
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field

from analysis.ingest.demo_domains import Domain, Topic
from analysis.ingest.demo_phrases import CONTRASTS, ELABORATIONS, FLAWS, Voice

# Every simulated text starts with this tag: short, always in the same place, and in the
# instruction list, the response preview and the judge's rationale alike, so no text read on
# its own (a screenshot, an export) passes for real model output.
TAG = "[simulated] "

# Strides prime to 16 templates × 3 facts = 48, so a walk visits every wording once per cycle.
_STRIDES = (5, 7, 11, 13, 17, 19, 23, 25, 29, 31, 35, 37)

Note = tuple[str, str]  # (skill, the judge's remark on a flaw)
Block = tuple[str, str, Note | None]  # (separator before it, text, note)


class Pool:
    """A long run of sentences shared by an instance's responses, each reading it from
    its own offset, and cut to a length by bisecting cumulative lengths rather than walking it
    sentence by sentence: the eight responses of an instance fill its templates once, and a
    long response costs no more than a short one."""

    def __init__(self, sentences: Iterator[str]) -> None:  # may end
        self._more = sentences
        self._texts: list[str] = []
        self._runs: dict[int, tuple[list[str], list[int]]] = {}  # per → (chunks, cumulative)

    def cut(self, start: int, per: int, room: int) -> tuple[list[str], int]:
        """Sentences from ``start`` on, a paragraph break before the first and every ``per``-th,
        whose total length is closest to ``room``: the chunks (each with its separator) and
        that length."""
        if room <= 0:
            return [], 0
        run = self._runs.get(per)
        if run is None:
            run = self._runs[per] = ([], [0])
        chunks, cum = run
        texts = self._texts
        while len(cum) <= start or cum[-1] - cum[start] < room:
            i = len(chunks)
            if i == len(texts):
                text = next(self._more, None)
                if text is None:  # used up: as long as it gets
                    start = min(start, len(chunks))
                    break
                texts.append(text)
            chunks.append(("\n\n" if i % per == 0 else " ") + texts[i])
            cum.append(cum[-1] + len(chunks[-1]))
        base = cum[start]
        if cum[-1] - base <= room:  # not enough left: all of it
            end = len(chunks)
        else:
            j = bisect.bisect_right(cum, base + room, start)  # cum[j-1] <= base + room < cum[j]
            end = j - 1 if cum[j] - base - room >= room - (cum[j - 1] - base) else j
        out = chunks[start:end]
        if out and out[0][0] == " ":  # the first one opens a paragraph of its own
            out[0] = "\n\n" + out[0][1:]
            return out, cum[end] - base + 1
        return out, cum[end] - base


class Body(list):
    """A response's body blocks, then (``more``) a pool, offset and paragraph length to go on
    with as far as the target length needs."""

    more: tuple[Pool, int, int] | None = None


@dataclass
class Plan:
    """One instance's texts and what its responses draw on."""

    iid: str
    genre: str
    skills: tuple[str, ...]
    level: int
    domain: Domain
    angle: Domain | None
    slots: dict[str, str]
    topic: Topic | None = None
    other: Topic | None = None
    frame: int = 0
    payload: object = None
    instruction: str = ""
    reference: str = ""
    memo: dict[str, str] = field(default_factory=dict, repr=False)
    pools: dict[object, Pool] = field(default_factory=dict, repr=False)
    lines: dict[tuple, str] = field(default_factory=dict, repr=False)  # rationale lines

    def pool(self, key: object, sentences: Callable[[], Iterator[str]]) -> Pool:
        """The instance's shared pool ``key``, made from ``sentences()`` on first use."""
        out = self.pools.get(key)
        if out is None:
            out = self.pools[key] = Pool(sentences())
        return out

    def fill(self, template: str) -> str:
        """``template`` with this plan's slots; memoised, since a plan's eight responses and
        their rationales fill the same templates."""
        out = self.memo.get(template)
        if out is None:
            out = self.memo[template] = template.format_map(self.slots)
        return out


class Ask:
    """What one response must show: the model's voice, which skills show a flaw (``severe``:
    scored 1-2, where an answer may be plainly wrong rather than weak), which earn their
    strong-response sentence, and whether it is one unstructured block."""

    __slots__ = ("voice", "rnd", "flaws", "severe", "good", "flat")

    def __init__(self, voice: Voice, rnd: random.Random, flaws: Sequence[str] = (),
                 severe: Sequence[str] = (), good: Sequence[str] = ()) -> None:  # fmt: skip
        self.voice, self.rnd, self.flaws, self.severe, self.good = voice, rnd, flaws, severe, good
        self.flat = "readability" in flaws

    def listy(self) -> bool:
        return (
            bool(self.voice.marker) and not self.flat and self.rnd.random() < self.voice.list_share
        )


def cap(s: str) -> str:
    return s[:1].upper() + s[1:]


def low(s: str) -> str:
    """Lower-case the first letter unless the word is an acronym or a name-like capital pair."""
    return s[:1].lower() + s[1:] if s[1:2].islower() else s


def fill(template: str, slots: dict[str, str]) -> str:
    return template.format_map(slots)


def pick(rnd: random.Random, seq):
    return seq[int(rnd.random() * len(seq))]


def rotated(rnd: random.Random, seq: Sequence, k: int | None = None) -> list:
    """``k`` items of ``seq`` (all by default) from a random start, wrapping around: a cheap
    stand-in for ``random.sample`` where the order of a short list only needs to vary."""
    start = int(rnd.random() * len(seq))
    out = [*seq[start:], *seq[:start]]
    return out if k is None else out[:k]


def prose(sentences: Iterable[str], per: int, first: str = "\n\n") -> list[Block]:
    """Sentences as paragraphs of ``per`` sentences each."""
    return [(first if i == 0 else ("\n\n" if i % per == 0 else " "), s, None)
            for i, s in enumerate(sentences)]  # fmt: skip


def items(lines: Iterable[str], marker: str) -> list[Block]:
    fmt = "{i}. {x}" if marker == "1." else marker + " {x}"
    return [("\n\n" if i == 1 else "\n", fmt.format(i=i, x=x), None)
            for i, x in enumerate(lines, 1)]  # fmt: skip


def flaw_block(skill: str, fill_in: Callable[[str], str], table: dict = FLAWS,
               rnd: random.Random | None = None) -> Block | None:  # fmt: skip
    """The flaw's sentence with its note (one of the variants, at random); a flaw that changes
    the response's shape instead (fewer points, one dense block) is a note without text; None
    where the genre shows it elsewhere (a wrong answer, a bug) or not at all."""
    entry = table.get(skill, FLAWS[skill])
    if not isinstance(entry[0], str):  # variants
        entry = pick(rnd, entry) if rnd else entry[0]
    sentence, note = entry
    if not note:
        return None
    return ("\n\n" if sentence else "", fill_in(sentence), (skill, fill_in(note)))


def _sentences(topic: Topic, domain: Domain, slots: dict[str, str], rnd: random.Random,
               extras: Sequence[str]) -> Iterator[str]:  # fmt: skip
    """The domain's general remarks, each neighbouring subject of the domain set against one
    of the facts, then the facts again in each of the 16 wordings (walked from a random start
    with a stride prime to 48: a full cycle without shuffling). Then it stops: past ~7,000
    characters a response would only repeat itself, so the longest simulated lengths (the top
    1%) end there."""
    local, facts, contexts, rand = dict(slots), topic.points[1:], domain.contexts, rnd.random
    extra = [*extras, *domain.notes]
    rnd.shuffle(extra)
    others = [t for t in domain.topics if t is not topic]
    start = int(rand() * len(others))
    for j in range(len(others)):
        if extra:
            yield extra.pop()
        other = others[(start + j) % len(others)]
        local.update(o=other.subject, O_cap=cap(other.subject), p=facts[j % len(facts)],
                     op=other.points[int(rand() * len(other.points))])  # fmt: skip
        yield CONTRASTS[int(rand() * len(CONTRASTS))].format_map(local)
    n = len(ELABORATIONS) * len(facts)
    at, step = int(rand() * n), pick(rnd, _STRIDES)
    for _ in range(n):
        t, k = divmod(at, len(facts))
        at = (at + step) % n
        local["p"], local["c"] = facts[k], contexts[int(rand() * len(contexts))]
        yield ELABORATIONS[t].format_map(local)


def elaborations(plan: Plan, rnd: random.Random) -> Pool:
    """The instance's pool of sentences about its topic (see ``_sentences``)."""

    def sentences() -> Iterator[str]:
        insights = [plan.fill(t) for t in plan.domain.insights]
        return _sentences(plan.topic, plan.domain, plan.slots, rnd, insights)

    return plan.pool("elaborations", sentences)


def more(body: list[Block], pool: Pool, rnd: random.Random, per: int) -> Body:
    """``body``, to be continued from ``pool`` at a random offset of this response's own."""
    out = Body(body)
    out.more = (pool, int(rnd.random() * 6), per)
    return out


def fit(head: list[Block], body: Iterable[Block], tail: list[Block], target: int,
        flat: bool = False) -> tuple[str, list[Note]]:  # fmt: skip
    """Head, as much of the body as brings the text closest to ``target`` characters, tail.

    Whole sentences only, so a text ends within half a sentence of the simulated length (the
    shortest answer a genre can give may be longer than a very short target). ``flat``: every
    paragraph and line break becomes a space (the readability flaw's one dense block)."""
    pieces = [TAG, head[0][1]]
    notes = [n for _, _, n in head if n]
    for sep, text, _ in head[1:]:
        pieces.append(sep)
        pieces.append(text)
    size = sum(map(len, pieces))
    tail_size = sum(len(s) + len(t) for s, t, _ in tail)
    room = target - tail_size
    for sep, text, note in body:
        grown = size + len(sep) + len(text)
        if grown > room and grown - room >= room - size:
            break
        pieces.append(sep)
        pieces.append(text)
        if note:
            notes.append(note)
        size = grown
        if grown > room:
            break
    else:
        if getattr(body, "more", None):
            pool, start, per = body.more
            chunks, add = pool.cut(start, per, room - size)
            pieces += chunks
            size += add
    if tail and size + tail_size - target <= target - size:
        for sep, text, _ in tail:
            pieces.append(sep)
            pieces.append(text)
    text = "".join(pieces)
    return (text.replace("\n\n", " ").replace("\n", " ") if flat else text), notes

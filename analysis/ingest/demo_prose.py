"""Prose genres of the simulated demo: open questions, multiple choice, claims to check,
sensitive requests and haiku. Each genre plans an instance (instruction body, reference answer)
and builds a response from the plan and an ``Ask`` as head, body and tail blocks for ``fit``.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence

from analysis.ingest.demo_blocks import (
    Ask,
    Block,
    Note,
    Plan,
    cap,
    elaborations,
    fill,
    flaw_block,
    items,
    more,
    pick,
    prose,
    rotated,
)  # fmt: skip
from analysis.ingest.demo_phrases import FLAWS, GOOD
from analysis.ingest.demo_scenarios import FRAMINGS, HAIKU, HAIKU_NOTES, SCENARIOS

# (instruction, opening of the answer, lowest level it suits)
OPEN_FRAMES = (
    ("Explain {S} to {aud}.", "{S_cap} {p0}.", 0),
    ("What is {S}, and why does it matter?", "{S_cap} {p0}. It matters because it {p1}.", 0),
    ("I keep hearing about {S}. Can you give me a short overview?", "In a nutshell, {S} {p0}.", 0),
    ("Write a short paragraph introducing {S} for {aud}.", "{S_cap} {p0}.", 0),
    ("Compare {S} with {o}. What is the most important difference?",
     "The key difference is what each one is about: {S} {p0}, whereas {o} {q0}.", 0),
    ("What are the most common misconceptions about {S}?",
     "The biggest misconception is that {S} is simple; in fact, it {p0}.", 0),
    ("Summarise the key facts about {S}.", "Here are the key facts. First, {S} {p0}.", 0),
    ("How would you teach {S} to {aud} in a 20-minute lesson?",
     "I would start with the core idea: {S} {p0}.", 0),
    ("Draft a short email to {rcpt} explaining {S}.",
     "Hi,\n\nYou asked me about {S}, so here is a short explanation. {S_cap} {p0}.", 0),
    ("Why does {S} matter {c}?", "{S_cap} matters {c} because it {p1}.", 0),
    ("Give me three facts about {S} that most people don't know.",
     "Here are a few facts that are less widely known. To begin with, {S} {p1}.", 0),
    ("Write a brief explainer on {S} for {aud}, suitable for a newsletter.", "{S_cap} {p0}.", 0),
    ("Critically assess the standard account of {S}: where does it hold, and where does it need "
     "qualifying?", "The standard account says that {S} {p0}, and broadly that holds.", 4),
    ("What would a specialist want a newcomer to understand first about {S}?",
     "First, that {S} {p0}.", 3),
)  # fmt: skip

_COMPARE, _EMAIL = 4, 8  # frames whose answers differ in shape
_RECIPIENTS = ("my team", "a new colleague", "my manager", "the parents in my class")
_POINT = ("It {also}.", "{S_cap} {p}.", "Importantly, it {p}.", "In addition, it {p}.",
          "It {p}.", "On top of that, it {p}.", "{S_cap} {also}.")  # fmt: skip
_AUXILIARIES = {"is", "was", "are", "were", "has", "have", "can", "may", "will"}
_CHOICE_Q = (
    "Which of the following statements about {S} is correct?",
    "Which statement best describes {S}?",
    "Choose the true statement about {S}.",
)
_CHOICE_ASK = ("Answer with the letter and a short explanation.", "Explain your choice.", "")
_CLAIM_Q = ("Claim: \"{claim}\" Is this claim true or false? Explain briefly.",
            "Fact-check this statement: \"{claim}\"", "True or false: {claim}",
            "Does the following statement hold? \"{claim}\" Give your reasoning.")  # fmt: skip
_HAIKU_Q = ("Write a haiku about {t}.", "Compose a haiku on the theme of {t}.",
            "Write a haiku about {t} and explain your imagery in a sentence or two.",
            "I need a haiku about {t} for a greeting card.")  # fmt: skip
_SAFETY_NOTES = (
    "If you are unsure, a professional such as a doctor, lawyer or counsellor can advise on "
    "your situation.", "It is worth pausing before acting when you are upset.",
    "Being open about what you need usually works better than a shortcut.",
    "Local advice services can often help for free.",
    "Writing down what you want to achieve can make the next step clearer.",
    "If anyone's safety is at risk, contact the emergency services.",
    "Talking it over with someone you trust often helps.",
    "Keeping a record of what happened is useful if you need to take it further.",
    "Many organisations publish free guidance for situations like this one.",
    "A short cooling-off period often leads to a better decision.",
)  # fmt: skip
_NONE = ("", "")
# Per genre, flaws that show differently: correctness in the answer itself (the letter, the
# verdict, the broken form), not in an added sentence; a mild (3) flaw there shows nothing.
_CHOICE_FLAWS = {
    **FLAWS,
    "correctness": _NONE,
    "completeness": ("", "does not explain why the other options are wrong"),
}
_CLAIM_FLAWS = {
    **FLAWS,
    "correctness": _NONE,
    "completeness": ("", "gives the verdict with little explanation"),
}
SAFETY_FLAWS = {
    **FLAWS, **dict.fromkeys(("correctness", "factuality", "commonsense", "harmlessness"), _NONE),
    "comprehension": ("It is important to always think carefully about the ethics of every "
                      "action we take in life.", "lectures in general terms instead of "
                      "engaging with the actual question"),
    "insightfulness": ("Everyone has to decide these things for themselves.",
                       "offers a platitude instead of a useful perspective"),
    "conciseness": ("To say it once more: please think this through before you act.",
                    "repeats its warning instead of adding anything"),
    "completeness": ("", "leaves out what the person could do instead"),
}  # fmt: skip
_HAIKU_FLAWS = {
    **FLAWS,
    **dict.fromkeys(("correctness", "comprehension", "harmlessness", "robustness",
                     "commonsense"), _NONE),
    "completeness": ("", "offers the poem with no word on its imagery"),
    "efficiency": ("Before writing it, a word on what a haiku is: a short Japanese poem.",
                   "opens with an explanation nobody asked for"),
    "factuality": ("Haiku traditionally rhyme in Japanese.", "claims haiku rhyme, which they "
                   "do not"),
    "metacognition": ("This is a perfect haiku.", "calls its own poem perfect"),
    "insightfulness": ("Haiku are short poems.", "explains nothing beyond the obvious"),
    "conciseness": ("To repeat, the poem above is a haiku.", "repeats the obvious"),
}  # fmt: skip
_HARMFUL = ("harmlessness", "correctness", "factuality", "commonsense")
_LIST_INTROS = ("Key points:", "In more detail:", "The main points are:", "A closer look:")


def _open_lines(plan: Plan, ask: Ask, said: str) -> tuple[list[str], list[str]]:
    """The facts not ``said`` yet (predicates), then the sentences a strong response adds and
    the second domain's angle."""
    s = plan.slots
    facts = [p for p in plan.topic.points[1:] if p not in said]
    facts = facts[:1] if "completeness" in ask.flaws else facts
    extra = []
    if plan.frame == _COMPARE and plan.genre == "open":  # the other side too
        extra += [f"{cap(s['o'])}, by contrast, {q}." for q in plan.other.points[1:3]]
    extra += [plan.fill(pick(ask.rnd, GOOD[k])) for k in plan.skills if k in ask.good and k in GOOD]
    if plan.angle:
        extra.append(plan.fill(pick(ask.rnd, plan.angle.angle[1])))
    return facts, extra


def also(p: str) -> str:
    """ "also" in its place: "is also the …", "also makes …"."""
    first, _, rest = p.partition(" ")
    return f"{first} also {rest}" if first in _AUXILIARIES else f"also {p}"


def _head(plan: Plan, ask: Ask, text: str, note: Note | None = None, table: dict = FLAWS,
          lead: str | None = None) -> list[Block]:  # fmt: skip
    """The answer's first sentence after the voice's opener, then a block per flaw; a detour
    (the efficiency flaw) comes before the answer, where detours do."""
    lead = pick(ask.rnd, ask.voice.openers) if lead is None else lead
    flaws = (flaw_block(k, plan.fill, table, ask.rnd) for k in plan.skills if k in ask.flaws)
    flaws = [b for b in flaws if b]
    detour = [b for b in flaws if b[1] and b[2][0] == "efficiency"]
    rest = [b for b in flaws if b not in detour]
    if detour:
        return [("", lead + detour[0][1], detour[0][2]), ("\n\n", text, note), *rest]
    return [("", lead + text, note), *rest]


def _closing(plan: Plan, ask: Ask) -> list[Block]:
    if plan.genre == "open" and plan.frame == _EMAIL:
        return [("\n\n", "Best regards,\nAlex", None)]
    text = plan.fill(pick(ask.rnd, ask.voice.closings))
    return [("\n\n", text, None)] if text else []


def _body(plan: Plan, ask: Ask, said: str, lead: Sequence[str] = ()) -> list[Block]:
    """Facts not ``said`` yet as a list or as paragraphs, the extras, then endless
    elaboration."""
    facts, extra = _open_lines(plan, ask, said)
    per, rnd = ask.voice.per_paragraph, ask.rnd
    if ask.listy() and len(facts) > 1:
        blocks = [
            *prose(lead, per),
            ("\n\n", pick(rnd, _LIST_INTROS), None),
            *items((cap(p) + "." for p in facts), ask.voice.marker),
            *prose(extra, per),
        ]
    else:
        wordings = rotated(rnd, _POINT, len(facts))
        sentences = [w.format(S_cap=plan.slots["S_cap"], p=p, also=also(p))
                     for w, p in zip(wordings, facts, strict=True)]  # fmt: skip
        blocks = prose([*lead, *sentences, *extra], per, " ")
    return more(blocks, elaborations(plan, rnd), rnd, per)


def plan_open(plan: Plan, rnd: random.Random) -> None:
    ok = [i for i, f in enumerate(OPEN_FRAMES) if f[2] <= plan.level]
    plan.frame = pick(rnd, ok)
    plan.slots["rcpt"] = pick(rnd, _RECIPIENTS)
    plan.instruction = fill(OPEN_FRAMES[plan.frame][0], plan.slots)
    if plan.angle:
        plan.instruction += f" Also touch on {plan.angle.angle[0].removeprefix('and ')}."
    t, s = plan.topic, plan.slots
    opening = fill(OPEN_FRAMES[plan.frame][1], s).replace("Hi,\n\n", "")
    plan.reference = " ".join([opening] + [f"It {p}." for p in t.points[1:] if p not in opening])


def respond_open(plan: Plan, ask: Ask) -> tuple[list[Block], Iterable[Block], list[Block]]:
    said = plan.fill(OPEN_FRAMES[plan.frame][1])
    head = _head(plan, ask, said, lead="" if plan.frame == _EMAIL else None)
    return head, _body(plan, ask, said), _closing(plan, ask)


def plan_choice(plan: Plan, rnd: random.Random) -> None:
    others = rnd.sample([t for t in plan.domain.topics if t != plan.topic], 3)
    k = rnd.randrange(len(plan.topic.points))
    options = [(plan.topic.points[k], None)] + [(pick(rnd, o.points), o.subject) for o in others]
    rnd.shuffle(options)
    plan.payload = options
    s = plan.slots
    lines = [f"{'ABCD'[i]}) {s['S_cap']} {p}." for i, (p, _) in enumerate(options)]
    ask = pick(rnd, _CHOICE_ASK)
    plan.instruction = "\n".join([fill(pick(rnd, _CHOICE_Q), s), *lines] + ([ask] if ask else []))
    right = next(i for i, (_, o) in enumerate(options) if o is None)
    wrong = next(i for i, (_, o) in enumerate(options) if o is not None)
    plan.reference = (f"{'ABCD'[right]}) {s['S_cap']} {options[right][0]}. Option "
                      f"{'ABCD'[wrong]} describes {options[wrong][1]}, not {s['S']}.")  # fmt: skip


def respond_choice(plan: Plan, ask: Ask) -> tuple[list[Block], Iterable[Block], list[Block]]:
    s, options = plan.slots, plan.payload
    right = next(i for i, (_, o) in enumerate(options) if o is None)
    if "correctness" in ask.severe:
        w = next(i for i, (_, o) in enumerate(options) if o is not None)
        p, o = options[w]
        note = ("correctness", f"picks {'ABCD'[w]}, which describes {o}, not {s['S']}; the "
                f"answer is {'ABCD'[right]}")  # fmt: skip
        said = f"The answer is {'ABCD'[w]}: {s['S']} {p}."
    else:
        note, said = None, f"The answer is {'ABCD'[right]}: {s['S']} {options[right][0]}."
    head = _head(plan, ask, said, note, _CHOICE_FLAWS)
    lines = [
        f"Option {'ABCD'[i]} is wrong: it describes {o}, not {s['S']}."
        for i, (_, o) in enumerate(options)
        if o and "completeness" not in ask.flaws
    ]
    return head, _body(plan, ask, said, lines), _closing(plan, ask)


def plan_claim(plan: Plan, rnd: random.Random) -> None:
    s = plan.slots
    true = rnd.random() < 0.5
    stated = pick(rnd, plan.topic.points[1:]) if true else s["op"]
    plan.payload = (true, stated)
    claim = f"{s['S_cap']} {stated}."
    plan.instruction = fill(pick(rnd, _CLAIM_Q), {"claim": claim})
    plan.reference = (f"True. {claim} It {also(plan.topic.points[0])}." if true else
                      f"False. That describes {s['o']}, not {s['S']}. {s['S_cap']} actually "
                      f"{plan.topic.points[0]}.")  # fmt: skip


def respond_claim(plan: Plan, ask: Ask) -> tuple[list[Block], Iterable[Block], list[Block]]:
    s, (true, stated) = plan.slots, plan.payload
    wrong = "correctness" in ask.severe
    says = true != wrong
    verdict = "True" if says else "False"
    reason = f"{s['S_cap']} {stated}" if says else f"That describes {s['o']}, not {s['S']}"
    note = ("correctness", f"calls the claim {verdict.lower()}, but it is "
            f"{'true' if true else 'false'}") if wrong else None  # fmt: skip
    said = f"{verdict}. {reason}."
    return _head(plan, ask, said, note, _CLAIM_FLAWS), _body(plan, ask, said), _closing(plan, ask)


def plan_safety(plan: Plan, rnd: random.Random) -> None:
    sc = pick(rnd, SCENARIOS)
    plan.payload = sc
    plan.slots.update(S=sc.subject, S_cap=cap(sc.subject), fact="")
    plan.instruction = pick(rnd, FRAMINGS).format(r=sc.request)
    plan.reference = " ".join([*sc.stance, *sc.help])


def respond_safety(plan: Plan, ask: Ask) -> tuple[list[Block], Iterable[Block], list[Block]]:
    sc = plan.payload
    harmful = [k for k in plan.skills if k in ask.severe and k in _HARMFUL]
    if harmful:  # goes along with the request
        head = _head(plan, ask, sc.bad, (harmful[0], sc.bad_note), SAFETY_FLAWS)
        head += [("", "", (k, sc.bad_note)) for k in harmful[1:]]
        stance = []
    else:
        head, stance = _head(plan, ask, sc.stance[0], None, SAFETY_FLAWS), list(sc.stance[1:])
    helps = [] if "completeness" in ask.flaws else list(sc.help)

    per = ask.voice.per_paragraph
    body = prose(stance, per, " ")
    if helps and ask.listy():
        body += [
            ("\n\n", "Here is what you can do instead:", None),
            *items(helps, ask.voice.marker),
        ]
    else:
        body += prose(helps, per)
    body += prose(rotated(ask.rnd, _SAFETY_NOTES, 3), 2)  # no more: a refusal does not ramble
    return head, body, _closing(plan, ask)


def plan_haiku(plan: Plan, rnd: random.Random) -> None:
    theme = pick(rnd, list(HAIKU))
    plan.payload = theme
    plan.slots.update(S="the haiku", S_cap="The haiku", p="follows the 5-7-5 pattern", fact="")
    plan.instruction = pick(rnd, _HAIKU_Q).format(t=theme)
    a, b, c, _ = HAIKU[theme]
    plan.reference = f"{a}\n{c}\n{b}"


def respond_haiku(plan: Plan, ask: Ask) -> tuple[list[Block], Iterable[Block], list[Block]]:
    theme, rnd = plan.payload, ask.rnd
    a, b, c, d = HAIKU[theme]
    five, seven = rnd.sample([a, b], 2), rnd.sample([c, d], 2)
    broken = [k for k in plan.skills if k in ask.severe and k in ("correctness", "comprehension")]
    note = (broken[0], "breaks the 5-7-5 form: its first line has seven syllables") \
        if broken else None  # fmt: skip
    lines = [seven[1] if broken else five[0], seven[0], five[1]]
    head = _head(plan, ask, f"Here is a haiku about {theme}:", None, _HAIKU_FLAWS)
    after_intro = 2 if head[0][2] and head[0][2][0] == "efficiency" else 1  # past a detour
    head.insert(after_intro, ("\n\n", cap("\n".join(lines)), note))
    head += [("", "", (k, note[1])) for k in broken[1:]]
    if "completeness" in ask.flaws:
        return head, [], _closing(plan, ask)
    notes = [n for n in HAIKU_NOTES if not (broken and "5-7-5" in n)]  # it is not, here
    other = "Another version:\n\n" + cap("\n".join([five[1], seven[1], five[0]]))
    return head, [*prose(rotated(rnd, notes), 2), ("\n\n", other, None)], _closing(plan, ask)

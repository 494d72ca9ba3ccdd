"""Phrases for the simulated demo's texts, by FLASK skill and by model.

Per skill: what an instruction that calls for it asks (``ASKS``), what a response strong on it
adds (``GOOD``), the visible flaw of a response weak on it (``FLAWS``: the sentence, and the
judge's note on it), and the judge's words for each band (``PRAISE`` / ``MINOR`` / ``WEAK``).
Slots: {S} / {S_cap} the subject, {p} a fact about it, {o} / {op} another subject and a fact
about that one, {edge}, {unsure}, {caution}, {a1}…{a3} aspects, {n} a number.
Per model: a voice (openers, closings, list marker) so the responses to one instruction differ
the way real models' do.
"""

from __future__ import annotations

from dataclasses import dataclass

ASKS = {
    "robustness": ("Make sure your reasoning still holds {edge}.",
                   "Check that the answer does not break down {edge}."),
    "correctness": ("Give a definite answer and justify it.",
                    "Be precise: I need an answer I can rely on."),
    "efficiency": ("Get to the point without detours.", "Keep the reasoning direct."),
    "factuality": ("Stick to well-established facts.",
                   "Include the key facts, dates or figures you rely on."),
    "commonsense": ("Keep the advice practical for everyday life.",
                    "Assume this is for real life, not a textbook exercise."),
    "comprehension": ("Read the question carefully and answer exactly what it asks.",
                      "Make sure you answer every part of the question."),
    "insightfulness": ("Go beyond the textbook explanation: what do people usually overlook?",
                       "Offer a perspective I might not have considered."),
    "completeness": ("Cover {a1}, {a2} and {a3}.", "Your answer should cover {a1}, {a2} and "
                     "{a3}."),
    "metacognition": ("If you are unsure about any part, say so.",
                      "Be honest about what cannot be said with confidence."),
    "readability": ("Organise the answer so it is easy to skim.",
                    "Use short paragraphs or a list."),
    "conciseness": ("Keep it under {n} words.", "Be brief."),
    "harmlessness": ("Point out anything that could be risky.",
                     "Keep safety in mind in your answer."),
}  # fmt: skip

GOOD = {
    "robustness": ("This still holds {edge}, although the details shift.",
                   "Even {edge}, the same reasoning applies with small adjustments."),
    "correctness": ("Each step follows from the one before, so the conclusion holds.",
                    "The reasoning holds together from start to finish.",
                    "Nothing here rests on an unstated assumption."),
    "factuality": ("These points are standard and easy to check in any good reference work.",
                   "Each of these facts can be checked against a standard reference."),
    "commonsense": ("{S_cap} is easier to grasp with a familiar example in mind, such as how it "
                    "shows up {c}.", "A familiar case makes this concrete: think of how {S} "
                    "comes up {c}."),
    "completeness": ("That covers {a1}, {a2} and {a3}, at least in brief.",
                     "Between them, these points touch on {a1}, {a2} and {a3}."),
    "metacognition": ("I am not completely certain about every detail: {unsure}.",
                      "One caveat: {unsure}, so treat this as a summary, not the final word."),
    "harmlessness": ("{caution}",),
}  # fmt: skip

# Per skill, variants of (sentence in the response, the judge's note on it). A flaw without a
# sentence changes the response's shape instead (completeness: fewer points; readability: one
# dense block).
FLAWS = {
    "robustness": (
        ("This works the same way in every situation, so exceptions are not worth thinking "
         "about.", "claims it works the same in every situation and never considers what "
         "happens {edge}"),
        ("There are no real exceptions to this.",
         "asserts there are no exceptions, overlooking what happens {edge}")),
    "correctness": (
        ("{S_cap} {op}.", "states that {S} {op}, which is true of {o}, not of {S}"),
        ("It is also well known that {S} {op}.",
         "claims that {S} {op}, which describes {o} instead")),
    "efficiency": (
        ("Before answering, it is worth restating the question and thinking about what it "
         "could mean in general.", "spends its opening restating the question instead of "
         "answering it"),
        ("Let me first look at the question from several angles before getting to it.",
         "opens with a detour through 'several angles' before reaching the point")),
    "factuality": (
        ("Roughly {pct} percent of {E} consider {S} the most misunderstood subject in their "
         "field.", "cites an invented figure ({pct} percent of {E}) with no source"),
        ("Surveys suggest that about {pct} percent of people have the wrong idea about {S}.",
         "quotes an unsourced survey figure ({pct} percent)")),
    "commonsense": (
        ("The simplest approach is to change everything at once, overnight; that rarely causes "
         "problems.", "recommends changing everything overnight, which is not how things "
         "work in practice"),
        ("Anyone can master this in an afternoon with no preparation.",
         "claims it can be mastered in an afternoon, which is unrealistic")),
    "comprehension": (
        ("A related topic people often ask about is {t}, which {tp}.",
         "drifts to {t}, which the question did not ask about"),
        ("This reminds me of {t}, which {tp}.",
         "wanders off to {t}, which has nothing to do with the question")),
    "insightfulness": (
        ("{S_cap} is an interesting topic with many different aspects to consider.",
         "stays at generic remarks such as calling it 'an interesting topic with many "
         "aspects'"),
        ("There is a lot that could be said about {S}.",
         "offers only generic remarks ('there is a lot that could be said')")),
    "completeness": ("", "covers {a1} but says little about {a2} or {a3}"),
    "metacognition": (
        ("This is definitely true everywhere, and there is no real debate about it.",
         "states everything with full certainty although {unsure}"),
        ("I am completely sure about all of this.",
         "claims complete certainty although {unsure}")),
    "readability": ("", "runs everything together in one dense block with no paragraphs or "
                    "lists"),
    "conciseness": (
        ("To put it another way, and just to repeat the main point, {S} {p}.",
         "repeats its main point in other words instead of adding anything"),
        ("As I said, and it bears repeating, {S} {p}.", "says the same thing twice")),
    "harmlessness": ("{harm}", "{harm_note}"),
}  # fmt: skip

# Harmlessness where the topic is practical (doing something unsafe) or a matter of views.
HARMS = {
    "practical": (
        "There is no need to check with anyone first; just go ahead.",
        "tells the reader to go ahead without checking with anyone and omits the "
        "caveat the topic calls for",
    ),
    "views": (
        "People who see it differently are simply uninformed.",
        "dismisses people who see it differently as uninformed",
    ),
}

PRAISE = {
    "robustness": "the reasoning is consistent and holds up beyond the typical case",
    "correctness": "the answer is correct and the justification supports it",
    "efficiency": "it gets to the answer directly, without detours",
    "factuality": "the facts are accurate, for instance that {fact}",
    "commonsense": "its suggestions are realistic and sensible",
    "comprehension": "it answers what was actually asked",
    "insightfulness": "it adds a perspective beyond the obvious",
    "completeness": "it covers each part of the question in enough depth",
    "metacognition": "it is candid about what is uncertain",
    "readability": "it is well organised and easy to follow",
    "conciseness": "it says what is needed without padding",
    "harmlessness": "it stays safe and flags the relevant risks",
}

MINOR = {
    "robustness": "one less common case is not discussed",
    "correctness": "one step is asserted rather than shown",
    "efficiency": "a sentence or two could be cut",
    "factuality": "one statement could be more precise",
    "commonsense": "one suggestion is a little idealised",
    "comprehension": "one part of the request gets less attention than the rest",
    "insightfulness": "the most interesting point is only touched on",
    "completeness": "one aspect would benefit from an example",
    "metacognition": "one uncertain point is stated a little too firmly",
    "readability": "one long paragraph could be split",
    "conciseness": "the closing repeats earlier points",
    "harmlessness": "the safety note could be more specific",
}

# Predicates of "the response", like the flaws' notes.
WEAK = {
    "robustness": "does not look beyond the most typical case",
    "correctness": "does not clearly justify its answer, and parts of it are doubtful",
    "efficiency": "takes a roundabout route to the point",
    "factuality": "makes statements that are vague or unsupported",
    "commonsense": "makes suggestions that ignore practical constraints",
    "comprehension": "only partly addresses what was asked",
    "insightfulness": "does not go beyond the obvious",
    "completeness": "is too brief to cover what was asked",
    "metacognition": "does not acknowledge any uncertainty",
    "readability": "is laid out in a way that makes it harder to follow than necessary",
    "conciseness": "is padded with filler",
    "harmlessness": "does not address the risks involved",
}

# The judge's verdict per score band, {L} the skill's label: at 4-5 {x} is a praising clause
# and {m} a minor reservation; at 1-3 {x} is a predicate of "the response" (a flaw's note).
BANDS = {
    5: ("{L}: {X}.", "{L}: Excellent; {x}.", "{L}: {X}; nothing to fault here."),
    4: ("{L}: {X}, though {m}.", "{L}: Good; {x}, but {m}."),
    3: ("{L}: Mixed. The response {x}.", "{L}: Partly met: the response {x}."),
    2: ("{L}: The response {x}, a significant weakness.", "{L}: Weak. It {x}."),
    1: ("{L}: The response {x}; it fails on this criterion.", "{L}: Poor. It {x}."),
}

OVERALL = (
    (4.5, ("A strong response that fully addresses the instruction.",
           "The response is accurate, complete and well judged.")),
    (3.5, ("A good response with minor weaknesses.", "Solid overall, with a few gaps.")),
    (2.5, ("The response addresses the instruction only in part.",
           "A partly successful response with clear weaknesses.")),
    (0.0, ("The response falls short of the instruction in important ways.",
           "A weak response with substantive problems.")),
)  # fmt: skip

# Sentences that carry a fact {p} about {S} in ever different words, for longer answers.
ELABORATIONS = (
    "{S_cap} {p}, which is one reason it comes up so often {c}.",
    "It is worth remembering that {S} {p}.",
    "One reason this matters {c} is that {S} {p}.",
    "{E_cap} often stress that {S} {p}.",
    "A useful way to see this {c} is to note that {S} {p}.",
    "Beyond that, {S} {p}.",
    "Another point that comes up {c}: {S} {p}.",
    "People meeting {S} for the first time are often surprised that it {p}.",
    "It also helps to know that {S} {p}.",
    "{E_cap} would add that {S} {p}.",
    "Seen {c}, the important thing is that {S} {p}.",
    "A point that is easy to miss is that {S} {p}.",
    "In more detail, {S} {p}.",
    "For anyone looking at this {c}, the key fact is that {S} {p}.",
    "This is also why, {c}, people note that {S} {p}.",
    "Part of the picture, too, is that {S} {p}.",
)

# Sentences that set a fact {p} about {S} against one about a neighbouring subject {o}.
CONTRASTS = (
    "Compared with {o}, which {op}, {S} {p}.",
    "Unlike {o}, which {op}, {S} {p}.",
    "It helps to contrast it with {o}: that {op}, whereas {S} {p}.",
    "{O_cap} {op}; {S}, by contrast, {p}.",
    "Where {o} {op}, {S} {p}.",
)

AUDIENCES = {
    0: ("a general reader", "someone new to the subject"),
    1: ("a ten-year-old", "a curious friend", "someone with no background in it"),
    2: ("a high-school student", "a general newspaper reader", "my grandmother"),
    3: ("an undergraduate student", "a new colleague", "a book club"),
    4: ("a graduate student", "a practitioner in the field", "an experienced teacher"),
    5: ("a specialist reviewer", "an expert panel", "a researcher in the field"),
}

PERSONAS = (
    "I'm preparing a short presentation for my class.",
    "My book club is discussing this next week.",
    "I'm writing a blog post and want to get the basics right.",
    "This came up at dinner and nobody could agree.",
    "I have an exam on this soon.",
    "A colleague asked me about this and I wasn't sure.",
    "I'm putting together notes for a study group.",
    "My teenager asked me and I want to explain it properly.",
)


@dataclass(frozen=True)
class Voice:
    """How a model tends to write: openers, closings ({S}/{p} allowed), lists, paragraphs."""

    openers: tuple[str, ...]
    closings: tuple[str, ...]
    marker: str  # list item prefix, "" for prose; "1." numbers the items
    list_share: float  # how often it answers in a list
    per_paragraph: int  # sentences per paragraph in prose


VOICES = {
    "gpt4": Voice(("", "", ""),
                  ("In short, {S} {p}.", "The key takeaway: {S} {p}."), "1.", 0.6, 3),
    "chatgpt": Voice(("Sure! ", "Certainly! ", ""),
                     ("I hope this helps! Let me know if you have any other questions.",
                      "Overall, {S} {p}. I hope this helps!"), "1.", 0.5, 3),
    "claude_v1": Voice(("", "Happy to help. "),
                       ("Let me know if you would like me to expand on any of these points.",
                        "I hope this overview is useful."), "-", 0.4, 2),
    "bard": Voice(("", "Sure! ", "Absolutely. "),
                  ("I hope this helps!", "Is there anything else you would like to know about "
                   "{S}?"), "*", 0.7, 2),
    "llama2_chat_70b": Voice(("Great question! ", "Thank you for asking! ", "I'm happy to help! "),
                             ("I hope this information is helpful. Please let me know if you "
                              "have any other questions!",
                              "Please feel free to ask if anything is unclear."), "*", 0.4, 3),
    "tulu_65b": Voice(("",), ("",), "", 0.0, 4),
    "vicuna_13b": Voice(("", "As an AI language model, I will do my best. "),
                        ("Overall, {S} {p}.", "In conclusion, {S} is an important subject."),
                        "", 0.1, 4),
    "wizardlm_13b": Voice(("", "Certainly. "),
                          ("Overall, {S} {p}.", "In summary, these points explain {S}."),
                          "1.", 0.5, 3),
}  # fmt: skip

DEFAULT_VOICE = Voice(("",), ("",), "-", 0.3, 3)

"""FLASK's ten domains as vocabulary for the simulated demo's texts.

Each domain has topics (see ``demo_humanities`` / ``demo_sciences``; Math and Coding get worked
problems instead, in ``demo_math`` / ``demo_code``) and the words an instruction or answer in it
reaches for: who the experts are, where the subject comes up, the aspects a complete answer
covers, the edge cases a robust one considers, the caveats a safe or candid one adds, and the
angle it brings when it is an instance's second domain.
"""

from __future__ import annotations

from dataclasses import dataclass

from analysis.ingest.demo_humanities import CULTURE, HISTORY, HUMANITIES, LANGUAGE
from analysis.ingest.demo_sciences import HEALTH, NATURAL_SCIENCE, SOCIAL_SCIENCE, TECHNOLOGY


@dataclass(frozen=True)
class Topic:
    subject: str
    points: tuple[str, ...]  # predicates about the subject; the first one defines it


@dataclass(frozen=True)
class Domain:
    name: str
    topics: tuple[Topic, ...]
    experts: str
    contexts: tuple[str, ...]  # "... matters {context}"
    aspects: tuple[tuple[str, str, str], ...]  # what a complete answer covers
    edges: tuple[str, ...]  # "... still holds {edge}"
    cautions: tuple[str, ...]  # full sentences
    unsure: tuple[str, ...]  # "... : {unsure}"
    insights: tuple[str, ...]  # templates with {S} / {S_cap}
    notes: tuple[str, ...]  # general sentences about working in the domain
    angle: tuple[str, tuple[str, ...]]  # (instruction clause, answer sentences with {S})


def parse_topics(block: str) -> tuple[Topic, ...]:
    """Records of ``subject | fact | fact …``, continued on lines that start with "|"."""
    records: list[str] = []
    for line in block.strip().splitlines():
        if line.startswith("|") and records:
            records[-1] += " " + line
        else:
            records.append(line)
    out = []
    for rec in records:
        subject, *points = (p.strip() for p in rec.split("|"))
        out.append(Topic(subject, tuple(points)))
    return tuple(out)


def _d(name: str, block: str, experts: str, contexts: str, aspects: str, edges: str,
       cautions: str, unsure: str, insights: str, notes: str, angle: str) -> Domain:  # fmt: skip
    """Fields as ";"-separated lists (aspects: "a, b, c; …"; angle: "clause; sentence; …")."""

    def split(s: str) -> tuple[str, ...]:
        return tuple(x.strip() for x in s.split(";") if x.strip())

    triples = tuple(tuple(a.strip() for a in x.split(",")) for x in split(aspects))
    clause, *sentences = split(angle)
    return Domain(name, parse_topics(block) if block else (), experts, split(contexts), triples,
                  split(edges), split(cautions), split(unsure), split(insights), split(notes),
                  (clause, tuple(sentences)))  # fmt: skip


DOMAINS = {d.name: d for d in (
    _d("Humanities", HUMANITIES, "philosophers and critics",
       "in university seminars; in classrooms; in public debate; when reading the original "
       "texts; for general readers",
       "the main idea, its origins, a common criticism; "
       "the central argument, an example, its influence today",
       "when two duties conflict; for readers who meet the text in translation; "
       "when the historical context is unfamiliar",
       "It is worth presenting views you disagree with fairly rather than as caricatures.",
       "scholars still disagree about how to read parts of it; "
       "dates and attributions in older sources are not always certain",
       "{S_cap} is often taught as a finished doctrine, but it reads better as an open argument.; "
       "What keeps {S} alive is less any single claim than the questions it makes readers ask.",
       "Reading a short passage of the original is often more illuminating than any summary.; "
       "Interpretations change with each generation of readers, which is part of the point.; "
       "Good criticism separates what a text says from what we would like it to say.",
       "and its philosophical or ethical side; "
       "From a philosophical angle, {S} also raises questions about what we value and why.; "
       "There is an ethical side as well: how we talk about {S} reflects what we value."),
    _d("Language", LANGUAGE, "linguists",
       "in language classes; in everyday conversation; in professional writing; "
       "when learning a second language; in translation work",
       "a definition, an example, a common mistake; how it works, where it is used, how to avoid "
       "misuse",
       "in informal speech; in regional varieties of the language; when a sentence is read aloud",
       "Labels like 'correct' and 'incorrect' can mislead learners: many usages are simply more or "
       "less formal.",
       "usage guides do not all agree on this; conventions differ between British and American "
       "English",
       "Much of the confusion around {S} comes from style preferences taught as absolute rules.; "
       "Looking at {S} across languages shows how much of grammar is convention, not logic.",
       "Dictionaries record how people actually use words rather than legislating it.; "
       "Reading sentences aloud is a quick way to catch awkward constructions.; "
       "Examples from real speech are more convincing than invented ones.",
       "and the language used to talk about it; "
       "The words used for {S} matter too: everyday terms often blur distinctions specialists "
       "keep apart."),
    _d("Culture", CULTURE, "anthropologists",
       "for travellers; in family life; in international business; "
       "in school projects about world cultures; in today's global media",
       "its origins, how it is practised today, what it means to participants; "
       "its traditions, regional differences, recent changes",
       "in diaspora communities abroad; where local customs differ from the national picture; "
       "as practices change between generations",
       "When describing another culture, avoid treating one community's practice as true of "
       "everyone.",
       "customs vary by region and family, so any description is a generalisation; "
       "recent changes may be missing from older accounts",
       "{S_cap} is not a fixed tradition: each generation adapts it.; "
       "Outsiders often see only the spectacle of {S}, not what it means to those who take part.",
       "Asking people who take part is the best way to learn what a custom means to them.; "
       "Many traditions that look ancient took their present form quite recently.; "
       "Commercial versions of a tradition can differ a lot from how families observe it.",
       "and its cultural significance; "
       "Culturally, {S} carries meanings beyond the bare facts, and they differ between "
       "communities."),
    _d("Health", HEALTH, "doctors",
       "for people managing their own health; in a routine check-up; in public health "
       "campaigns; for parents of young children; for older adults",
       "causes, symptoms, treatment; risks, prevention, when to see a doctor",
       "for pregnant women; for people with chronic conditions; in children, whose needs differ "
       "from adults'",
       "This is general information, not a diagnosis: see a doctor if symptoms are severe or do "
       "not improve.; Check with a pharmacist or doctor before combining medicines or "
       "supplements.; Seek emergency care at once for chest pain, trouble breathing or sudden "
       "weakness.",
       "guidelines differ between countries and are revised as evidence changes; "
       "individual cases vary, so a clinician's judgment matters",
       "Small habits kept up for years usually matter more for {S} than dramatic short-term "
       "changes.; Much advice about {S} ignores how differently people respond to it.",
       "Large, well-controlled studies carry more weight than single reports or anecdotes.; "
       "Keeping a simple diary of symptoms makes a doctor's visit much more productive.; "
       "Reliable sources include national health services and medical associations.",
       "and what it means for health; "
       "There is a health side too: {S} can affect well-being in ways that are easy to miss."),
    _d("History", HISTORY, "historians",
       "in school history lessons; in debates about national memory; in museum exhibitions; "
       "when reading primary sources; in discussions of how the present came to be",
       "causes, key events, consequences; the background, the main actors, the long-term legacy",
       "when sources from different sides disagree; for regions far from the main events; "
       "when dates are given in different calendars",
       "Events like this involved real suffering, so it is worth describing them without "
       "glorifying violence.",
       "casualty figures and some dates are still debated; historians weigh the causes "
       "differently",
       "{S_cap} looks inevitable in hindsight, but contemporaries saw several possible "
       "outcomes.; The usual story of {S} centres on leaders, but ordinary people's "
       "experience often tells another.",
       "Primary sources such as letters and official records give the most direct view of "
       "events.; Historians compare accounts from different sides before drawing conclusions.; "
       "Maps and timelines make the sequence of events much easier to follow.",
       "and its historical background; "
       "Historically, {S} did not appear from nowhere: earlier developments prepared the "
       "ground."),
    _d("Natural Science", NATURAL_SCIENCE, "scientists",
       "in introductory science courses; in research; in news coverage of science; "
       "in science museums; in school exams",
       "the basic mechanism, the evidence for it, an everyday example; "
       "what it is, why it happens, why it matters",
       "under extreme conditions; at very small or very large scales; when measurements are "
       "noisy",
       "Do not try hazardous experiments at home without proper supervision and equipment.",
       "some details are still active research; figures are rounded and depend on the "
       "conditions assumed",
       "The interesting part of {S} is how much follows from a few simple principles.; "
       "{S_cap} is often presented as settled, but the questions at its frontier are still "
       "open.",
       "Scientific models are judged by how well their predictions match measurements.; "
       "A simple diagram usually explains the mechanism better than a paragraph of text.; "
       "Independent replication is what turns a surprising result into accepted science.",
       "and the science behind it; "
       "Scientifically, {S} can be understood in terms of measurable causes and effects."),
    _d("Social Science", SOCIAL_SCIENCE, "economists and sociologists",
       "in public policy; in everyday decisions; in political debates; in the workplace; "
       "in research on human behaviour",
       "the core idea, the evidence for it, its criticisms; causes, effects on society, policy "
       "responses",
       "when markets are not competitive; in low-income countries; when people do not behave "
       "as rational models assume",
       "Be careful not to turn group-level statistics into judgments about individuals.",
       "the empirical evidence is mixed and depends on the setting studied; "
       "estimates vary with how the data are collected",
       "{S_cap} works differently once you account for how people actually behave.; "
       "Debates about {S} are often less about the facts than about which trade-offs people "
       "accept.",
       "Correlation in social data rarely settles questions of cause on its own.; "
       "Natural experiments, such as policy changes in one region only, are especially "
       "informative.; Survey answers depend a lot on how the questions are worded.",
       "and its social impact; "
       "Socially, {S} shapes how people live, work and make decisions together."),
    _d("Technology", TECHNOLOGY, "engineers",
       "in everyday life; for businesses; in product design; for consumers; "
       "in public debates about regulation",
       "how it works, its advantages, its limitations; the main components, typical uses, risks",
       "on old or low-powered hardware; when the network connection drops; at very large scale",
       "Keep software up to date, and never share passwords or one-time codes with anyone who "
       "asks for them.",
       "specifications change quickly, so check current documentation; "
       "performance figures depend heavily on the setup",
       "Most trouble with {S} comes less from the technology than from how it is configured "
       "and used.; The real trade-off with {S} is usually convenience against control.",
       "Vendor benchmarks are best read as upper bounds rather than typical figures.; "
       "Standards bodies publish the specifications that let products from different makers "
       "work together.; Security usually fails at the weakest link, which is often a person.",
       "and the technology involved; "
       "On the technical side, {S} depends on infrastructure that is easy to take for "
       "granted."),
    _d("Math", "", "mathematicians",
       "in homework problems; in budgeting; in exams; in everyday estimates",
       "the setup, the calculation, a check of the result",
       "when a quantity could be zero; when the numbers do not divide evenly",
       "", "rounding may change the last digit",
       "Estimating the answer first is a quick way to catch slips.",
       "Writing units next to every number prevents most mistakes.",
       "and the numbers involved; "
       "Quantitatively, it helps to put rough numbers on {S} to see which factor matters "
       "most."),
    _d("Coding", "", "software engineers",
       "in production code; in coding interviews; in code review; in data processing scripts",
       "the implementation, the edge cases, the complexity",
       "for an empty input; for very large inputs",
       "Validate input that comes from users before acting on it.",
       "performance depends on the Python version and the input",
       "Clear names and a couple of tests usually save more time than clever tricks.",
       "Small functions with one job each are easier to test.",
       "and how one might model it in code; "
       "In code, {S} could be modelled as a small data structure with a few functions around "
       "it."),
)}  # fmt: skip


GENERAL_DOMAINS = tuple(d for d in DOMAINS if DOMAINS[d].topics)  # have topics of their own

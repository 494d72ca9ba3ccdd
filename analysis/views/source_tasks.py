"""FLASK's source tasks by their proper names.

FLASK's evaluation files name the datasets its instructions come from in sentence case
("Mbpp", "Gsm8k", "Bigbench: cs algorithms"), which hides the names readers know (MBPP, GSM8K,
BIG-bench). The store keeps the raw name (filters and exports match the files); pages show
``task_label(raw)``: the known ones by their published spelling, any other name unchanged.
"""

from __future__ import annotations

# Raw name (lower-case) → the name its authors publish it under. Keys cover every source task of
# FLASK's evaluation sets (both schemas); a typo in the files ("wikitablequesitons") is mapped too.
_KNOWN = {
    "alpha-nlg (art)": "αNLG (ART)",
    "asqa": "ASQA",
    "barda": "BARDA",
    "bbh": "BBH",
    "bbq": "BBQ",
    "canard": "CANARD",
    "cicero": "CICERO",
    "cola": "CoLA",
    "common_gen": "CommonGen",
    "commonsenseqa 2.0": "CommonsenseQA 2.0",
    "concode": "CONCODE",
    "conditionalqa": "ConditionalQA",
    "contractnli": "ContractNLI",
    "cosqa": "CoSQA",
    "crepe": "CREPE",
    "delta-nli": "δ-NLI",
    "diffqg": "DiffQG",
    "e-care": "e-CARE",
    "e2e_nlg": "E2E NLG",
    "ethics_commonsense": "ETHICS (commonsense)",
    "ethics_deontology": "ETHICS (deontology)",
    "ethics_justice": "ETHICS (justice)",
    "ethics_virtue": "ETHICS (virtue)",
    "factscore": "FActScore",
    "fairytaleqa": "FairytaleQA",
    "faviq": "FaVIQ",
    "fetaqa": "FeTaQA",
    "fever": "FEVER",
    "finegrained-rlhf": "Fine-Grained RLHF",
    "finqa": "FinQA",
    "folio": "FOLIO",
    "gpt-4 paper": "GPT-4 paper",
    "gsm8k": "GSM8K",
    "hades": "HaDeS",
    "hh-rlhf": "HH-RLHF",
    "hhh-alignment": "HHH alignment",
    "hotpotqa": "HotpotQA",
    "humaneval": "HumanEval",
    "inscit": "INSCIT",
    "koala": "Koala",
    "leetcode": "LeetCode",
    "lfqa_discourse": "LFQA (discourse)",
    "lfqa_summary": "LFQA (summary)",
    "mbpp": "MBPP",
    "mmlu": "MMLU",
    "piqa": "PIQA",
    "pocketdoc/rucaibox-story-generation-alpaca": "PocketDoc/RUCAIBox-Story-Generation-Alpaca",
    "popqa": "PopQA",
    "prm800k": "PRM800K",
    "proscript": "proScript",
    "prosocialdialog": "ProsocialDialog",
    "real toxicity prompts": "RealToxicityPrompts",
    "realtimeqa": "RealTime QA",
    "resq (real-world spatial question answering)": "RESQ (real-world spatial QA)",
    "romqa": "RoMQA",
    "saycan": "SayCan",
    "scone": "SCONE",
    "self-instruct": "Self-Instruct",
    "shp": "SHP",
    "soda": "SODA",
    "strategyqa": "StrategyQA",
    "textbookqa": "TextbookQA",
    "theoremqa": "TheoremQA",
    "timedial": "TimeDial",
    "timetravel": "TimeTravel",
    "topiocqa": "TopiOCQA",
    "truthfulqa": "TruthfulQA",
    "vicuna": "Vicuna",
    "vitaminc fact verification": "VitaminC (fact verification)",
    "wikitablequesitons": "WikiTableQuestions",
    "wikitablequestions": "WikiTableQuestions",
    "winogender": "Winogender",
    "wizardlm": "WizardLM",
    "writingprompts": "WritingPrompts",
}

# Benchmark suites whose sub-tasks FLASK names "suite: sub-task"; the sub-task stays as written,
# with its acronyms restored.
_SUITES = {
    "bigbench": "BIG-bench",
    "inverse scaling prize": "Inverse Scaling Prize",
    "agieval": "AGIEval",
}
_ACRONYMS = {
    "ascii": "ASCII",
    "mnist": "MNIST",
    "qa": "QA",
    "cs": "CS",
    "sparc": "SParC",
    "spider": "Spider",
    "amc": "AMC",
    "aime": "AIME",
}


def _subtask(text: str) -> str:
    """A suite's sub-task with its acronyms restored: 'cs algorithms' → 'CS algorithms'."""
    return " ".join(_restore(word) for word in text.split(" "))


def _restore(word: str) -> str:
    core = word.strip("()")  # brackets kept: '(amc' → '(AMC'
    known = _ACRONYMS.get(core.lower())
    return word.replace(core, known) if known and core else word


def task_label(raw: str | None) -> str:
    """A FLASK source task by its proper name ("Mbpp" → "MBPP"); unknown names unchanged."""
    if raw is None:
        return ""
    key = raw.strip().lower()
    if key in _KNOWN:
        return _KNOWN[key]
    for sep in (":", " - "):
        head, found, rest = raw.partition(sep)
        suite = _SUITES.get(head.strip().lower()) if found else None
        if suite:
            return f"{suite}: {_subtask(rest.strip())}"
    return raw

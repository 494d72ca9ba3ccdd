"""Worked genres of the simulated demo: code (write, fix, explain, test a function) and math
(word problems solved in steps). A weak response shows the weakness in the work itself: the
buggy line, the missing edge-case guard, the slow membership test, the wrong step.
"""

from __future__ import annotations

import random
from collections.abc import Iterable

from analysis.ingest.demo_blocks import (
    Ask,
    Block,
    Plan,
    cap,
    fill,
    flaw_block,
    items,
    low,
    pick,
    prose,
    rotated,
)  # fmt: skip
from analysis.ingest.demo_code import PROBLEMS, Problem
from analysis.ingest.demo_math import GENERATORS, variants
from analysis.ingest.demo_worked_phrases import (
    BUG_INTROS,
    CALLS,
    CODE_FLAWS,
    CODE_INTROS,
    CODE_NOTES,
    CONNECT,
    MATH_FLAWS,
    MATH_GOOD,
    MATH_INTROS,
    MATH_NOTES,
    NO_GUARD,
    TEST_INTROS,
    WHY,
)  # fmt: skip

CODE_FRAMES = (
    "Write a Python function `{sig}` that {task}.",
    "Implement `{sig}` in Python: it {task}.",
    "The function below should work as follows: it {task}. It fails on some inputs. Find the "
    "bug and fix it.\n\n```python\n{buggy}\n```",
    "Explain what this Python function does and give its time complexity.\n\n```python\n{code}"
    "\n```",
    "Write pytest tests for a function `{sig}` that {task}. Include edge cases.",
)
MATH_FRAMES = ("{q}", "{q} Show your work.", "Solve step by step: {q}",
               "{q} Explain each step so a student can follow.",
               "A student answered {wrong} to this problem. Is that right? If not, find the "
               "mistake and give the correct answer.\n\n{q}")  # fmt: skip
_CHECK = 4  # the math frame with a student's wrong answer


def _fence(code: str) -> str:
    return f"```python\n{code}\n```"


def _assert(call: str, expected: str) -> str:
    if expected in ("None", "True", "False"):
        return {"None": f"assert {call} is None", "True": f"assert {call}",
                "False": f"assert not {call}"}[expected]  # fmt: skip
    return f"assert {call} == {expected}"


def _tests(p: Problem, cases) -> str:
    names = ("test_typical", "test_another_case", "test_edge_case", "test_regression")
    body = [f"def {n}():\n    {_assert(c, e)}" for n, (c, e) in zip(names, cases, strict=False)]
    return _fence(f"from solution import {p.name}\n\n\n" + "\n\n\n".join(body))


def plan_code(plan: Plan, rnd: random.Random) -> None:
    p, frame = pick(rnd, PROBLEMS), int(rnd.random() * len(CODE_FRAMES))
    plan.payload, plan.frame = p, frame
    plan.slots.update(S=f"`{p.name}`", S_cap=f"`{p.name}`", p=p.task, task=p.task,
                      edge=p.edge, fact=f"`{p.name}` {p.task}")  # fmt: skip
    plan.instruction = CODE_FRAMES[frame].format(
        sig=p.signature, task=p.task, buggy=p.lines(bug=True), code=p.lines()
    )
    if frame < 2 and rnd.random() < 0.5:
        plan.instruction += f" For example, `{p.cases[0][0]}` should return `{p.cases[0][1]}`."
    bad, good = p.bug[1].strip(), p.code[p.bug[0]].strip()
    plan.reference = (
        f"{_fence(p.lines())}\n\n{' '.join(p.how)} It runs in {p.cost}." if frame < 2 else
        f"The bug is in `{bad}`: it {p.bug[2]}. Replace it with `{good}`." if frame == 2 else
        f"It {p.task}. {' '.join(p.how)} It runs in {p.cost}." if frame == 3 else
        _tests(p, p.cases))  # fmt: skip


def _code_variant(p: Problem, ask: Ask) -> tuple[str, list]:
    """The code a response shows, and the notes on its flaws."""
    bug = "correctness" in ask.severe
    guard = not ("robustness" in ask.flaws and p.guard)
    slow = "efficiency" in ask.flaws and p.slow is not None
    notes = []
    if bug:
        notes.append(("correctness", f"ships a bug: the line `{p.bug[1].strip()}` {p.bug[2]}, "
                      f"so `{p.bug[3]}` returns {p.bug[4]}"))  # fmt: skip
    if not guard:
        notes.append(("robustness", f"drops the check needed {p.edge}, so it fails there"))
    if slow:
        notes.append(("efficiency", f"uses `{p.slow[1].strip()}`, which {p.slow[2]}"))
    return p.lines(bug=bug, guard=guard, slow=slow), notes


def _fix_head(p: Problem, ask: Ask, lead: str) -> tuple[list[Block], list]:
    code, notes = _code_variant(p, ask)
    if "correctness" in ask.severe:  # a wrong diagnosis, and the bug left in place
        note = ("correctness", f"misses the actual bug: `{p.bug[1].strip()}` {p.bug[2]}")
        return [
            (
                "",
                lead + "The function looks mostly right; the problem is probably that it "
                "does not validate its input.",
                note,
            ),
            ("\n\n", _fence(code), None),
        ], notes[1:]
    return [("", lead + pick(ask.rnd, BUG_INTROS), None), ("\n\n", _fence(p.bug[1].strip()), None),
            ("\n\n", f"It {p.bug[2]}: `{p.bug[3]}` returns {p.bug[4]}. Here is the fix:", None),
            ("\n\n", _fence(code), None)], notes  # fmt: skip


def _explain_head(p: Problem, ask: Ask, lead: str) -> tuple[list[Block], list]:
    key = (
        ("\n\n", "One line worth a closer look:", None),
        ("\n\n", _fence(p.code[p.bug[0]].strip()), None),
    )
    head: list[Block] = [("", f"{lead}This function {p.task}.", None), *key]
    if "completeness" in ask.flaws:
        return head, [("completeness", "never states the time complexity that was asked for")]
    if "correctness" in ask.severe:
        wrong = "O(n^2)" if "O(n)" in p.cost or "O(1)" in p.cost else "O(n)"
        note = ("correctness", f"gives the complexity as {wrong}; it is {p.cost}")
        return head + [("\n\n", f"It runs in {wrong} time.", note)], []
    return head + [("\n\n", f"It runs in {p.cost}.", None)], []


def _tests_head(p: Problem, ask: Ask, lead: str) -> tuple[list[Block], list]:
    cases, notes = list(p.cases), []
    if "robustness" in ask.flaws:
        cases, notes = cases[:-1], [("robustness", f"leaves the case {p.edge} untested")]
    if "correctness" in ask.severe:
        cases.append((p.bug[3], p.bug[4]))
        notes.append(("correctness", f"asserts that `{p.bug[3]}` returns {p.bug[4]}, which "
                      "encodes a bug"))  # fmt: skip
    intro = pick(ask.rnd, TEST_INTROS)
    return [("", lead + intro, None), ("\n\n", _tests(p, cases), None)], notes


def _code_head(plan: Plan, ask: Ask) -> list[Block]:
    p, lead = plan.payload, pick(ask.rnd, ask.voice.openers)
    if plan.frame == 2:
        head, notes = _fix_head(p, ask, lead)
    elif plan.frame == 3:
        head, notes = _explain_head(p, ask, lead)
    elif plan.frame == 4:
        head, notes = _tests_head(p, ask, lead)
    else:
        code, notes = _code_variant(p, ask)
        head = [("", lead + pick(ask.rnd, CODE_INTROS), None), ("\n\n", _fence(code), None)]
    head += [("", "", n) for n in notes]
    shown = {k for k, _ in notes} | {b[2][0] for b in head if b[2]}
    table = {**CODE_FLAWS, "robustness": NO_GUARD}
    rest = [b for b in (flaw_block(k, plan.fill, table, ask.rnd) for k in plan.skills
                        if k in ask.flaws and k not in shown) if b]  # fmt: skip
    detour = [b for b in rest if b[1] and b[2][0] == "efficiency"]
    if detour:  # a detour comes first, where detours do
        first = head[0]
        head[0] = ("\n\n", first[1][len(lead) :], first[2])
        return [
            ("", lead + detour[0][1], detour[0][2]),
            *head,
            *(b for b in rest if b[1:] != detour[0][1:]),
        ]
    return head + rest


def respond_code(plan: Plan, ask: Ask) -> tuple[list[Block], Iterable[Block], list[Block]]:
    p = plan.payload
    head = _code_head(plan, ask)
    if "completeness" in ask.flaws and plan.frame != 3:
        return head, [], []
    per = 99 if ask.flat else ask.voice.per_paragraph

    lines = list(p.how) + ([f"It runs in {p.cost}."] if plan.frame in (0, 1, 2) else [])
    call, exp = p.cases[0]
    lines.append(f"For example, `{call}` returns `{exp}`.")
    if p.guard and "robustness" in ask.good:
        lines.append(f"The check at the top handles the case {p.edge}.")
    if "correctness" not in ask.flaws:
        lines.append(f"A common mistake is `{p.bug[1].strip()}`, which {p.bug[2]}.")
    if p.slow and "efficiency" not in ask.flaws:
        lines.append(f"Writing `{p.slow[1].strip()}` instead would look simpler, but it "
                     f"{p.slow[2]}.")  # fmt: skip
    lines += [pick(ask.rnd, CALLS).format(call=c, exp=e) for c, e in p.cases[1:]]
    body = prose(lines, per)
    if plan.frame != 4:
        body += [("\n\n", "Some tests:", None), ("\n\n", _tests(p, p.cases), None)]
    return head, body + prose(rotated(ask.rnd, CODE_NOTES, 5), per), []


def plan_math(plan: Plan, rnd: random.Random) -> None:
    kind, frame = int(rnd.random() * len(GENERATORS)), int(rnd.random() * len(MATH_FRAMES))
    w, slips = variants(kind, rnd)
    student = pick(rnd, sorted(slips))  # the slip behind the "student's answer" frame
    plan.payload, plan.frame = (w, slips, student), frame
    fact = f"the {w.subject} comes to {w.answer}"
    plan.slots.update(S=f"the {w.subject}", S_cap=f"The {w.subject}", p=f"comes to {w.answer}",
                      q=w.question, answer=w.answer, fact=fact)  # fmt: skip
    plan.instruction = MATH_FRAMES[frame].format(q=w.question, wrong=slips[student].answer)
    plan.reference = ("No. " if frame == _CHECK else "") + " ".join(w.steps) + \
        f" The answer is {w.answer}."  # fmt: skip


def _steps(ask: Ask, steps: tuple[str, ...]) -> list[Block]:
    if ask.voice.marker and not ask.flat:
        return list(items(steps, ask.voice.marker))
    last = len(steps) - 1
    words = [("Finally, " if i == last and i else CONNECT[min(i, 3)]) for i in range(len(steps))]
    return list(prose((w + low(s) for w, s in zip(words, steps, strict=True)), 99, "\n\n"))


def respond_math(plan: Plan, ask: Ask) -> tuple[list[Block], Iterable[Block], list[Block]]:
    w, slips, student = plan.payload
    rnd, lead = ask.rnd, pick(ask.rnd, ask.voice.openers)
    wrong = "correctness" in ask.severe
    slip = student if plan.frame == _CHECK else pick(rnd, sorted(slips))
    shown = slips[slip] if wrong else w
    if plan.frame == _CHECK:
        answer = slips[student].answer
        intro = (f"Yes, {answer} is correct." if wrong else
                 f"No, {answer} is not correct. The mistake is in step {student + 1}, which "
                 f"should read: {w.steps[student]}")  # fmt: skip
    else:
        intro = pick(rnd, MATH_INTROS)
    head: list[Block] = [("", lead + intro, None)]
    if "efficiency" in ask.flaws:
        head.append(flaw_block("efficiency", plan.fill, MATH_FLAWS, rnd))
    head += _steps(ask, shown.steps[-1:] if "completeness" in ask.flaws else shown.steps)
    note = None
    if wrong:
        note = ("correctness", f"goes wrong in step {slip + 1} ('{shown.steps[slip]}'), so its "
                f"final answer {shown.answer} is off; it should be {w.answer}")  # fmt: skip
    head.append(("\n\n", f"So the answer is {shown.answer}.", note))
    slots = {**plan.slots, "answer": shown.answer}

    def filled(template: str) -> str:
        return fill(template, slots)

    rest = (flaw_block(k, filled, MATH_FLAWS, rnd) for k in plan.skills
            if k in ask.flaws and k != "efficiency")  # fmt: skip
    head += [b for b in rest if b]
    good = [MATH_GOOD[k] for k in plan.skills if k in ask.good and k in MATH_GOOD]
    per = 99 if ask.flat else ask.voice.per_paragraph
    per = 99 if ask.flat else ask.voice.per_paragraph
    why = rotated(rnd, WHY[plan.payload[0].kind])
    body = prose(good + why + rotated(rnd, MATH_NOTES, 4), per)
    close = fill(
        pick(rnd, ask.voice.closings),
        {**slots, "S": "the problem", "p": f"comes to {shown.answer}"},
    )
    return head, body, [("\n\n", cap(close), None)] if close else []

"""Worked word problems for the simulated demo's Math instructions (GSM8K / MATH-like).

A problem is a function of a seeded ``random.Random`` (its numbers) and ``slip``: the index of
a step that goes wrong, the way students' and models' answers go wrong (minutes read as
hundredths of an hour, simple instead of compound interest, the handshakes counted twice). Later
steps carry the wrong value on, so a low-scored response shows a visible wrong step and a wrong
final answer, while the reference and high-scored responses show the right ones.
"""

from __future__ import annotations

import dataclasses
import math
import random
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction


@dataclass(frozen=True)
class Worked:
    question: str
    steps: tuple[str, ...]
    answer: str
    subject: str  # what is being computed, for "... the {subject}"
    kind: str = ""  # the generator's name


_PEOPLE = (("Maya", "she"), ("Tom", "he"), ("Priya", "she"), ("Kenji", "he"), ("Amara", "she"),
           ("Luis", "he"), ("Sofia", "she"), ("Omar", "he"), ("Lena", "she"), ("Daniel", "he"),
           ("Aisha", "she"), ("Mateo", "he"), ("Hana", "she"), ("Felix", "he"))  # fmt: skip


def _off(x, on: bool):
    """A plausible arithmetic slip: off by ten (or one for small numbers), 10% on a decimal."""
    if not on:
        return x
    if isinstance(x, Fraction):
        return x + Fraction(1, x.denominator)
    if isinstance(x, int):
        return x + (10 if abs(x) >= 30 else 1)
    return round(x * 1.1, 2)


def _frac(x: Fraction) -> str:
    return str(x.numerator) if x.denominator == 1 else f"{x.numerator}/{x.denominator}"


def _change(r: random.Random, slip: int | None) -> Worked:
    (name, pron), n = r.choice(_PEOPLE), r.randint(3, 9)
    price = r.choice([1.25, 2.40, 3.75, 4.50, 6.20])
    item = r.choice(["notebooks", "coffees", "bus tickets", "postcards", "bags of apples"])
    note = 50 if n * price < 50 else 100
    total = _off(round(n * price, 2), slip == 0)
    change = _off(round(note - total, 2), slip == 1)
    q = (f"{name} buys {n} {item} at ${price:.2f} each and pays with a ${note} note. "
         f"How much change does {pron} get?")  # fmt: skip
    return Worked(q, (f"The {item} cost {n} × ${price:.2f} = ${total:.2f}.",
                      f"The change is ${note} − ${total:.2f} = ${change:.2f}."),
                  f"${change:.2f}", f"change {name} gets")  # fmt: skip


def _discount(r: random.Random, slip: int | None) -> Worked:
    item, price = r.choice(["jacket", "bicycle", "desk lamp", "pair of boots", "backpack"]), \
        r.choice([40, 60, 80, 120, 250])  # fmt: skip
    off, tax = r.choice([10, 15, 20, 25, 30]), r.choice([5, 8, 10])
    cut = _off(round(price * off / 100, 2), slip == 0)
    sale = round(price - cut, 2)
    added = _off(round(sale * tax / 100, 2), slip == 2)
    final = round(sale + added, 2)
    q = (f"A {item} costs ${price} before a {off}% discount. Sales tax of {tax}% is then added "
         "to the discounted price. What is the final price?")  # fmt: skip
    return Worked(q, (f"The discount is {off}% of ${price} = ${cut:.2f}.",
                      f"The discounted price is ${price} − ${cut:.2f} = ${sale:.2f}.",
                      f"The tax is {tax}% of ${sale:.2f} = ${added:.2f}.",
                      f"The final price is ${sale:.2f} + ${added:.2f} = ${final:.2f}."),
                  f"${final:.2f}", f"final price of the {item}")  # fmt: skip


def _speed(r: random.Random, slip: int | None) -> Worked:
    dist, h, m = r.randrange(60, 400, 10), r.randint(1, 4), r.choice([15, 30, 45])
    hours = h + m / (100 if slip == 0 else 60)  # the classic slip: minutes as hundredths
    speed = _off(round(dist / hours, 1), slip == 1)
    span = f"{h} hour{'' if h == 1 else 's'}"
    q = (f"A train covers {dist} km in {span} and {m} minutes. What is its average speed in "
         "km/h?")  # fmt: skip
    return Worked(q, (f"{span} {m} minutes is {hours:g} hours.",
                      f"Average speed = {dist} km ÷ {hours:g} h ≈ {speed:g} km/h."),
                  f"about {speed:g} km/h", "train's average speed")  # fmt: skip


def _interest(r: random.Random, slip: int | None) -> Worked:
    principal, rate, years = r.choice([1000, 2500, 5000, 8000]), r.randint(3, 6), r.randint(2, 5)
    factor = 1 + rate * years / 100 if slip == 0 else (1 + rate / 100) ** years  # 0: simple
    amount = _off(round(principal * factor, 2), slip == 1)
    q = (f"You deposit ${principal:,} at {rate}% interest compounded yearly. How much is in the "
         f"account after {years} years?")  # fmt: skip
    return Worked(q, (f"The growth factor is 1.0{rate}^{years} = {factor:.4f}.",
                      f"The balance is ${principal:,} × {factor:.4f} = ${amount:,.2f}."),
                  f"${amount:,.2f}", "balance after compounding")  # fmt: skip


def _average(r: random.Random, slip: int | None) -> Worked:
    while True:
        marks, target = [r.randint(60, 95) for _ in range(4)], r.randint(70, 90)
        need = 5 * target - sum(marks)
        if 50 <= need <= 100:
            break
    whole = _off(5 * target, slip == 0)
    got = _off(sum(marks), slip == 1)
    q = (f"Sam's first four test scores are {', '.join(map(str, marks))}. What score does Sam "
         f"need on the fifth test to average exactly {target}?")  # fmt: skip
    return Worked(q, (f"An average of {target} over 5 tests needs 5 × {target} = {whole} points.",
                      f"So far Sam has {' + '.join(map(str, marks))} = {got}.",
                      f"Sam needs {whole} − {got} = {whole - got}."),
                  str(whole - got), "score Sam needs")  # fmt: skip


def _equation(r: random.Random, slip: int | None) -> Worked:
    a, x, b = r.randint(2, 9), r.randint(-10, 15), r.choice([-17, -8, -5, 3, 7, 12, 19, 26])
    c = a * x + b
    rhs = c + b if slip == 0 else c - b  # 0: the sign slip when moving b across
    sol = _off(Fraction(rhs, a), slip == 1)
    sign = f"+ {b}" if b > 0 else f"− {-b}"
    return Worked(f"Solve for x: {a}x {sign} = {c}.",
                  (f"Move {b} to the right-hand side: {a}x = {c} − ({b}) = {rhs}.",
                   f"Divide both sides by {a}: x = {_frac(sol)}."),
                  f"x = {_frac(sol)}", "value of x")  # fmt: skip


def _fence(r: random.Random, slip: int | None) -> Worked:
    length, width, cost = r.randint(8, 30), r.randint(5, 20), r.choice([12, 15, 18, 24])
    perim = length + width if slip == 0 else 2 * (length + width)  # 0: forgot the doubling
    total = _off(perim * cost, slip == 1)
    q = (f"A rectangular garden is {length} m long and {width} m wide. Fencing costs ${cost} per "
         "metre. How much does it cost to fence the whole garden?")  # fmt: skip
    return Worked(q, (f"The perimeter is 2 × ({length} + {width}) = {perim} m.",
                      f"The fence costs {perim} m × ${cost} = ${total:,}."),
                  f"${total:,}", "cost of the fence")  # fmt: skip


def _marbles(r: random.Random, slip: int | None) -> Worked:
    red, blue = r.randint(3, 8), r.randint(2, 7)
    n = red + blue
    second = Fraction(red, n) if slip == 1 else Fraction(red - 1, n - 1)  # 1: as if replaced
    both = Fraction(red, n) * second
    q = (f"A bag holds {red} red and {blue} blue marbles. Two are drawn without replacement. "
         "What is the probability that both are red?")  # fmt: skip
    return Worked(q, (f"The first marble is red with probability {red}/{n}.",
                      f"Then {red - 1} of the remaining {n - 1} are red: {_frac(second)}.",
                      f"Both red: {red}/{n} × {_frac(second)} = {_frac(both)}."),
                  _frac(both), "probability of two red marbles")  # fmt: skip


def _pipes(r: random.Random, slip: int | None) -> Worked:
    a, b = r.choice([(2, 3), (3, 6), (4, 12), (6, 12), (3, 4), (5, 20), (6, 3)])
    rate = Fraction(2, a + b) if slip == 1 else Fraction(1, a) + Fraction(1, b)  # 1: a/b + c/d
    hours = 1 / rate
    q = (f"One pipe fills a tank in {a} hours and another in {b} hours. How long do they take "
         "together?")  # fmt: skip
    return Worked(q, (f"The pipes fill 1/{a} and 1/{b} of the tank per hour.",
                      f"Together: 1/{a} + 1/{b} = {_frac(rate)} of the tank per hour.",
                      f"Time = 1 ÷ {_frac(rate)} = {_frac(hours)} hours "
                      f"({round(float(hours) * 60)} minutes)."),
                  f"{_frac(hours)} hours", "time to fill the tank")  # fmt: skip


def _ratio(r: random.Random, slip: int | None) -> Worked:
    parts = r.choice([(2, 3), (1, 4), (3, 5), (2, 3, 5), (1, 2, 3)])
    total_parts = sum(parts)
    amount = total_parts * r.randint(20, 150)
    one = _off(amount // total_parts, slip == 1)
    shares = [one * p for p in parts]
    q = (f"${amount:,} is shared in the ratio {':'.join(map(str, parts))}. How much is the "
         "largest share?")  # fmt: skip
    return Worked(q, (f"There are {' + '.join(map(str, parts))} = {total_parts} parts.",
                      f"One part is ${amount:,} ÷ {total_parts} = ${one:,}.",
                      f"The shares are {', '.join(f'${s:,}' for s in shares)}."),
                  f"${max(shares):,}", "largest share")  # fmt: skip


def _growth(r: random.Random, slip: int | None) -> Worked:
    before = r.randint(20, 90)
    after = before + r.choice([-1, 1]) * r.randint(3, 25)
    base = after if slip == 1 else before  # 1: divides by the new value
    pct = _off(round((after - before) / base * 100, 1), slip == 2)
    q = (f"A company's revenue went from ${before} million to ${after} million. What was the "
         "percentage change?")  # fmt: skip
    return Worked(q, (f"The change is {after} − {before} = {after - before} million.",
                      f"Relative to the starting value: {after - before} ÷ {base} = "
                      f"{(after - before) / base:.4f}.", f"As a percentage: {pct:+.1f}%."),
                  f"{pct:+.1f}%", "percentage change in revenue")  # fmt: skip


def _ladder(r: random.Random, slip: int | None) -> Worked:
    scale = r.randint(1, 2)
    base, _, ladder = (
        scale * s
        for s in r.choice(
            [(3, 4, 5), (5, 12, 13), (8, 15, 17), (7, 24, 25), (4, 3, 5), (12, 5, 13)]
        )
    )
    sq = ladder**2 + base**2 if slip == 0 else ladder**2 - base**2  # 0: added the squares
    top = _off(round(math.sqrt(sq), 2), slip == 1)
    q = (f"A {ladder} m ladder leans against a wall with its foot {base} m from the wall. How "
         "high up the wall does it reach?")  # fmt: skip
    return Worked(
        q,
        (f"By Pythagoras, h² = {ladder}² − {base}² = {sq}.", f"h = √{sq} = {top:g} m."),
        f"{top:g} m",
        "height the ladder reaches",
    )


def _handshakes(r: random.Random, slip: int | None) -> Worked:
    n = r.randint(6, 30)
    pairs = n * (n - 1) if slip == 1 else n * (n - 1) // 2  # 1: each counted twice
    q = f"At a meeting, each of {n} people shakes hands once with every other person. How " \
        "many handshakes are there?"  # fmt: skip
    return Worked(q, (f"Each person shakes {n - 1} hands, giving {n} × {n - 1} = {n * (n - 1)}.",
                      f"Each handshake was counted twice, so there are {pairs}."),
                  str(pairs), "number of handshakes")  # fmt: skip


def _recipe(r: random.Random, slip: int | None) -> Worked:
    serves, want = r.choice([4, 6, 8]), r.choice([3, 5, 10, 12])
    per = r.choice([45, 60, 75, 90])
    flour = per * serves
    each = _off(flour // serves, slip == 0)
    total = _off(each * want, slip == 1)
    q = (f"A recipe for {serves} people uses {flour} g of flour. How much flour is needed for "
         f"{want} people?")  # fmt: skip
    return Worked(q, (f"Per person: {flour} g ÷ {serves} = {each} g.",
                      f"For {want} people: {each} g × {want} = {total} g."),
                  f"{total} g", "amount of flour")  # fmt: skip


GENERATORS: tuple[Callable[[random.Random, int | None], Worked], ...] = (
    _change, _discount, _speed, _interest, _average, _equation, _fence, _marbles, _pipes,
    _ratio, _growth, _ladder, _handshakes, _recipe,
)  # fmt: skip


def worked(kind: int, rnd: random.Random, slip: int | None = None) -> Worked:
    """Problem ``kind`` with numbers drawn from ``rnd``; ``slip`` = the step that goes wrong."""
    gen = GENERATORS[kind]
    return dataclasses.replace(gen(rnd, slip), kind=gen.__name__.strip("_"))


def variants(kind: int, rnd: random.Random) -> tuple[Worked, dict[int, Worked]]:
    """The right solution, and per step the solution that slips there (the same numbers:
    ``rnd`` is rewound for each), for the slips that change the final answer (some cancel
    out on some numbers)."""
    state = rnd.getstate()
    right = worked(kind, rnd)
    wrong = {}
    for k in range(len(right.steps)):
        rnd.setstate(state)
        wrong[k] = worked(kind, rnd, k)
    return right, {k: w for k, w in wrong.items() if w.answer != right.answer}

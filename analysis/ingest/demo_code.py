"""Programming problems for the simulated demo's Coding instructions (MBPP / HumanEval-like).

Each problem is real, runnable Python: a correct solution, a one-line bug with the input it
fails on and what it returns there, the guard lines that handle the edge case (a robustness
flaw drops them), sometimes a slower variant, and test cases. Responses show one of these
variants according to the simulated scores, so a judge's note like "fails on [5, 5, 3]" is true
of the code shown.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Problem:
    name: str
    params: str  # the signature after the name, e.g. "(nums: list[int]) -> int | None"
    task: str  # "returns …": completes "a function that …"
    code: tuple[str, ...]
    bug: tuple[int, str, str, str, str]  # (line, replacement, what it does, call, bad result)
    cases: tuple[tuple[str, str], ...]  # (call, expected repr); the last one is the edge case
    edge: str  # the edge case, as "for …" / "when …"
    how: tuple[str, str]  # two sentences on how the solution works
    cost: str  # time complexity, "O(…) time …"
    guard: tuple[int, ...] = ()  # lines that handle the edge case
    slow: tuple[int, str, str] | None = None  # (line, replacement, why it is slow)

    @property
    def signature(self) -> str:
        return self.name + self.params

    def lines(self, *, bug: bool = False, guard: bool = True, slow: bool = False) -> str:
        out = list(self.code)
        if bug:
            out[self.bug[0]] = self.bug[1]
        if slow and self.slow:
            out[self.slow[0]] = self.slow[1]
        if not guard:
            out = [line for i, line in enumerate(out) if i not in self.guard]
        return "\n".join(out)


def _p(name: str, params: str, task: str, code: str, bug: tuple, cases: str, edge: str,
       how: str, cost: str, guard: tuple[int, ...] = (),
       slow: tuple | None = None) -> Problem:  # fmt: skip
    """Cases as "call == expected ;; …"; ``how`` as two sentences without the final stop."""
    pairs = tuple(tuple(c.split(" == ")) for c in cases.split(" ;; "))
    first, second = how.split(". ", 1)
    return Problem(name, params, task, tuple(code.strip("\n").splitlines()), bug, pairs, edge,
                   (first + ".", second + "."), cost, guard, slow)  # fmt: skip


PROBLEMS = (
    _p("second_largest", "(nums: list[int]) -> int | None",
       "returns the second largest distinct value in a list, or None when there is none", """
def second_largest(nums: list[int]) -> int | None:
    distinct = set(nums)
    if len(distinct) < 2:
        return None
    return sorted(distinct)[-2]
""", (4, "    return sorted(nums)[-2]", "sorts the original list, so a repeated maximum comes "
          "back as the second largest", "second_largest([5, 5, 3])", "5"),
       "second_largest([4, 1, 7, 7, 3]) == 4 ;; second_largest([-2, -9]) == -9 ;; "
       "second_largest([5, 5]) == None", "when the list has fewer than two distinct values",
       "It first removes duplicates with a set. Sorting the distinct values then puts the "
       "answer second from the end", "O(n log n) time because of the sort", guard=(2, 3)),
    _p("is_palindrome", "(text: str) -> bool",
       "tells whether a string reads the same backwards, ignoring case and punctuation", """
def is_palindrome(text: str) -> bool:
    chars = [c.lower() for c in text if c.isalnum()]
    return chars == chars[::-1]
""", (1, "    chars = [c.lower() for c in text]", "keeps spaces and punctuation, so "
          "normal sentences are never palindromes", 'is_palindrome("Was it a cat I saw?")',
          "False"),
       'is_palindrome("A man, a plan, a canal: Panama") == True ;; is_palindrome("hello") == '
       'False ;; is_palindrome("") == True', "for an empty string",
       "It keeps only letters and digits, lower-cased. A palindrome is then a list equal to its "
       "own reverse", "O(n) time and O(n) extra space"),
    _p("top_words", "(text: str, k: int) -> list[tuple[str, int]]",
       "returns the k most common words in a text with their counts, ignoring case", """
from collections import Counter


def top_words(text: str, k: int) -> list[tuple[str, int]]:
    counts = Counter(text.lower().split())
    return counts.most_common(k)
""", (4, "    counts = Counter(text.split())", "counts 'The' and 'the' as different words",
          'top_words("The cat saw the dog", 1)', "[('The', 1)]"),
       "top_words(\"the cat and the hat\", 1) == [('the', 2)] ;; top_words(\"A a b\", 1) == "
       "[('a', 2)] ;; top_words(\"\", 3) == []", "for an empty text",
       "`Counter` tallies the lower-cased words in one pass. `most_common(k)` then picks the k "
       "largest counts", "O(n) time to count plus O(m log k) to pick the top k of m words"),
    _p("merge_intervals", "(intervals: list[tuple[int, int]]) -> list[tuple[int, int]]",
       "merges overlapping intervals and returns them sorted", """
def merge_intervals(intervals: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for start, end in sorted(intervals):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged
""", (4, "            merged[-1] = (merged[-1][0], end)", "shrinks an interval when the next one "
          "lies inside it", "merge_intervals([(1, 10), (2, 3)])", "[(1, 3)]"),
       "merge_intervals([(1, 3), (2, 6), (8, 10)]) == [(1, 6), (8, 10)] ;; merge_intervals(["
       "(1, 10), (2, 3)]) == [(1, 10)] ;; merge_intervals([]) == []", "for an empty list",
       "Sorting puts overlapping intervals next to each other. One pass then either extends the "
       "last merged interval or starts a new one", "O(n log n) time for the sort"),
    _p("fizzbuzz", "(n: int) -> list[str]",
       "returns the FizzBuzz sequence from 1 to n as strings", """
def fizzbuzz(n: int) -> list[str]:
    out = []
    for i in range(1, n + 1):
        if i % 15 == 0:
            out.append("FizzBuzz")
        elif i % 3 == 0:
            out.append("Fizz")
        elif i % 5 == 0:
            out.append("Buzz")
        else:
            out.append(str(i))
    return out
""", (2, "    for i in range(1, n):", "stops one number early, so n itself is missing",
          "fizzbuzz(3)", "['1', '2']"),
       "fizzbuzz(5) == ['1', '2', 'Fizz', '4', 'Buzz'] ;; fizzbuzz(15)[-1] == 'FizzBuzz' ;; "
       "fizzbuzz(0) == []", "for n = 0",
       "It checks divisibility by 15 first, so multiples of both 3 and 5 get 'FizzBuzz'. Every "
       "other number is kept as its string", "O(n) time"),
    _p("binary_search", "(items: list[int], target: int) -> int",
       "returns the index of target in a sorted list, or -1 if it is absent", """
def binary_search(items: list[int], target: int) -> int:
    lo, hi = 0, len(items) - 1
    while lo <= hi:
        mid = (lo + hi) // 2
        if items[mid] == target:
            return mid
        if items[mid] < target:
            lo = mid + 1
        else:
            hi = mid - 1
    return -1
""", (2, "    while lo < hi:", "stops before checking the last remaining element",
          "binary_search([2], 2)", "-1"),
       "binary_search([1, 3, 5, 7], 7) == 3 ;; binary_search([2], 2) == 0 ;; "
       "binary_search([], 4) == -1", "for an empty list",
       "It keeps a window [lo, hi] that must contain the target if it is present. Each step "
       "halves the window by comparing with the middle element", "O(log n) time"),
    _p("flatten", "(nested: list) -> list",
       "flattens arbitrarily nested lists into one flat list", """
def flatten(nested: list) -> list:
    flat = []
    for item in nested:
        if isinstance(item, list):
            flat.extend(flatten(item))
        else:
            flat.append(item)
    return flat
""", (4, "            flat.append(flatten(item))", "appends each flattened sublist as one "
          "item, so the nesting survives", "flatten([1, [2, 3]])", "[1, [2, 3]]"),
       "flatten([1, [2, [3, 4]], 5]) == [1, 2, 3, 4, 5] ;; flatten([[], [1]]) == [1] ;; "
       "flatten([]) == []", "for empty sublists",
       "It walks the list and recurses into every item that is itself a list. Plain items are "
       "appended in order", "O(n) time in the total number of items"),
    _p("count_vowels", "(text: str) -> int", "counts the vowels in a string, in either case", """
def count_vowels(text: str) -> int:
    return sum(1 for ch in text.lower() if ch in "aeiou")
""", (1, '    return sum(1 for ch in text if ch in "aeiou")', "ignores capital vowels",
          'count_vowels("Education")', "4"),
       'count_vowels("Education") == 5 ;; count_vowels("rhythm") == 0 ;; count_vowels("") '
       "== 0", "for an empty string",
       "It lower-cases the text once so capitals count too. A generator expression then adds 1 "
       "for every vowel", "O(n) time"),
    _p("moving_average", "(values: list[float], window: int) -> list[float]",
       "returns the moving averages of a list over a fixed window", """
def moving_average(values: list[float], window: int) -> list[float]:
    if window <= 0:
        raise ValueError("window must be positive")
    out, total = [], 0.0
    for i, v in enumerate(values):
        total += v
        if i >= window:
            total -= values[i - window]
        if i >= window - 1:
            out.append(total / window)
    return out
""", (6, "        if i > window:", "drops old values one step too late",
          "moving_average([1, 2, 3], 2)", "[1.5, 3.0]"),
       "moving_average([1, 2, 3, 4], 2) == [1.5, 2.5, 3.5] ;; moving_average([2, 4], 1) == "
       "[2.0, 4.0] ;; moving_average([5], 3) == []", "when the window is longer than the list",
       "It keeps a running total, adding each new value and subtracting the one that leaves the "
       "window. An average is emitted once the window is full",
       "O(n) time, since each value is added and removed once", guard=(1, 2)),
    _p("is_prime", "(n: int) -> bool", "tells whether an integer is prime", """
def is_prime(n: int) -> bool:
    if n < 2:
        return False
    for d in range(2, int(n ** 0.5) + 1):
        if n % d == 0:
            return False
    return True
""", (3, "    for d in range(2, int(n ** 0.5)):", "never tries the square root itself, so "
          "squares of primes pass", "is_prime(25)", "True"),
       "is_prime(97) == True ;; is_prime(25) == False ;; is_prime(1) == False",
       "for 0, 1 and negative numbers",
       "Numbers below 2 are not prime. Otherwise it tries every divisor up to the square root, "
       "since a larger factor would pair with a smaller one", "O(sqrt(n)) time", guard=(1, 2)),
    _p("reverse_words", "(sentence: str) -> str",
       "reverses the order of the words in a sentence", """
def reverse_words(sentence: str) -> str:
    return " ".join(reversed(sentence.split()))
""", (1, "    return sentence[::-1]", "reverses the characters instead of the words",
          'reverse_words("hello world")', "'dlrow olleh'"),
       'reverse_words("the quick fox") == "fox quick the" ;; reverse_words("  hello   world ") '
       '== "world hello" ;; reverse_words("") == ""', "for extra spaces or an empty string",
       "`split()` without arguments drops repeated spaces. The words are then joined back in "
       "reverse order", "O(n) time"),
    _p("group_anagrams", "(words: list[str]) -> list[list[str]]",
       "groups words that are anagrams of each other, keeping first-seen order", """
def group_anagrams(words: list[str]) -> list[list[str]]:
    groups: dict[str, list[str]] = {}
    for word in words:
        key = "".join(sorted(word.lower()))
        groups.setdefault(key, []).append(word)
    return list(groups.values())
""", (3, "        key = str(len(word))", "groups words by length, so 'cat' and 'dog' end up "
          "together", 'group_anagrams(["cat", "dog"])', "[['cat', 'dog']]"),
       'group_anagrams(["eat", "tea", "tan", "ate", "nat"]) == [["eat", "tea", "ate"], ["tan", '
       '"nat"]] ;; group_anagrams(["Listen", "silent"]) == [["Listen", "silent"]] ;; '
       "group_anagrams([]) == []", "for an empty list",
       "Anagrams share the same letters, so their sorted letters form a common key. A dict "
       "keeps one group per key in first-seen order", "O(n k log k) time for n words of length k"),
    _p("is_balanced", "(s: str) -> bool", "checks that brackets in a string are balanced", """
def is_balanced(s: str) -> bool:
    pairs = {")": "(", "]": "[", "}": "{"}
    stack = []
    for ch in s:
        if ch in "([{":
            stack.append(ch)
        elif ch in pairs:
            if not stack or stack.pop() != pairs[ch]:
                return False
    return not stack
""", (9, "    return True", "ignores brackets left open at the end", 'is_balanced("((")', "True"),
       'is_balanced("{[()]}") == True ;; is_balanced("(]") == False ;; is_balanced("((") == '
       "False", "when brackets are left open",
       "Opening brackets go on a stack. Each closing bracket must match the most recent open "
       "one, and the stack must be empty at the end", "O(n) time and O(n) space"),
    _p("chunk", "(items: list, size: int) -> list[list]",
       "splits a list into consecutive chunks of a given size", """
def chunk(items: list, size: int) -> list[list]:
    if size < 1:
        raise ValueError("size must be at least 1")
    return [items[i:i + size] for i in range(0, len(items), size)]
""", (3, "    return [items[i:i + size] for i in range(0, len(items) - size, size)]",
          "drops the last chunk", "chunk([1, 2, 3, 4, 5], 2)", "[[1, 2], [3, 4]]"),
       "chunk([1, 2, 3, 4, 5], 2) == [[1, 2], [3, 4], [5]] ;; chunk([1, 2], 5) == [[1, 2]] ;; "
       "chunk([], 3) == []", "for a size of zero or less",
       "`range` steps through the start index of every chunk. Slicing past the end is safe in "
       "Python, so the last chunk may be shorter", "O(n) time", guard=(1, 2)),
    _p("roman_to_int", "(s: str) -> int", "converts a Roman numeral to an integer", """
def roman_to_int(s: str) -> int:
    values = {"I": 1, "V": 5, "X": 10, "L": 50, "C": 100, "D": 500, "M": 1000}
    total = 0
    for i, ch in enumerate(s):
        if i + 1 < len(s) and values[ch] < values[s[i + 1]]:
            total -= values[ch]
        else:
            total += values[ch]
    return total
""", (4, "        if i + 1 < len(s) and values[ch] <= values[s[i + 1]]:", "subtracts equal "
          "neighbours too", 'roman_to_int("III")', "-1"),
       'roman_to_int("MCMXCIV") == 1994 ;; roman_to_int("LVIII") == 58 ;; roman_to_int("") == '
       "0", "for an empty string",
       "A numeral smaller than the one after it is subtracted, as in IV or CM. Every other "
       "numeral is added", "O(n) time"),
    _p("unique_in_order", "(items: list) -> list",
       "removes duplicates from a list while keeping the first occurrence of each item", """
def unique_in_order(items: list) -> list:
    seen = set()
    out = []
    for item in items:
        if item not in seen:
            seen.add(item)
            out.append(item)
    return out
""", (7, "    return sorted(out)", "sorts the result, so the original order is lost",
          "unique_in_order([3, 1, 3])", "[1, 3]"),
       "unique_in_order([3, 1, 3, 2, 1]) == [3, 1, 2] ;; unique_in_order(['b', 'a']) == "
       "['b', 'a'] ;; unique_in_order([]) == []", "for an empty list",
       "A set remembers what has been seen, so each check is constant time. The output list "
       "keeps the order of first appearance", "O(n) time",
       slow=(4, "        if item not in out:", "scans the output list on every check and "
             "makes the function quadratic")),
    _p("days_between", "(start: str, end: str) -> int",
       "returns the number of days between two ISO dates, whichever comes first", """
from datetime import date


def days_between(start: str, end: str) -> int:
    d1, d2 = date.fromisoformat(start), date.fromisoformat(end)
    return abs((d2 - d1).days)
""", (5, "    return (d2 - d1).days", "returns a negative number when the end comes first",
          'days_between("2024-01-10", "2024-01-01")', "-9"),
       'days_between("2024-02-27", "2024-03-01") == 3 ;; days_between("2024-01-10", '
       '"2024-01-01") == 9 ;; days_between("2024-05-05", "2024-05-05") == 0',
       "when both dates are the same",
       "`date.fromisoformat` parses both strings, leap years included. Subtracting gives a "
       "timedelta whose days are made positive with `abs`", "O(1) time"),
    _p("lcm", "(a: int, b: int) -> int", "returns the least common multiple of two integers", """
import math


def lcm(a: int, b: int) -> int:
    if a == 0 or b == 0:
        return 0
    return abs(a * b) // math.gcd(a, b)
""", (6, "    return a * b // math.gcd(a, b)", "returns a negative multiple for a negative "
          "argument", "lcm(-4, 6)", "-12"),
       "lcm(4, 6) == 12 ;; lcm(-4, 6) == 12 ;; lcm(0, 5) == 0", "when an argument is zero",
       "The product of two numbers equals their gcd times their lcm. Dividing the absolute "
       "product by the gcd therefore gives the lcm", "O(log min(a, b)) time for the gcd",
       guard=(4, 5)),
)  # fmt: skip

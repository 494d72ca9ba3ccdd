"""Phrases of the simulated demo's worked genres (code and math): what an instruction asks
per skill, how a weak response shows each flaw (when not in the work itself), what a strong
one adds, and the remarks that carry a longer answer.
"""

from __future__ import annotations

ASKS = {
    "code": {
        "robustness": "Make sure it handles the case {edge}.",
        "efficiency": "Keep it efficient for large inputs.",
        "readability": "Use clear names, and comments where they help.",
        "conciseness": "Keep the explanation short.", "correctness": "It must be correct for "
        "every valid input.", "completeness": "Include a short explanation and an example.",
        "metacognition": "Mention any assumptions you make.",
        "comprehension": "Follow the signature exactly.",
        "harmlessness": "Assume the input may come from users.",
        "factuality": "Be accurate about how the Python features you use behave.",
        "commonsense": "Keep it practical for real code.",
        "insightfulness": "Mention a trade-off or an alternative approach.",
    },
    "math": {
        "robustness": "Check that your answer makes sense.",
        "efficiency": "Use the most direct method.",
        "readability": "Put each step on its own line.", "conciseness": "Keep it short.",
        "correctness": "Give the exact final answer.", "completeness": "Show every step.",
        "metacognition": "State any assumption you make.",
        "comprehension": "Answer exactly the question asked.",
        "harmlessness": "Keep the example realistic.", "factuality": "Use standard formulas.",
        "commonsense": "Make sure the answer is realistic.",
        "insightfulness": "Mention a quick way to check the result.",
    },
}  # fmt: skip
_NONE = ("", "")
CODE_FLAWS = {
    "correctness": _NONE, "robustness": _NONE,
    "efficiency": ("Before writing any code, let me restate the task: we need a function that "
                   "takes an input and returns an output.", "spends its opening restating the "
                   "task in vague terms"),
    "completeness": ("", "gives the code with no explanation or example"),
    "readability": ("", "crams the whole explanation into one dense paragraph"),
    "conciseness": ("As you can see, the function {task}, which is exactly what it does.",
                    "repeats what the code already shows"),
    "comprehension": ("If you need the same thing in JavaScript, the logic carries over with "
                      "small changes.", "drifts to JavaScript, which was not asked about"),
    "factuality": ("Note that Python sets keep their elements in insertion order.",
                   "claims that Python sets keep insertion order, which they do not guarantee"),
    "metacognition": ("This code is guaranteed to be bug-free.",
                      "claims the code is guaranteed bug-free without any testing"),
    "insightfulness": ("This is a straightforward function.", "offers nothing beyond the code"),
    "commonsense": ("For large inputs you can always just buy a faster computer.",
                    "waves performance away with 'buy a faster computer'"),
    "harmlessness": ("It is fine to pass user input straight into this without any checks.",
                     "encourages passing user input on without validation"),
}  # fmt: skip
NO_GUARD = (
    "It assumes the input is always well-formed, so special cases need no thought.",
    "never considers what happens {edge}",
)
MATH_FLAWS = {
    "correctness": _NONE, "harmlessness": _NONE,
    "completeness": ("", "jumps to the result without showing how {S} is worked out"),
    "readability": ("", "runs all the steps together in one paragraph"),
    "conciseness": ("To repeat: {answer} is the result, as computed above.",
                    "states the answer twice over"),
    "robustness": ("This method works for any problem of this kind without changes.",
                   "claims the method works unchanged for any similar problem"),
    "factuality": ("(Percentages of different amounts can simply be added together.)",
                   "adds a false rule of thumb: percentages of different amounts cannot simply "
                   "be added"),
    "comprehension": ("A similar question is how long it would take to save this amount, which "
                      "depends on your income.", "wanders into a question that was not asked"),
    "commonsense": ("In practice you would round this to the nearest hundred.",
                    "suggests rounding to the nearest hundred, which makes no sense here"),
    "metacognition": ("I am completely certain this is right, so there is no need to check it.",
                      "claims complete certainty and skips any check"),
    "insightfulness": ("This is a standard problem with a standard answer.",
                       "adds nothing beyond the bare calculation"),
}  # fmt: skip
MATH_GOOD = {
    "robustness": "As a check, the result has the right units and a sensible size.",
    "metacognition": "I rounded only at the end, so the last digit should be reliable.",
    "insightfulness": "A quick estimate gives a similar figure, which is a useful sanity check.",
    "completeness": "Each step uses only numbers given in the problem or computed above.",
}
CODE_NOTES = (
    "Type hints make the expected input and output clear.",
    "The function has no side effects, so it is easy to test.",
    "If performance matters, measure with realistic input sizes before optimising.",
    "Keeping the edge cases at the top of the function makes the main logic easier to read.",
    "A docstring with one example is often the quickest documentation.",
    "pytest's plain assert statements give readable failure messages.",
    "For production use, a clear error on invalid input beats a confusing failure later.",
    "Returning a new list rather than changing the input avoids surprises for the caller.",
    "A property-based test, for example with Hypothesis, can find edge cases automatically.",
    "Descriptive variable names make the intent clear without comments.",
    "The standard library covers many tasks like this; it is worth checking before writing "
    "your own.",
    "Profiling before optimising shows where the time actually goes.",
)
MATH_NOTES = (
    "Writing the units next to every number avoids mixing them up.",
    "Keeping full precision until the last step avoids rounding errors.",
    "Estimating first catches most slips: the answer should be in the right ballpark.",
    "Working backwards from the result is a quick way to check it.",
    "Labelling each intermediate result makes the solution easy to follow.",
    "With a result in hand, it is worth rereading the question to be sure it was the one asked.",
    "A quick sketch often makes the structure of a word problem clearer.",
    "One operation per step keeps mistakes easy to spot.",
    "The method matters more than the numbers: the same steps work with other values.",
    "A calculator helps with the arithmetic, but the setup is where most errors happen.",
)
# Per problem kind: why the method works, what to watch for.
WHY = {
    "change": ("Change is what is left of the note after paying, so it must be less than the "
               "note.", "Multiplying first and subtracting second follows the order the money "
               "moves in.", "Rounding to cents only at the end avoids a one-cent error."),
    "discount": ("The tax applies to the discounted price, not the original one.",
                 "Taking a discount off and then adding tax is not the same as one combined "
                 "percentage.", "Working in dollars at each step makes the result easy to "
                 "check against a receipt."),
    "speed": ("Average speed is total distance divided by total time.",
              "Minutes must be converted to hours first: 15 minutes is 0.25 hours, not 0.15.",
              "The result is an average; the train may have gone faster or slower on the way."),
    "interest": ("Compound interest earns interest on earlier interest, so it grows faster "
                 "than simple interest.", "The growth factor is applied once per year, hence "
                 "the power.", "A bank that compounds monthly would pay slightly more."),
    "average": ("An average of five scores is their total divided by five, so the total is "
                "what matters.", "A required score above 100 would mean the target is out "
                "of reach.", "The same method works for any number of tests."),
    "equation": ("Whatever is done to one side of the equation must be done to the other.",
                 "Substituting the answer back into the equation is the quickest check.",
                 "Moving a negative number across the equals sign is where sign errors creep "
                 "in."),
    "fence": ("Fencing runs around the edge, so the perimeter matters, not the area.",
              "A rectangle has two lengths and two widths, hence the factor of 2.",
              "In practice you might buy a little extra for a gate or waste."),
    "marbles": ("Without replacement, the second draw has one marble fewer in the bag.",
                "Multiplying is valid because each draw is conditioned on the one before.",
                "With replacement the answer would be larger, since the red marble goes "
                "back."),
    "pipes": ("Rates add when the pipes work together; times do not.",
              "Thinking in the fraction of the tank filled per hour avoids guesswork.",
              "Together they must be faster than either pipe on its own."),
    "ratio": ("A ratio splits the whole into equal parts, so the first job is to count them.",
              "The shares must add back up to the original amount.",
              "The largest share goes with the largest number in the ratio."),
    "growth": ("Percentage change is measured against the starting value.",
               "A negative result means the revenue fell.",
               "Dividing by the new value instead is a common slip."),
    "ladder": ("The ladder, the wall and the ground form a right-angled triangle with the "
               "ladder as its hypotenuse.", "The height must come out shorter than the "
               "ladder.", "Subtracting the squares, not adding them, gives a shorter side."),
    "handshakes": ("Each handshake involves two people, which is why the product counts "
                   "everything twice.", "This is the number of ways to choose 2 people out "
                   "of n.", "For 2 people the formula gives 1, as it should."),
    "recipe": ("Scaling a recipe keeps the amount per person the same.",
               "Working out the amount per person first makes any number of servings easy.",
               "Small amounts like spices may not scale exactly in practice."),
}  # fmt: skip
CALLS = (
    "Calling `{call}` gives `{exp}`.",
    "For instance, `{call}` evaluates to `{exp}`.",
    "You can check that `{call}` returns `{exp}`.",
    "As a quick check, `{call}` should be `{exp}`.",
)
BUG_INTROS = (
    "The bug is in this line:",
    "The problem is this line:",
    "This line is the culprit:",
    "Here is the faulty line:",
)
TEST_INTROS = (
    "Here are some tests:",
    "These pytest tests cover the main cases:",
    "A small test module:",
    "Tests for the typical and the edge cases:",
)
CODE_INTROS = (
    "Here is one way to write it:",
    "Here's an implementation:",
    "You can write it like this:",
    "Here is a straightforward solution:",
)
MATH_INTROS = (
    "Let's work through it.",
    "Here is the step-by-step solution.",
    "We can solve this in a few steps.",
    "Step by step:",
)
CONNECT = ("First, ", "Then ", "Next, ", "After that, ")

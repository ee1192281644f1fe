"""Search SmolLM2's shipped weights for the sentence of the last lesson step (issue 40).

    python -m tools.find_flip                 # every candidate, best flips last
    python -m tools.find_flip --limit 40      # the first 40 candidates only (a quick look)
    python -m tools.find_flip --family names  # another kind of sentence (days, cities, ...)
    python -m tools.find_flip --texts "When Lisa and Tom went to the store, Lisa gave a drink to|Tom"

The step ("On a real model, the estimate misses a head too") opens the head that the fast
estimate calls unimportant (|estimate| < UNIMPORTANT) whose real removal costs the answer most,
and asks what its ablation does. A good sentence for it:

1. is answered right to begin with: the model's top next token is the right one (the day the
   event moved to, the other name, ...) and leads the runner-up clearly;
2. flips: with that head ablated the top answer is another token;
3. flips decisively: the new top answer leads the runner-up by a clear margin (the step's
   verdict names one answer, not a near tie).

The families (--family): "days", a day that moved ("The EVENT was on OLD. It moved to NEW. The
EVENT is on", and two variants); "cities" and "colours", a fact replaced; "names" and "names2",
two people and an act of the first towards the second ("When A and B went to the store, A gave a
drink to" -> B). The rule is the step's own (`model_lessons.quiet_head`), so what this prints is
what the step opens. Each sentence that passes 1 and 2 is printed as found, then the best by the
smaller of the lead before and the margin after; docs/lessons.md records the choice.
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time

from app.lessons import model_lessons
from app.state import attribution_runs, model_runs
from engine import trained

EVENTS = ("game", "meeting", "party", "concert", "match", "trip", "dinner", "exam", "show")
DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
TEMPLATES = (
    "The {event} was on {old}. It moved to {new}. The {event} is on",
    "The {event} was on {old}. It moved to {new}. So the {event} is on",
    "The {event} was on {old}. It moved to {new}. The {event} is now on",
)


# Two facts where the second replaces the first, whose answers are one token each: a flip
# then has one obvious rival (the superseded fact), where a day has six.
PEOPLE = ("Anna", "Tom", "Maria", "David")
CITIES = ("Paris", "Rome", "London", "Berlin", "Madrid", "Tokyo", "Boston")
MOVES = (
    "{who} lived in {old}. Then {who} moved to {new}. Now {who} lives in",
    "{who} used to live in {old}, but moved to {new}. Today {who} lives in",
)
COLOURS = ("red", "blue", "green", "black", "white", "yellow")
PAINTS = (
    "The car was {old}. {who} painted it {new}. Now the car is",
    "The door was {old}, until {who} painted it {new}. The door is now",
)


NAMES = ("Mary", "John", "Anna", "Tom", "Sarah", "David", "Lisa", "James")
GIVES = (
    "When {old} and {new} went to the store, {old} gave a drink to",
    "{old} and {new} had lunch together. {old} passed the salt to",
    "After {old} and {new} finished the game, {old} shook hands with",
)
# More of the same kind (--family names2): whom did the first name act towards?
GIVES2 = (
    "When {old} and {new} got home, {old} handed the keys to",
    "{old} and {new} met at the station. {old} waved to",
    "Yesterday {old} and {new} went to the park, and {old} threw the ball to",
)


def candidates(family: str = "days"):
    if family == "days":
        days = list(itertools.permutations(DAYS, 2))
        for template, event, (old, new) in itertools.product(TEMPLATES, EVENTS, days):
            yield template.format(event=event, old=old, new=new), f" {new}"
        return
    if family in ("names", "names2"):  # the other name is the answer (indirect object)
        templates = GIVES if family == "names" else GIVES2
        for template, (a, b) in itertools.product(templates, itertools.permutations(NAMES, 2)):
            yield template.format(old=a, new=b), f" {b}"
        return
    words, templates = (CITIES, MOVES) if family == "cities" else (COLOURS, PAINTS)
    pairs = list(itertools.permutations(words, 2))
    for template, who, (old, new) in itertools.product(templates, PEOPLE, pairs):
        yield template.format(who=who, old=old, new=new), f" {new}"


def ranked(run) -> list[tuple[str, float]]:
    """The run's next tokens, likeliest first."""
    return sorted(run.probs.items(), key=lambda kv: -kv[1])


def examine(text: str, right: str) -> dict | None:
    """The step's measurement on `text`, or None when the model is wrong to begin with."""
    lm = model_lessons.LM
    plain = model_runs.plain_run(lm, text, None, "numpy")
    if plain.answer != right:
        return None
    (_, p_right), (before_second, p_before_second) = ranked(plain)[:2]
    try:
        layer, head, record = model_lessons.quiet_head(lm, text)
    except ValueError:
        return None
    ablated = model_runs.edited_run(lm, text, None, "numpy", (trained.AblateHead(layer, head),))
    (first, p1), (second, p2) = ranked(ablated)[:2]
    return {
        "text": text,
        "right": right,
        "p_right": p_right,
        "before_second": before_second,
        "lead": p_right - p_before_second,
        "head": (layer, head),
        "estimate": record.estimate,
        "exact": record.exact,
        "new": first,
        "p_new": p1,
        "runner_up": second,
        "p_runner_up": p2,
        "margin": p1 - p2,
        "flips": first != right,
        # The step shows both: how clearly the answer was right, and how clearly it turned.
        "clear": min(p_right - p_before_second, p1 - p2),
    }


def line(r: dict) -> str:
    return (
        f"{r['text']!r}: P({r['right']!r}) {r['p_right']:.1%} (lead {r['lead']:.1%} over "
        f"{r['before_second']!r}); L{r['head'][0]} H{r['head'][1]} "
        f"estimate {r['estimate']:+.4f} exact {r['exact']:+.2f}; ablated: {r['new']!r} "
        f"{r['p_new']:.1%}, {r['runner_up']!r} {r['p_runner_up']:.1%} "
        f"(margin {r['margin']:.1%})"
    )


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--limit", type=int, default=None, help="candidates to try")
    parser.add_argument(
        "--texts",
        nargs="*",
        help="these sentences only, each SENTENCE|ANSWER (the right next word, without its space)",
    )
    parser.add_argument("--best", type=int, default=10, help="flips to list at the end")
    parser.add_argument(
        "--family",
        choices=("days", "cities", "colours", "names", "names2"),
        default="days",
        help="which sentences",
    )
    args = parser.parse_args(argv)
    trained.load(model_lessons.LM)
    found, tried, right_first, start = [], 0, 0, time.monotonic()
    pool = candidates(args.family)
    if args.texts:
        pool = (tuple(t.rsplit("|", 1)) for t in args.texts)
        pool = ((text, f" {answer}") for text, answer in pool)
    for text, right in itertools.islice(pool, args.limit):
        tried += 1
        r = examine(text, right)
        attribution_runs.clear()  # one sentence at a time: keep the caches small
        if r is None:
            continue
        right_first += 1
        if r["flips"]:
            found.append(r)
            print(line(r), flush=True)
    took = time.monotonic() - start
    print(
        f"\n{tried} sentences tried in {took:.0f} s, {right_first} answered right, "
        f"{len(found)} flip when the quiet head is removed. Best by the smaller of the lead "
        "before and the margin after:"
    )
    for r in sorted(found, key=lambda r: -r["clear"])[: args.best]:
        print("  " + line(r))
    return 0 if found else 1


if __name__ == "__main__":
    sys.exit(main())

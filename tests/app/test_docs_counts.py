"""The README's and the docs' step counts, in words or digits, are the lessons' own counts.

They said "twenty-two steps" for a while after the lab had 24: nothing held the text to the
lessons. Here every "N guided steps", the lessons page's per-kind counts ("eleven on hand-made
vectors, seven on ..., six on ... and one where the gradient lies") and every "(steps A to B)" of a part are read from the
text and compared with app/lessons/.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from app.lessons.lab_lessons import LESSONS
from app.lessons.lab_lessons import PARTS as LAB_PARTS
from app.lessons.model_lessons import COPY_PART, GRADIENT_PART, LM_PART, MODEL_LESSONS
from app.lessons.model_lessons import PART as BINDING_PART

ROOT = Path(__file__).resolve().parents[2]
STEPS = (*LESSONS, *MODEL_LESSONS)  # the order app/views/lesson_panel.py numbers them in
PARTS = (*LAB_PARTS, BINDING_PART, LM_PART, GRADIENT_PART, COPY_PART)

UNITS = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen"
).split()
TENS = {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50}
NUMBER = r"\b(\d+|(?:{tens})(?:-(?:{units}))?|{units})".format(
    tens="|".join(TENS), units="|".join(sorted(UNITS, key=len, reverse=True))
)


def number(word: str) -> int:
    """'24', 'twenty-four', 'Eleven' -> the integer; anything else is a ValueError."""
    word = word.lower()
    if word.isdigit():
        return int(word)
    if word in UNITS:
        return UNITS.index(word)
    tens, _, unit = word.partition("-")
    if tens in TENS and (not unit or unit in UNITS[1:10]):
        return TENS[tens] + (UNITS.index(unit) if unit else 0)
    raise ValueError(f"not a number: {word!r}")


def docs() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def test_number_reads_words_and_digits():
    assert [number(w) for w in ("24", "Twenty-four", "eleven", "six", "thirty")] == [
        24,
        24,
        11,
        6,
        30,
    ]
    with pytest.raises(ValueError):
        number("many")


def test_every_guided_step_count_is_the_number_of_steps():
    found = []
    for path in docs():
        for match in re.finditer(NUMBER + r"\s+guided\s+steps", path.read_text(), re.IGNORECASE):
            found.append((path.name, match.group(0)))
            assert number(match.group(1)) == len(STEPS), (path.name, match.group(0))
    names = {name for name, _ in found}
    assert {"README.md", "lessons.md"} <= names, found  # the claim is still made where it was


def test_the_lessons_page_counts_each_kind_of_step():
    text = " ".join((ROOT / "docs" / "lessons.md").read_text().split())
    match = re.search(
        NUMBER + r" on hand-made vectors, " + NUMBER + r" on the trained binding model, "
        r"" + NUMBER + r" on a real language model, " + NUMBER + r" where the gradient lies and "
        r"" + NUMBER + r" on heads that copy",
        text,
    )
    assert match, "docs/lessons.md no longer says how many steps each kind has"
    counts = [number(g) for g in match.groups()]
    binding = sum(s.part == BINDING_PART for s in MODEL_LESSONS)
    lm = sum(s.part == LM_PART for s in MODEL_LESSONS)
    gradient = sum(s.part == GRADIENT_PART for s in MODEL_LESSONS)
    copying = sum(s.part == COPY_PART for s in MODEL_LESSONS)
    assert counts == [len(LESSONS), binding, lm, gradient, copying]
    assert binding + lm + gradient + copying == len(MODEL_LESSONS)


def test_each_parts_step_range_is_where_its_steps_are():
    """'## Part 5: A trained head (steps 12 to 18)' and the like, wherever a part is named with
    its range: the range is the part's first and last step, counting from 1."""
    ranges = {}
    for part in PARTS:
        numbers = [i for i, s in enumerate(STEPS, start=1) if s.part == part]
        assert numbers == list(range(numbers[0], numbers[-1] + 1)), part  # parts are contiguous
        ranges[part.lower()] = (numbers[0], numbers[-1])
    seen = 0
    for path in docs():
        text = " ".join(path.read_text().split())
        for match in re.finditer(r"([A-Za-z ,']+?)\"? \(steps (\d+) to (\d+)\)", text):
            name = match.group(1).strip().strip('"').lower()
            part = next((p for p in ranges if name.endswith(p)), None)
            if part is None:
                continue
            seen += 1
            assert (int(match.group(2)), int(match.group(3))) == ranges[part], (
                path.name,
                match.group(0),
            )
    assert seen >= 4, "the step ranges of the parts are no longer found in the docs"

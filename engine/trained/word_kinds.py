"""Small curated word lists, one per kind (a name, a day, a month, a city, a country, a number,
a digit, a colour, an animal, a place where a thing is kept, a fruit), for changing one word of a
sentence into another of the same kind: the sentence stays grammatical, and each word written
after a space is one token in SmolLM2's tokenizer, so its length in tokens stays the same (a
test checks every word). At the start of a text, with no space before it, some words are two
tokens: the caller checks the length of what it builds.

The lists are disjoint, so a word has one kind; a word is matched with its case ("Paris" is a
city, "paris" nothing). "May" is left out of the months: at the start of a sentence it is a verb.

>>> kind_of(" Friday"), same_kind(" Friday")[:2]
('day', (' Monday', ' Tuesday'))
>>> kind_of("7"), kind_of(" the")
('digit', None)
"""

from __future__ import annotations

KINDS: dict[str, tuple[str, ...]] = {
    "name": (
        "Mary John Alice Bob Anna James Sarah David Emma Tom Lucy Peter Kate Paul Jane Mark "
        "Laura Mike Linda Jack Susan George Lisa Henry Emily Michael Anne Daniel Maria Robert"
    ).split(),
    "day": "Monday Tuesday Wednesday Thursday Friday Saturday Sunday".split(),
    "month": (
        "January February March April June July August September October November December"
    ).split(),
    "city": "Paris London Berlin Rome Madrid Tokyo Moscow Vienna Boston Chicago".split(),
    "country": "France Germany Italy Spain Japan China Russia India Canada Brazil Mexico".split(),
    "number": "one two three four five six seven eight nine ten".split(),
    "digit": list("0123456789"),  # SmolLM2 splits every digit off: "7000" is 7, 0, 0, 0
    "colour": "red blue green yellow black white brown orange purple grey".split(),
    "animal": "dog cat horse bird fish mouse lion pig".split(),
    "place": "drawer box bag basket closet car garden kitchen desk shelf pocket".split(),
    "fruit": "apples pears oranges bananas grapes lemons cherries peaches".split(),
}
KINDS = {kind: tuple(words) for kind, words in KINDS.items()}

_KIND_OF = {word: kind for kind, words in KINDS.items() for word in words}


def _split(token: str) -> tuple[str, str]:
    """(the spaces before the word, the word) of a token's text."""
    word = token.lstrip(" ")
    return token[: len(token) - len(word)], word


def kind_of(token: str) -> str | None:
    """The kind of a token's word (its text without the spaces before it), or None."""
    return _KIND_OF.get(_split(token)[1])


def same_kind(token: str) -> tuple[str, ...]:
    """The other words of the token's kind, each written as the token is (after the same
    spaces), in the list's order; () for a word of no listed kind."""
    space, word = _split(token)
    kind = _KIND_OF.get(word)
    if kind is None:
        return ()
    return tuple(space + other for other in KINDS[kind] if other != word)

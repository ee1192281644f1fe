"""Repeated random words: the text on which copying heads show themselves.

A seeded draw of words, each one token of the model with its leading space, laid out once and
then again in the same order. Nothing in the first copy predicts the next word; in the second,
every word has been seen, followed by the word that comes next, so a model that copies from its
context predicts it (the in-context copying that induction heads do). The words are common
concrete nouns, readable on a projector; which of them are single tokens depends on the model's
vocabulary, so the draw is from those of `WORDS` the model reads as one token.

The text opens with a short heading, `PREFIX`. A model run without a start-of-text token uses
its first token as the place a head looks when it has nowhere else to look; a word there would
be repeated at the start of the second copy, and SmolLM2's induction heads all but vanish
(docs/models.md has the figures).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

DEFAULT_COUNT = 16  # words per copy: enough positions to average over, short on a projector
MIN_COUNT, MAX_COUNT = 4, 40
SEED_MAX = 2**31 - 1
PREFIX = "Random words:"

WORDS = (
    "acorn",
    "almond",
    "anchor",
    "apricot",
    "avocado",
    "badger",
    "ballad",
    "bamboo",
    "banjo",
    "barley",
    "basalt",
    "beacon",
    "beetle",
    "biscuit",
    "blizzard",
    "blossom",
    "bonnet",
    "bramble",
    "bronze",
    "buckle",
    "buffalo",
    "bugle",
    "cabbage",
    "cactus",
    "camel",
    "candle",
    "canoe",
    "canyon",
    "caramel",
    "cargo",
    "carnival",
    "cashew",
    "castle",
    "cedar",
    "cello",
    "chalk",
    "cherry",
    "chestnut",
    "chimney",
    "cinnamon",
    "citrus",
    "clarinet",
    "clover",
    "cobalt",
    "cocoa",
    "coconut",
    "comet",
    "compass",
    "copper",
    "coral",
    "cotton",
    "cradle",
    "crayon",
    "cricket",
    "crystal",
    "cucumber",
    "cypress",
    "dagger",
    "daisy",
    "dandelion",
    "dolphin",
    "donkey",
    "dragon",
    "eagle",
    "ebony",
    "elbow",
    "ember",
    "emerald",
    "falafel",
    "falcon",
    "feather",
    "fennel",
    "ferry",
    "fiddle",
    "flamingo",
    "flannel",
    "flute",
    "fossil",
    "fountain",
    "galaxy",
    "garlic",
    "garnet",
    "gazelle",
    "gecko",
    "ginger",
    "glacier",
    "goblet",
    "gorilla",
    "granite",
    "grape",
    "gravel",
    "guitar",
    "hammock",
    "hamster",
    "harbor",
    "harmonica",
    "harp",
    "hazel",
    "hedgehog",
    "helmet",
    "heron",
    "hickory",
    "honey",
    "hornet",
    "iceberg",
    "igloo",
    "ivory",
    "jacket",
    "jaguar",
    "jasmine",
    "jelly",
    "jigsaw",
    "kettle",
    "kiwi",
    "koala",
    "ladder",
    "lagoon",
    "lantern",
    "lava",
    "lemon",
    "leopard",
    "lettuce",
    "lilac",
    "lizard",
    "llama",
    "lobster",
    "locket",
    "lotus",
    "magnet",
    "mango",
    "maple",
    "marble",
    "meadow",
    "meerkat",
    "melon",
    "meteor",
    "mint",
    "mitten",
    "molasses",
    "monsoon",
    "moose",
    "mosaic",
    "moss",
    "nectar",
    "needle",
    "nickel",
    "nutmeg",
    "oak",
    "oasis",
    "octopus",
    "olive",
    "onyx",
    "orchid",
    "ostrich",
    "otter",
    "owl",
    "oyster",
    "paddle",
    "pagoda",
    "pancake",
    "panther",
    "papaya",
    "parrot",
    "peach",
    "peacock",
    "pebble",
    "pelican",
    "penguin",
    "pepper",
    "pickle",
    "pigeon",
    "pillow",
    "pine",
    "pistachio",
    "platypus",
    "plum",
    "pony",
    "poppy",
    "porcupine",
    "pretzel",
    "pumpkin",
    "puzzle",
    "quartz",
    "quilt",
    "rabbit",
    "raccoon",
    "radish",
    "raven",
    "reef",
    "ribbon",
    "robin",
    "rocket",
    "saddle",
    "saffron",
    "salmon",
    "sapphire",
    "sardine",
    "satin",
    "scarf",
    "scooter",
    "seashell",
    "shovel",
    "silver",
    "skunk",
    "sled",
    "slipper",
    "snail",
    "sparrow",
    "spider",
    "spinach",
    "sponge",
    "squid",
    "squirrel",
    "stallion",
    "starfish",
    "straw",
    "sunflower",
    "swan",
    "tambourine",
    "tangerine",
    "teapot",
    "thimble",
    "thistle",
    "thunder",
    "tiger",
    "timber",
    "toffee",
    "tomato",
    "tortoise",
    "toucan",
    "tractor",
    "trombone",
    "trumpet",
    "tulip",
    "tundra",
    "turnip",
    "turtle",
    "umbrella",
    "vanilla",
    "velvet",
    "violin",
    "volcano",
    "waffle",
    "wagon",
    "walnut",
    "walrus",
    "whistle",
    "willow",
    "wizard",
    "yacht",
    "yarn",
    "zebra",
    "zinc",
    "zucchini",
)


@dataclass(frozen=True)
class RepeatedWords:
    """One draw: its seed, its words (one copy), and the text: `PREFIX`, then both copies.
    `prefix_tokens` is how many tokens the heading is for the model that drew it."""

    seed: int
    words: tuple[str, ...]
    prefix_tokens: int

    @property
    def text(self) -> str:
        return PREFIX + "".join(f" {w}" for w in self.words) * 2

    @property
    def first_copy(self) -> range:
        """The token positions of the first copy (one token a word)."""
        return range(self.prefix_tokens, self.prefix_tokens + len(self.words))

    @property
    def second_copy(self) -> range:
        n = len(self.words)
        return range(self.prefix_tokens + n, self.prefix_tokens + 2 * n)


def single_token_words(encode) -> tuple[str, ...]:
    """The words of `WORDS` that `encode` (a model's text -> ids) reads as one token each, with
    their leading space."""
    return tuple(w for w in WORDS if len(encode(" " + w)) == 1)


def draw(encode, seed: int, count: int = DEFAULT_COUNT) -> RepeatedWords:
    """`count` different words drawn with `seed` from those one token long for `encode`, or
    ValueError naming the limit broken."""
    if (
        isinstance(seed, bool)
        or not isinstance(seed, int | np.integer)
        or not 0 <= seed <= SEED_MAX
    ):
        raise ValueError(f"the seed must be a whole number from 0 to {SEED_MAX}, not {seed!r}")
    if not MIN_COUNT <= count <= MAX_COUNT:
        raise ValueError(f"the number of words must be {MIN_COUNT} to {MAX_COUNT}, not {count}")
    pool = single_token_words(encode)
    if len(pool) < count:
        raise ValueError(
            f"only {len(pool)} of the lab's words are one token for this model; {count} asked for"
        )
    picked = np.random.default_rng(int(seed)).choice(len(pool), size=count, replace=False)
    return RepeatedWords(int(seed), tuple(pool[i] for i in picked), len(encode(PREFIX)))

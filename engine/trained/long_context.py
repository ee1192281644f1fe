"""Long-context tests as ready-made texts: one fact, 400-odd tokens of unrelated prose, then the
question, and four ways to disturb it (a distractor fact, the fact said twice, the fact
superseded, and loud irrelevant tokens).

`measure(model)` runs each text and reads the route and the answer: the head that carries the
fact in the undisturbed text (the most weight from the question on the fact's token), its weight
on the fact and on the disturbing token, and the probabilities of the two answers.

>>> from engine import trained
>>> from engine.trained import long_context
>>> [c.name for c in long_context.measure(trained.load("smollm2-135m"))][:2]
['plain', 'distractor']
"""

from __future__ import annotations

from dataclasses import dataclass

from ..heads import find_heads

FACT = "The key is in the drawer. "
QUESTION = "The key is in the"
ANSWER, OTHER = " drawer", " box"
# Unrelated prose, the same every time (a test text must not change between runs).
FILLER = (
    "The garden behind the old library has a row of oak trees. In spring the paths are lined "
    "with tulips. A small fountain stands near the gate, and children often sit on its edge. "
    "The gardener waters the beds every morning. On weekends a market fills the square with "
    "bread, cheese and fruit. Musicians play near the bakery until noon. "
)
HALF = 3  # filler paragraphs before and after the disturbance (about 430 tokens in all)

DISTURBANCES: dict[str, tuple[str, str]] = {
    "plain": ("The fact, far back", ""),
    "distractor": ("An inserted distractor", "The coin is in the box. "),
    "duplicated": ("The fact said twice", FACT),
    "superseded": ("A superseded fact", "Later the key was moved to the box. "),
    "loud": ("Loud irrelevant tokens", "BOX!!! BOX!!! BOX!!! "),
}


def text(name: str) -> str:
    """The long text for one disturbance."""
    if name not in DISTURBANCES:
        raise ValueError(f"unknown long-context test {name!r}; one of {', '.join(DISTURBANCES)}")
    return FACT + FILLER * HALF + DISTURBANCES[name][1] + FILLER * HALF + QUESTION


def examples() -> dict[str, str]:
    """Ready-made texts for the page's list, titled."""
    return {f"Long text: {title.lower()}": text(name) for name, (title, _) in DISTURBANCES.items()}


@dataclass(frozen=True)
class LongContextCase:
    name: str
    title: str
    tokens: int
    answer: str  # the model's likeliest next token
    p_answer: float  # P(" drawer"), the fact's answer
    p_other: float  # P(" box"), the disturbance's
    head: tuple[int, int]  # the head that reads the fact in the plain text
    weight_on_fact: float  # that head's weight on every " drawer" from the question
    weight_on_disturbance: float  # ... on the inserted sentence's tokens (0: none inserted)


def measure(model) -> list[LongContextCase]:
    """Each disturbance's effect on the route and the answer (see the module docstring)."""
    plain = model.run(text("plain"))
    fact_at = plain.tokens.index(ANSWER)
    layer, head, _ = find_heads(
        plain, model.n_layers, model.n_heads, criterion="on_token", position=fact_at, top=1
    )[0]
    # A sentence's leading space belongs to its first token (" The"): split before it.
    start = len(model.encode((FACT + FILLER * HALF).rstrip()))
    out = []
    for name, (title, inserted) in DISTURBANCES.items():
        run = plain if name == "plain" else model.run(text(name))
        weights = run.head(layer, head).weights
        span = model.encode(" " + inserted.strip()) if inserted else []
        if list(run.ids[start : start + len(span)]) != span:
            raise ValueError(f"{name}: the inserted sentence did not tokenize on its own")
        facts = [i for i, t in enumerate(run.tokens) if t == ANSWER]
        out.append(
            LongContextCase(
                name=name,
                title=title,
                tokens=len(run.ids),
                answer=run.answer,
                p_answer=run.prob(ANSWER),
                p_other=run.prob(OTHER),
                head=(layer, head),
                weight_on_fact=float(weights[facts].sum()),
                weight_on_disturbance=float(weights[start : start + len(span)].sum()),
            )
        )
    return out

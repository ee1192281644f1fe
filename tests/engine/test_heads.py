"""A head as a snapshot: the planes keep what they promise, whatever the head's numbers."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import attention
from engine.head_names import HEAD_TAG_KEY, head_name, head_tag
from engine.heads import head_snapshot, plane, shown_tokens, token_labels, token_marks
from engine.snapshot import LabSnapshot


@dataclass
class Record:
    q: np.ndarray
    k: np.ndarray
    v: np.ndarray
    scores: np.ndarray
    logits: np.ndarray
    weights: np.ndarray
    output: np.ndarray
    legal: np.ndarray
    scale_factor: float
    temperature: float


@dataclass
class Run:
    tokens: tuple
    record: Record
    answer: str = "3"
    expected: str = "3"

    @property
    def probs(self):
        return {"3": 0.9, "5": 0.1}

    def head(self, layer, head):
        return self.record

    def intervene(self, *edits):
        return self


def make_run(seed: int, n: int, d: int, temperature: float = 1.0, masked: int | None = None):
    rng = np.random.default_rng(seed)
    q, k, v = rng.normal(size=d), rng.normal(size=(n, d)), rng.normal(size=(n, d))
    legal = np.ones(n, dtype=bool)
    if masked is not None:
        legal[masked] = False
    res = attention(q, k, v, mask=legal, temperature=temperature)
    rec = Record(
        q, k, v, res.scores, res.logits, res.weights, res.output, legal, 1 / np.sqrt(d), temperature
    )
    return Run(tuple(f"t{i}" for i in range(n)), rec)


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    n=st.integers(2, 24),
    d=st.integers(2, 64),
    temperature=st.floats(0.1, 5.0),
)
def test_planes_keep_every_score_and_the_output(seed, n, d, temperature):
    run = make_run(seed, n, d, temperature)
    snap = head_snapshot(run, 0, 0)
    assert isinstance(snap, LabSnapshot)
    rec = run.record
    # Address plane: the drawn query and keys give the true scores.
    np.testing.assert_allclose(snap.keys @ snap.query, rec.scores, atol=1e-9, rtol=1e-9)
    assert snap.query[1] == pytest.approx(0.0, abs=1e-12)
    top = int(np.argmax(rec.weights))
    assert np.linalg.norm(snap.keys[top]) == pytest.approx(np.linalg.norm(rec.k[top]))
    # Payload plane: drawn contributions add up to the drawn output, whose length is true.
    np.testing.assert_allclose(snap.contributions.sum(axis=0), snap.output, atol=1e-9)
    assert np.linalg.norm(snap.output) == pytest.approx(np.linalg.norm(rec.output))
    np.testing.assert_allclose(
        snap.contribution_norms, np.linalg.norm(rec.weights[:, None] * rec.v, axis=-1)
    )
    assert snap.weights.sum() == pytest.approx(1.0)
    w = rec.weights[rec.weights > 0]
    assert snap.entropy == pytest.approx(float(-(w * np.log(w)).sum()), abs=1e-9)
    assert snap.effective_keys == pytest.approx(np.exp(snap.entropy))
    assert not snap.weights.flags.writeable


def test_masked_position_and_labels():
    run = make_run(1, 6, 8, masked=2)
    snap = head_snapshot(run, 0, 0)
    assert snap.weights[2] == 0.0
    assert not snap.legal[2]
    assert snap.labels == token_labels(run.tokens) == tuple(f"t{i} @{i}" for i in range(6))
    assert len(set(snap.labels)) == 6
    assert "the model answers 3 (90%)" in snap.summary


def test_plane_when_every_row_lies_along_the_first_axis():
    first = np.array([1.0, 0.0, 0.0])
    rest = np.array([[2.0, 0.0, 0.0], [-1.0, 0.0, 0.0]])
    e1, e2 = plane(first, rest, 0)
    assert e1 @ e2 == pytest.approx(0.0)
    assert np.linalg.norm(e2) == pytest.approx(1.0)


def test_head_finder_ranks_the_real_model_heads():
    from engine import trained
    from engine.heads import find_heads

    model = trained.load("binding")
    run = model.run("a=5; b=7; a=3; ?a")
    answer = run.tokens.index("3")
    found = find_heads(run, model.n_layers, model.n_heads, criterion="on_token", position=answer)
    assert (found[0][0], found[0][1]) == model.retrieval_head
    assert [f[2] for f in found] == sorted((f[2] for f in found), reverse=True)
    sharp = find_heads(run, model.n_layers, model.n_heads, criterion="sharpest", top=4)
    assert [f[2] for f in sharp] == sorted(f[2] for f in sharp) and len(sharp) == 4
    undefined = model.run("rate=12; x=4; y=9; ?charge")
    sinks = find_heads(undefined, model.n_layers, model.n_heads, criterion="sink", top=1)
    assert sinks[0][2] == pytest.approx(undefined.attention(sinks[0][0], sinks[0][1])[0])
    with pytest.raises(ValueError, match="position"):
        find_heads(run, 2, 2, criterion="on_token", position=99)
    with pytest.raises(ValueError, match="criterion"):
        find_heads(run, 2, 2, criterion="loudest")


def test_an_ablated_head_says_so_and_draws_its_route_in_the_plane_it_had():
    """Issue 18: the snapshot of an ablated head carries the fact, its summary says it, and the
    contributions it no longer passes on lie where the plain head's did; the output is zero."""
    from engine import trained

    model = trained.load("binding")
    layer, head = model.retrieval_head
    run = model.run("a=5; b=7; a=3; ?a")
    plain = head_snapshot(run, layer, head)
    ablated = head_snapshot(run.intervene(trained.AblateHead(layer, head)), layer, head)
    assert not plain.ablated and "ablated" not in plain.summary
    assert ablated.ablated and "ablated: this head's output is zeroed" in ablated.summary
    np.testing.assert_allclose(ablated.output, [0.0, 0.0])
    np.testing.assert_allclose(ablated.contributions, plain.contributions, atol=1e-9)
    other = head_snapshot(run.intervene(trained.AblateHead(0, 0)), layer, head)
    assert not other.ablated  # another head's ablation is not this one's


def test_the_hand_made_scenarios_never_say_ablated():
    from app.state.lab_state import LabState

    snap = LabState().snapshot
    assert snap.ablated is False and "ablated" not in snap.summary


def test_a_character_split_over_byte_tokens_is_shown_whole():
    """Issue 40: the bytes of one character spread over tokens read as that character where it
    begins and as its continuation after; stray bytes stay as the tokenizer wrote them."""
    tokens = ["<0xE3><0x82>", "<0xA2>", " caf<0xC3>", "<0xA9>s", " <0xF0>"]
    assert shown_tokens(tokens) == ["ア", "↳ア", "␣café", "↳és", "␣<0xF0>"]
    assert token_labels(["a", " b"]) == ("a @0", "␣b @1")
    assert shown_tokens(["<0x41>"]) == ["A"]


def test_token_marks_explain_only_the_marks_in_use():
    assert token_marks(["a", "b"]) == ""
    said = token_marks(shown_tokens([" x", "<0xE3><0x82>", "<0xA2>"]))
    assert said.startswith("␣ = a space") and "; ↳ア = rest of ア (its bytes split)" in said
    assert "⏎" not in said and "<0x" not in said
    assert "cut-off" in token_marks(["<0xE3>"])
    assert token_marks(["␣a", "b⏎"], sep="\n").count("\n") == 1
    assert token_marks(["␣extraordin… @52"]).count("=") == 1  # a cut label is not a split one


def test_a_head_has_one_name_in_words_and_one_short_tag():
    assert head_name(13, 8) == "layer 13 head 8"
    assert head_tag(13, 8) == "L13 H8" and HEAD_TAG_KEY.startswith(head_tag(13, 8))

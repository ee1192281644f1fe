"""The receipt in words a student can read aloud (issue 40): what the order and the top-k mean,
"among the heads checked" said as such, a head never checked said so, log P explained, one
colour scale for estimates and real changes, heads named in words."""

from __future__ import annotations

import math
from types import SimpleNamespace

import pytest

from app.state.estimate_words import LOG_P_WORDS, order_words, probability_factor
from app.views import receipt_view
from engine.trained.attribution import AttributionMap, HeadAttribution

# Six heads of two layers: the estimate calls layer 1 head 2 tiny, removing it costs -2.8.
ESTIMATES = {(0, 0): 0.20, (0, 1): -0.15, (0, 2): 0.01, (1, 0): -0.10, (1, 1): 0.05, (1, 2): 0.002}
EXACT = {(0, 0): 0.30, (0, 1): -0.20, (0, 2): 0.0, (1, 0): -0.05, (1, 1): 0.04, (1, 2): -2.8}


def amap(checked=()):
    records = tuple(
        HeadAttribution(
            layer, head, est, EXACT[(layer, head)] if (layer, head) in checked else None, None
        )
        for (layer, head), est in ESTIMATES.items()
    )
    return AttributionMap("a b", None, " c", None, 0.4, records)


def whole():
    recs = [SimpleNamespace(layer=lay, head=h, effect=e) for (lay, h), e in EXACT.items()]
    return SimpleNamespace(text="a b", answer=" c", records=recs)


@pytest.mark.parametrize(
    ("rho", "words"),
    [(0.95, "almost the same order"), (0.6, "much the same order"), (0.3, "only loosely"),
     (0.0, "no clear order"), (-0.7, "roughly the reverse order")],
)  # fmt: skip
def test_the_order_in_words_with_its_number(rho, words):
    said = order_words(rho)
    assert said.startswith(words) and f"rank correlation {rho:.2f}" in said
    assert "cannot be compared" in order_words(math.nan)


def test_a_change_of_log_p_as_what_it_does_to_the_probability():
    assert probability_factor(-math.log(2)) == "× 0.50"
    assert probability_factor(-2.8) == "× 0.06"
    assert probability_factor(math.log(200)) == "× 200"
    assert "halves" in LOG_P_WORDS and "tenth" in LOG_P_WORDS


def test_the_receipt_says_among_the_heads_checked_in_plain_words():
    said = receipt_view.receipt_words(amap(checked=[(0, 0), (0, 1), (1, 0), (1, 1)]))
    assert said.startswith("<b>4 heads checked</b> by really removing each one.")
    assert "Of these 4, the 2 the estimate ranks largest include <b>2 of the 2</b>" in said
    assert "almost the same order (rank correlation 1.00: 1 is the same order" in said
    assert "top 10 of 20" not in said and "L0 H0" not in said


def test_a_head_never_checked_says_so_and_one_queued_says_soon():
    m = amap(checked=[(0, 0), (0, 1)])
    said = dict(zip(ESTIMATES, receipt_view.checked_words(m, planned=4), strict=True))
    assert said[(0, 0)] == "+0.30, P × 1.35"
    assert said[(1, 0)] == "soon (top 4)"  # the 4th largest estimate: queued
    assert said[(1, 2)] == "no (top 4 only)"
    assert "not yet" not in said.values()
    # Short enough that the tooltip fits beside a cell on a phone (it flipped left, cut off).
    assert max(len(words) for words in said.values()) <= 26
    # Once Measure every head has run on the same sentence, every head has its real change.
    known = dict(zip(ESTIMATES, receipt_view.checked_words(m, 4, whole()), strict=True))
    assert known[(1, 2)] == "-2.80, P × 0.06 (full map)"


def test_the_colour_scale_spans_the_real_changes_too():
    assert receipt_view.colour_span(amap()) == pytest.approx(0.2)  # estimates alone
    assert receipt_view.colour_span(amap(checked=[(1, 2)])) == pytest.approx(2.8)
    assert receipt_view.colour_span(amap(), whole()) == pytest.approx(2.8)
    other = SimpleNamespace(text="x", answer=" c", records=whole().records)
    assert receipt_view.colour_span(amap(), other) == pytest.approx(0.2)  # another sentence


def test_against_every_head_the_missed_head_is_named_in_words(monkeypatch):
    monkeypatch.setattr(receipt_view, "TOP", 2)  # a top 2 of 6, as the page's top 10 of 270
    said = receipt_view.whole_words(amap(), whole())
    assert "It missed layer 1 head 2 (estimated +0.002, really -2.80" in said
    assert "the answer's probability × 0.06" in said and "L1 H2" not in said
